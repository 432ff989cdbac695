"""`envfactory validate --mutation-score`: measure a task's gate battery and print it.

After the gates pass, the verifier is weakened automatically (`verifiers.mutation`) and
every mutant is run on the states the gates already produced. Printed: killed / survived /
equivalent-suspected, the score, the cost (verifications, seconds) and each survivor's
diff — a survivor is a weaker verifier the battery did not notice. The score goes into
the task's `GateReport.mutation` (so into `--json` and any stored report). A task whose
gates failed is not scored: its verifier is not trusted anyway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console

from envfactory.core.models import GateReport

if TYPE_CHECKING:  # the CLI imports the verification stack only when a command runs
    from verifiers.gates import Progress
    from verifiers.validate import TaskValidation


def attach_mutation_score(
    engine: Any,
    result: TaskValidation,
    artifacts: Any,
    *,
    max_mutants: int,
    jobs: int,
    progress: Progress | None = None,
) -> None:
    """Score the battery of a validated task and put the score into its report."""
    from verifiers.mutation import mutation_score

    if not result.passed:
        return
    score = mutation_score(
        result.run,
        engine=engine,
        spec=result.task.spec,
        verifier=result.task.verifier,
        files=artifacts.get,
        max_mutants=max_mutants,
        concurrency=jobs,
        progress=progress,
    )
    result.run.report = result.run.report.model_copy(update={"mutation": score})


def mutation_json(report: GateReport) -> dict[str, Any]:
    """Top-level keys for `--json` (the report itself carries the mutants)."""
    ms = report.mutation
    return {} if ms is None else {"mutation_score": ms.score}


def print_mutation(out: Console, report: GateReport) -> None:
    ms = report.mutation
    if ms is None:
        out.print("  mutation score: not run (the gates failed)")
        return
    score = "n/a" if ms.score is None else f"{ms.score:.2f}"
    colour = "green" if ms.survived == 0 else "yellow"
    out.print(
        f"  mutation score: [{colour}]{score}[/]  killed {ms.killed} · survived {ms.survived}"
        f" · equivalent-suspected {ms.equivalent}  ({len(ms.mutants)} of {ms.candidates}"
        f" mutants; cost {ms.verifications} verifications in {ms.wall_s:.1f}s)"
    )
    by_check: dict[str, int] = {}
    for m in ms.mutants:
        if m.killed_by:
            by_check[m.killed_by] = by_check.get(m.killed_by, 0) + 1
    if by_check:
        out.print("    killed by: " + ", ".join(f"{k} {n}" for k, n in by_check.items()))
    equivalent = [
        f"{m.operator} {m.file}:{m.line}"
        for m in ms.mutants
        if m.status != "killed" and m.status != "survived"
    ]
    if equivalent:
        out.print("    equivalent-suspected (same output on every state): " + ", ".join(equivalent))
    for m in ms.mutants:
        if m.status == "survived":
            out.print(f"    survived: {m.operator} {m.file}:{m.line}")
            out.print(m.diff.rstrip(), markup=False, highlight=False)
