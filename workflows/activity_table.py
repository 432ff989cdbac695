"""The activity table: every activity the workflows run, declared once.

An entry says everything about one activity: its name (the activity type in Temporal
history — never rename one that a running workflow may still schedule), the
`PipelineServices` method that does the work, its input and output models, and the task
queue it runs on. The rest derives from the table:

- `PipelineActivities` (activities.py) builds one Temporal activity per entry;
- workflows call `self.act(acts.RUN_GATES, GatesInput(...))` (steps.py): the result type,
  the queue and its timeout come from the entry, so a call cannot name the wrong one;
- the worker registers each queue's share (`on_queue`), so queue routing and
  registration cannot disagree;
- services (real or fake) implement `PipelineServices`; tests/workflows/
  test_activity_table.py checks that the table, the protocol and the registered
  activities agree.

Pure data over types.py: workflow code imports it inside the deterministic sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from . import types as t
from .types import Queue

In = TypeVar("In")
Out = TypeVar("Out")


@dataclass(frozen=True)
class ActivityDef(Generic[In, Out]):
    """One activity: `name` runs `PipelineServices.<method>(input) -> output` on `queue`."""

    name: str
    method: str
    input: type[In]
    output: type[Out]
    queue: Queue


_A, _S = Queue.AGENTS, Queue.SANDBOX

RESEARCH = ActivityDef("research", "research", t.ResearchInput, t.SpecRef, _A)
BUILD = ActivityDef("build_environment", "build", t.EnvInput, t.BuiltEnv, _S)
RUN_AGENT = ActivityDef("run_agent", "run_agent", t.AgentInput, t.TrajectoryRef, _A)
SYNTHESIZE_VERIFIER = ActivityDef(
    "synthesize_verifier", "synthesize_verifier", t.VerifierInput, t.VerifierRef, _A
)
RUN_GATES = ActivityDef("run_gates", "run_gates", t.GatesInput, t.GateOutcome, _S)
SCORE = ActivityDef("score_trajectories", "score", t.ScoreInput, t.ScoreOutcome, _S)
MINE = ActivityDef("mine_shortcuts", "mine", t.MineInput, t.MineOutcome, _S)
ANALYZE = ActivityDef("analyze_shortcuts", "analyze", t.AnalyzeInput, t.AnalyzeOutcome, _A)
FLAG_TOO_EASY = ActivityDef("flag_too_easy", "flag_too_easy", t.FlagInput, t.Flagged, _S)
RECORD_DECISION = ActivityDef(
    "record_decision", "record_decision", t.DecisionInput, t.DecisionRecorded, _S
)
REVIEW_STATE = ActivityDef(
    "review_state", "review_state", t.ReviewStateInput, t.ReviewStateOutcome, _S
)
SET_STATUS = ActivityDef("set_env_status", "set_status", t.StatusInput, type(None), _S)
PUBLISH = ActivityDef("publish_environment", "publish", t.PublishInput, t.Published, _S)
TAKE_REPOSITORY = ActivityDef("take_repository", "take_repository", t.TakeRepoInput, t.RepoPlan, _S)
MINE_CANDIDATE = ActivityDef(
    "mine_candidate", "mine_candidate", t.CandidateInput, t.CandidateResult, _S
)
CONCLUDE_CANDIDATE = ActivityDef(
    "conclude_candidate", "conclude_candidate", t.ConcludeInput, t.CandidateResult, _S
)
STORE_YIELD = ActivityDef("store_yield", "store_yield", t.YieldInput, t.YieldRef, _S)

#: every activity, in pipeline order
ACTIVITIES: tuple[ActivityDef[Any, Any], ...] = (
    RESEARCH,
    BUILD,
    RUN_AGENT,
    SYNTHESIZE_VERIFIER,
    RUN_GATES,
    SCORE,
    MINE,
    ANALYZE,
    FLAG_TOO_EASY,
    RECORD_DECISION,
    REVIEW_STATE,
    SET_STATUS,
    PUBLISH,
    TAKE_REPOSITORY,
    MINE_CANDIDATE,
    CONCLUDE_CANDIDATE,
    STORE_YIELD,
)


def on_queue(queue: Queue) -> tuple[ActivityDef[Any, Any], ...]:
    """The activities a worker on `queue` registers."""
    return tuple(a for a in ACTIVITIES if a.queue == queue)
