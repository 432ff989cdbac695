"""Which runtime a task is gated under, when its tests work in only one, and whose fault
it is when they work in none.

A task declared for both envfactory's runtime and Harbor's whose reference state fails
the tests in envfactory's and passes them in Harbor's is gated under Harbor's alone
(`harbor_only`): decided by running the tests, never by what their text mentions. A
reference state the tests reject in every runtime tried, made by steps inside which a
command failed, is the reference's failure, not the verifier's (`reference_failed`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from envfactory.core.models import (
    CheckKind,
    GateCheck,
    GateReport,
    Semantics,
    StateKind,
    StepFailure,
    TaskVerdict,
)

from .inputs import GateInput
from .report import GateRun


def harbor_only(
    inp: GateInput, run: GateRun, schedule: Callable[[GateInput], GateRun]
) -> GateRun | None:
    """The task gated again under Harbor's runtime alone, when the evidence says that is
    the only runtime its tests work in: declared for both runtimes, the reference solution's
    state fails them in envfactory's (a fresh container, no process kept; in workspace scope
    only the workspace) and passes in Harbor's (the solver's own container, its processes
    kept) — tests that query a service the solver started, or read what the workspace
    leaves out. Rejected in both, `run` stands, made `reference-failed` where the
    reference's own commands failed (`reference_failed`). None otherwise (the first run
    stands, or was not a candidate). Decided by running the tests, never
    by what their text mentions (a test naming ``127.0.0.1:9090`` as data must not trade
    envfactory's battery for Harbor's smaller one)."""
    semantics = inp.spec.semantics
    if semantics[:1] != ("envfactory",) or "harbor" not in semantics:
        return None
    if not _oracle_failed(run.report, "envfactory"):
        return None
    harbor = replace(inp, spec=inp.spec.model_copy(update={"semantics": ("harbor",)}))
    again = schedule(harbor)
    if _oracle_failed(again.report, "harbor"):  # the reference fails in both runtimes
        return reference_failed(run, again) or run
    if not _oracle_row(again.report, "harbor"):
        return None  # the first verdict stands
    why = run.report.reasons[0] if run.report.reasons else "its oracle row failed"
    note = (
        "gated under harbor semantics only: the reference solution's state fails the tests "
        f"in envfactory's runtime ({why}) and passes in Harbor's (the solver's own "
        "container, its processes kept)"
    )
    again.report = again.report.model_copy(
        update={"notes": tuple(sorted({*again.report.notes, note}))}
    )
    again.wall_s += run.wall_s
    return again


def _oracle_row(report: GateReport, semantics: Semantics) -> GateCheck | None:
    return next(
        (c for c in report.checks if c.kind == CheckKind.ORACLE and c.semantics == semantics),
        None,
    )


def _oracle_failed(report: GateReport, semantics: Semantics) -> bool:
    """The tests rejected the reference solution's own state under `semantics` — a
    rejection, or a verifier that looked unrunnable (its output named a network it could
    not reach: stock Terminal-Bench test.sh tries to install its tools before failing for
    want of the solver's server). Not a failed reference step: that has no oracle row."""
    row = _oracle_row(report, semantics)
    return (
        report.outcome in (TaskVerdict.REJECTED, TaskVerdict.VERIFIER_UNRUNNABLE)
        and row is not None
        and any(r != row.expected for r in row.observed)
    )


def reference_failed(run: GateRun, *others: GateRun) -> GateRun | None:
    """`run` (the verdict that stands) made `reference-failed` when the reference solution
    failed in every runtime tried (`run` and `others`): each rejected its oracle state,
    and a command inside a reference step failed (`verifiers.step_errors`) — a pinned
    library that lacks a name the solution imports, an install refused. The first such
    command, with its step's output, is the failure; the oracle rows stay as evidence.
    None otherwise: a reference that ran through cleanly and was rejected is the
    verifier's to answer for."""
    runs = (run, *others)
    if not all(_every_oracle_failed(r.report) for r in runs):
        return None
    failure = next((f for r in reversed(runs) for f in _oracle_errors(r)), None)
    if failure is None:
        return None
    note = (
        "reference-failed: the tests rejected the reference solution's state in every "
        f"runtime tried, and `{failure.command}` failed inside its step {failure.step}"
    )
    report = run.report.model_copy(
        update={"reference_failure": failure, "notes": tuple(sorted({*run.report.notes, note}))}
    )
    return replace(run, report=report, wall_s=sum(r.wall_s for r in runs))


def _every_oracle_failed(report: GateReport) -> bool:
    rows = [c for c in report.checks if c.kind == CheckKind.ORACLE and c.observed]
    return (
        report.outcome == TaskVerdict.REJECTED
        and bool(rows)
        and all(any(r != c.expected for r in c.observed) for c in rows)
    )


def _oracle_errors(run: GateRun) -> tuple[StepFailure, ...]:
    st = next((s for s in run.states.values() if s.kind == StateKind.ORACLE), None)
    return st.errors if st is not None else ()
