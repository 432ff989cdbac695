"""The agent eval harness: one role, against its configured model, on a set of targets.

`envfactory agents eval --role R --seeds DIR --k N` runs role R k times per target and
records, per attempt, success or one `FailureCause`, with turns, tool calls, tokens and
wall time (`EvalRun`, stored by `envfactory.store`). Targets are seeds (research, and the
verifier writer on the environment research makes of each seed) or stored environments
(judge, red team, verifier writer).

Layering: a stage beside packs and suites — it composes the agents, the verifiers (gates,
runner), the seeds and a sandbox engine; the model factory and the stores are injected
by the process edge (`workflows.composition.eval_harness`).
"""

from .harness import EvalHarness, ModelFactory
from .outcome import classify
from .table import render_table
from .targets import Target, seed_targets, stored_targets

__all__ = [
    "EvalHarness",
    "ModelFactory",
    "Target",
    "classify",
    "render_table",
    "seed_targets",
    "stored_targets",
]
