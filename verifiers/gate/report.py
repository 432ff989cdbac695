"""The gate report, built from the rows a run created and what they observed.

A row with no results was skipped (listed with why); a probe row whose base state the
verifier already accepts fails because its base does (`derived_from` names the base, and
the report's reasons fold it under that cause). `unrunnable_signs` reads, from the
verifier's output on a state it should accept, what it lacked to run at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from envfactory.core.models import (
    CheckKind,
    EnvironmentSpec,
    GateCheck,
    GateReport,
    Semantics,
    SkippedCheck,
    StepFailure,
    Verifier,
)
from envfactory.core.models.rows import RowId

from ..evidence import check_evidence, state_changes
from ..probes.applicability import (
    ReadLog,
    config_only,
    never_read,
    not_applicable,
    unread_config,
)
from ..probes.workspace import changed_paths, file_bytes, is_output
from ..runner import PreparedState, VerifyResult
from ..states import ProducedState
from .plan import report_order
from .table import Row, RowTable


@dataclass
class CheckTiming:
    """What one check cost (for the throughput benchmark)."""

    name: str
    produce_s: float
    verify_s: list[float] = field(default_factory=list)  # each repeat, container to reward
    command_s: list[float] = field(default_factory=list)  # each repeat, the entry command
    shared_with: str | None = None  # verified once with an identical state


@dataclass
class GateRun:
    report: GateReport
    timings: list[CheckTiming]
    states: dict[str, ProducedState]
    results: dict[str, list[VerifyResult]]
    wall_s: float = 0.0
    #: what each row actually verified (layer image swapped in, harbor replay), by row name:
    #: the mutation score re-verifies exactly these (verifiers.mutation)
    prepared: dict[str, PreparedState] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """What the run learnt besides its rows."""

    notes: tuple[str, ...]
    skipped: tuple[SkippedCheck, ...]
    reference_failure: StepFailure | None
    unrunnable: tuple[str, ...]


def build_run(
    spec: EnvironmentSpec,
    verifier: Verifier,
    *,
    table: RowTable,
    primary: Semantics,
    outcome: Outcome,
    skip_reason: Callable[[Row], str],
    not_applicable: Callable[[Row], str | None] = lambda _: None,
    finding: Callable[[Row], str | None] = lambda _: None,
    repeats: int,
    provided: tuple[str, ...],
    wall_s: float,
) -> GateRun:
    rows, timings, skipped = [], [], list(outcome.skipped)
    failed_bases = _failed_bases(table)
    by_name = {r.name: r.state for r in table.rows}
    for r in sorted(table.rows, key=lambda r: report_order(r.id, r.kind)):
        res = table.results_of(r)
        if not res:
            skipped.append(SkippedCheck(name=r.name, why=skip_reason(r)))
            continue
        base = by_name.get(str(r.id.base)) if r.probe is not None else None
        changes = _changes(base, r.state) if base is not None else []
        check = _check(r, res, primary, table.twin_of(r), failed_bases, changes)
        update = {
            "not_applicable": not_applicable(r),
            "finding": None if check.passed else finding(r),
        }
        rows.append(check.model_copy(update=update))
        timings.append(
            CheckTiming(
                r.name,
                r.state.produce_s,
                [x.duration_s for x in res],
                [x.command_s for x in res],
                table.twin_of(r),
            )
        )
    report = GateReport(
        env_id=spec.id,
        verifier_version=verifier.version,
        checks=tuple(rows),
        repeats=repeats,
        notes=tuple(sorted({*outcome.notes, *_graded_note(table)})),
        reference_failure=outcome.reference_failure,
        unrunnable=outcome.unrunnable,
        provided=provided,
        skipped=tuple(skipped),
        semantics=spec.semantics or ("envfactory",),
    )
    states = {r.name: r.state for r in table.rows}
    prepared = {r.name: r.prepared for r in table.rows}
    return GateRun(report, timings, states, table.results, wall_s, prepared)


def _graded_note(table: RowTable) -> tuple[str, ...]:
    """One note naming each row whose reward file held a graded value (neither 0 nor 1),
    with what it said: the task pays fractions, and every reward here is still 1 only
    for exactly 1 (`verifiers.reward_file`)."""
    said = [
        f"{r.name} {v:g}"
        for r in table.rows
        for v in dict.fromkeys(x.value for x in table.results_of(r))
        if v is not None and v not in (0.0, 1.0)
    ]
    if not said:
        return ()
    more = ", …" if len(said) > 12 else ""
    return (
        f"graded: the reward file holds fractions ({', '.join(said[:12])}{more}); "
        "each counts as reward 1 only when exactly 1",
    )


def premise_held(row: Row, result: VerifyResult) -> bool:
    """Whether `result` shows the premise of `row`'s probe held (always, for a row whose
    probe checks none at run time)."""
    probe = row.probe
    return probe is None or not probe.premise_file or bool(result.premise)


def row_not_applicable(
    row: Row,
    reads: ReadLog | None,
    results: Sequence[VerifyResult] = (),
    oracle: ProducedState | None = None,
    named: Sequence[str] = (),
) -> str | None:
    """Why a row cannot judge the verifier: a probe's premise never held in any of its
    verifications (`Probe.premise_file`); on the oracle, its traced run never read what
    the probe changed (`probes.applicability`) and that is no finding (`row_finding`);
    an unsolved state that differs from the `oracle` only in configuration files the
    instruction does not name (`named`) and the traced run never read
    (`config_only_change`). None for every other row."""
    if row.probe is not None and results and not any(premise_held(row, r) for r in results):
        return f"its premise did not hold: {row.probe.premise_unmet}"
    if row.kind == CheckKind.UNSOLVED:
        config = config_only_change(row, oracle, named, reads)
        if not config:
            return None
        return (
            "it differs from the reference's state only in configuration files the "
            f"verifier never read ({', '.join(config[:3])}): they are ungraded"
        )
    if not _on_oracle_probe(row) or row_finding(row, reads) is not None:
        return None
    assert row.probe is not None
    return not_applicable(row.probe.touched, reads)


def config_only_change(
    row: Row, oracle: ProducedState | None, named: Sequence[str], reads: ReadLog | None
) -> list[str]:
    """The files an unsolved row's state changed from the oracle's when they are all
    configuration the traced verification never read (`probes.applicability.unread_config`,
    by-products such as bytecode aside when it never read those either); else []."""
    if reads is None:
        return []
    graded, by_products = _changes_from(row, oracle)
    if any(reads.first_use(p) == "read" for p in by_products):
        return []
    return unread_config(graded, named, reads)


def may_be_config_only(row: Row, oracle: ProducedState | None, named: Sequence[str]) -> bool:
    """Whether an unsolved row's state differs from the oracle's only in configuration
    files the instruction does not name: the trace may then make it not applicable."""
    return config_only(_changes_from(row, oracle)[0], named)


def _changes_from(row: Row, oracle: ProducedState | None) -> tuple[list[str], list[str]]:
    """(outputs, by-products) an unsolved row's state changed from the oracle's; nothing
    where either has no workspace kept, or the row is another runtime's."""
    if row.kind != CheckKind.UNSOLVED or row.probe is not None or row.id.semantics is not None:
        return [], []
    before, after = (oracle.workspace if oracle else ()), row.state.workspace
    if not before or not after:
        return [], []
    changed = changed_paths(before, after)
    return [p for p in changed if is_output(p)], [p for p in changed if not is_output(p)]


def row_finding(row: Row, reads: ReadLog | None) -> str | None:
    """The finding a probe row on the oracle states when the traced run never read what
    it changed and that is part of what the task asks for (`Probe.unread_finding`): the
    verifier never runs the program the instruction names."""
    if not _on_oracle_probe(row) or row.probe is None or row.probe.unread_finding is None:
        return None
    return row.probe.unread_finding if never_read(row.probe.touched, reads) else None


def _on_oracle_probe(row: Row) -> bool:
    on_oracle = row.id.base == RowId.oracle() and row.id.semantics is None
    return (
        row.probe is not None and on_oracle and row.kind in (CheckKind.PROBE, CheckKind.TOLERANCE)
    )


def _failed_bases(table: RowTable) -> set[str]:
    """Unsolved states the verifier already accepts (their probes' failures derive)."""
    return {
        r.name
        for r in table.rows
        if r.kind in (CheckKind.UNSOLVED, CheckKind.NOOP)
        and any(x.reward != r.expected for x in table.results_of(r))
    }


def _changes(base: ProducedState, state: ProducedState) -> list[str]:
    """What a probe row's state changed in its base's workspace (none known in full-state
    scope, whose states are recipes: their tamper lines say what changed outside)."""
    before, after = base.workspace, state.workspace
    if not before or not after:
        return []
    return state_changes(file_bytes(before), file_bytes(after))


def _check(
    r: Row,
    res: list[VerifyResult],
    primary: Semantics,
    shared_with: str | None,
    failed_bases: set[str],
    changes: Sequence[str] = (),
) -> GateCheck:
    base = r.id.base
    base_name = str(base.under(r.id.semantics)) if base is not None else None
    return GateCheck(
        kind=r.kind,
        name=r.name,
        state=r.state.ref,
        expected=r.expected,
        observed=tuple(x.reward for x in res),
        duration_s=round(r.state.produce_s + sum(x.duration_s for x in res), 3),
        evidence=check_evidence(
            r.state, res, r.probe, shared_with=shared_with, expected=r.expected, changes=changes
        ),
        tamper=r.prepared.tamper,
        semantics=r.id.semantics or primary,
        derived_from=base_name if base_name in failed_bases else None,
        privileged=r.probe.privileged if r.probe is not None else None,
    )


#: Output lines that say the verifier could not run at all (not that it judged the state).
_UNRUNNABLE = (
    (r"([\w.+-]+): (?:command )?not found", "command not found: {0}"),
    (r"No module named '?([\w.]+)'?", "Python module not installed: {0}"),
    (r"No interpreter found for Python ([\d.]+)", "Python {0} is not in the image"),
    (
        r"(?:Could not resolve host|Temporary failure in name resolution)[: ]*([\w.-]*)",
        "network: {0}",
    ),
    (r"Failed to (?:fetch|download)[: ]+(\S+)", "network: {0}"),
    (r"Network is unreachable", "network: unreachable"),
    (r"Unable to locate package (\S+)", "apt package: {0}"),
)


def unrunnable_signs(
    results: Sequence[VerifyResult], missing: Sequence[str] = ()
) -> tuple[str, ...]:
    """What the verifier lacked, from its output on a state it should accept. When the
    verification layer named what it could not provide and the run shows signs of a lack,
    those named things are the cause (the other signs are the install lines the layer made
    harmless, e.g. `apt-get update` or the uv installer failing offline)."""
    found: list[str] = []
    for r in results:
        text = f"{r.stdout}\n{r.stderr}"
        for pattern, fmt in _UNRUNNABLE:
            for m in re.finditer(pattern, text):
                item = fmt.format(*(g or "?" for g in m.groups()))
                if item not in found:
                    found.append(item)
    if found and missing:
        return tuple(missing[:8])  # what the layer could not provide, seen failing: the cause
    return tuple(found[:8])
