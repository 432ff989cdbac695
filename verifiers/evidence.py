"""Evidence for gate rows, and shortcut findings for the review queue.

`check_evidence` turns what a check observed into short lines a reviewer can act on
(exit codes, failed steps, tamper evidence by attack class, the verifier's output when
the check failed). `findings_from_report` turns every failing probe / regression check
and every state with tamper evidence into a `ShortcutFinding`, and every correct
alternative the verifier rejected into a too-strict one — the workflows layer files them
into the human review queue.

A too-strict finding carries no state (a confirmed one is never a regression row, which
expects 0) and no verifier output: its state is the reference's result rewritten, and
the finding's evidence reaches the verifier writer when a reviewer confirms it, who must
never see the solution (DESIGN.md, invariant 3). Its evidence is the alternative's
class and the exit codes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from envfactory.core.models import (
    CheckKind,
    Evidence,
    GateCheck,
    GateReport,
    ShortcutFinding,
    counts,
)
from envfactory.core.models.rows import FindingRule, Rule

from .tamper import category_of

if TYPE_CHECKING:
    from .probes import Probe
    from .runner import VerifyResult
    from .states import ProducedState

_TAIL = 600


def _tail(text: str, size: int = _TAIL) -> str:
    text = text.strip()
    return text if len(text) <= size else "…" + text[-size:]


#: how many changed files a row's evidence lists, and how much of each text it quotes
_DIFF_FILES = 12
_EXCERPT = 160


def state_changes(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    """What a probe changed in the state it was applied to, for a reviewer: each file
    added, removed or changed (with sizes), and for text a bounded excerpt of the first
    line that differs, before and after."""
    paths = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    lines = [_change(p, before.get(p), after.get(p)) for p in paths[:_DIFF_FILES]]
    if len(paths) > _DIFF_FILES:
        lines.append(f"changed: … {len(paths) - _DIFF_FILES} more file(s)")
    return lines


def _change(path: str, old: bytes | None, new: bytes | None) -> str:
    if old is None:
        return f"changed: added {path} ({len(new or b'')} bytes)"
    if new is None:
        return f"changed: removed {path} ({len(old)} bytes)"
    head = f"changed: {path} ({len(old)} → {len(new)} bytes)"
    if b"\0" in old[:1024] or b"\0" in new[:1024]:
        return head + ", binary"
    a, b = old.decode("utf-8", "replace").splitlines(), new.decode("utf-8", "replace").splitlines()
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    was = a[i][:_EXCERPT] if i < len(a) else "(end of file)"
    now = b[i][:_EXCERPT] if i < len(b) else "(end of file)"
    return f"{head}, line {i + 1}: {was!r} → {now!r}"


def check_evidence(
    state: ProducedState,
    results: Sequence[VerifyResult],
    probe: Probe | None,
    *,
    shared_with: str | None = None,
    expected: int | None = None,
    changes: Sequence[str] = (),
) -> tuple[str, ...]:
    """Lines a reviewer can act on; `changes`: what the row's state changed against the
    state it was applied to (`state_changes`)."""
    lines: list[str] = []
    if probe is not None:
        lines.append(f"probe {probe.name}: {probe.summary}")
        if probe.detail:
            lines.append(f"probe {probe.name} plants: {probe.detail}")
    lines += changes
    if shared_with:
        lines.append(f"verification input identical to {shared_with}: verified once, result shared")
    lines += [f"state: {entry}" for entry in state.log]
    lines += [
        f"reference: step {e.step}{f' ({e.title})' if e.title else ''}: `{e.command}` exited "
        f"{e.exit_code}"
        for e in state.errors
    ]
    codes = [r.exit_code for r in results]
    lines.append(
        f"exit codes {codes}" + (" (timed out)" if any(r.timed_out for r in results) else "")
    )
    lines += _runner_lines(results)
    for change in state.prepared.tamper[:20]:
        lines.append(f"tamper {category_of(change.path) or 'unknown'}: {change.kind} {change.path}")
    if len(state.prepared.tamper) > 20:
        lines.append(f"tamper: … {len(state.prepared.tamper) - 20} more")
    return tuple(lines + _output_lines(results, expected))


def _output_lines(results: Sequence[VerifyResult], expected: int | None) -> list[str]:
    """The verifier's own output on every row, bounded: its stdout, stderr and the files
    it left in its reward directory, from a run that got the wrong reward if any (else
    the first); a right row quotes less."""
    if not results:
        return []
    wrong = [r for r in results if expected is not None and r.reward != expected]
    r = (wrong or list(results))[0]
    size = _TAIL if wrong else _TAIL // 3
    lines = [
        f"{name}: {_tail(text, size)}"
        for name, text in (("stdout", r.stdout), ("stderr", r.stderr))
        if text.strip()
    ]
    if r.logs:  # from its start: each file opens with its name (``=== PATH``)
        logs = r.logs.strip()
        cut = 4 * size
        lines.append("verifier files: " + (logs if len(logs) <= cut else logs[:cut] + "…"))
    return lines


def _runner_lines(results: Sequence[VerifyResult]) -> list[str]:
    """The runner's notes, and what a probe's planted code recorded of its premise."""
    lines = [f"runner: {note}" for note in dict.fromkeys(n for r in results for n in r.notes)]
    premises = [r.premise.strip() for r in results if r.premise]
    if premises:
        lines.append("premise held: " + _tail(premises[0]))
    return lines


def _finding_id(env_id: str, rule: str, state: str) -> str:
    return "finding-" + hashlib.sha256(f"{env_id}\0{rule}\0{state}".encode()).hexdigest()[:12]


def _summary(check: GateCheck) -> str:
    return (
        f"{check.kind.value} {check.name}: expected reward {check.expected}, "
        f"observed {list(check.observed)}"
    )


def _rule_of(check: GateCheck) -> Rule:
    """A failing probe row's rule names its probe; a regression row's is the family;
    either names its runtime when that is not envfactory's."""
    row = check.row
    if check.kind == CheckKind.PROBE and row.probe is not None:
        return Rule(FindingRule.PROBE, row.probe, row.semantics)
    return Rule(FindingRule.REGRESSION, semantics=row.semantics)


def findings_from_report(report: GateReport) -> tuple[ShortcutFinding, ...]:
    """Shortcut findings for review: failing probe/regression checks, then tamper evidence.

    Ids are derived from (env, rule, state), so re-running the gates on the same verifier
    yields the same ids and the queue can de-duplicate. Only rows under the report's first
    semantics (the reward's own runtime) become findings: a row under another runtime that
    fails restricts where the task may be exported (`GateReport.safe_under`), not whether
    it is published.
    """
    out: list[ShortcutFinding] = []
    primary = report.semantics[0] if report.semantics else "envfactory"
    for check in report.checks:
        if check.semantics != primary:
            continue
        if (
            check.kind in (CheckKind.PROBE, CheckKind.REGRESSION)
            and not check.passed
            and counts(check)
        ):
            rule = str(_rule_of(check))
            out.append(
                ShortcutFinding(
                    id=_finding_id(report.env_id, rule, check.name),
                    env_id=report.env_id,
                    source="probe",
                    rule=rule,
                    state=check.state,
                    evidence=Evidence(
                        summary=_summary(check),
                        diff=check.tamper,
                        verifier_output="\n".join(check.evidence),
                    ),
                )
            )
    for check in report.checks:
        if check.semantics != primary:
            continue
        if check.tamper and check.kind not in (CheckKind.PROBE,):
            classes = sorted({category_of(t.path) or "unknown" for t in check.tamper})
            rule = str(Rule(FindingRule.TAMPER, ",".join(classes)))
            out.append(
                ShortcutFinding(
                    id=_finding_id(report.env_id, rule, check.name),
                    env_id=report.env_id,
                    source="tamper",
                    rule=rule,
                    state=check.state,
                    evidence=Evidence(
                        summary=f"{check.name} changes {', '.join(classes)} outside the workspace",
                        diff=check.tamper,
                        verifier_output="\n".join(_finding_lines(check)),
                    ),
                )
            )
    out += too_strict_findings(report)
    return tuple(out)


#: evidence lines that quote the verifier's own output (`_output_lines`)
_OUTPUT_LINES = ("stdout: ", "stderr: ", "verifier files: ")


def _finding_lines(check: GateCheck) -> tuple[str, ...]:
    """A row's evidence as a finding carries it to the verifier writer: the verifier's
    output only from a row that got the wrong reward. A right row's state can be the
    reference's (the oracle's, with tamper evidence), whose output the writer must never
    see (DESIGN.md, invariant 3)."""
    if not check.passed:
        return check.evidence
    return tuple(line for line in check.evidence if not line.startswith(_OUTPUT_LINES))


def too_strict_findings(report: GateReport) -> list[ShortcutFinding]:
    """One finding per correct alternative (under the report's first semantics) that the
    verifier gave 0: a reviewer decides whether the task requires the exact bytes."""
    primary = report.semantics[0] if report.semantics else "envfactory"
    out = []
    for check in report.checks:
        if check.kind != CheckKind.ALTERNATIVE or check.passed or not check.observed:
            continue
        if check.semantics != primary or check.row.probe is None:
            continue
        rule = str(Rule(FindingRule.TOO_STRICT, check.row.probe))
        kept = [line for line in check.evidence if line.startswith(("probe ", "exit codes"))]
        what = kept[0].partition(": ")[2] if kept and kept[0].startswith("probe ") else check.name
        out.append(
            ShortcutFinding(
                id=_finding_id(report.env_id, rule, check.name),
                env_id=report.env_id,
                source="alternative",
                rule=rule,
                evidence=Evidence(
                    summary=f"too strict: rejects a correct alternative ({check.name}): {what}",
                    verifier_output="\n".join(kept),
                ),
            )
        )
    return out
