"""`envfactory validate PATH...`: import task directories, build them, run every gate.

Works without Temporal (the workflows call the same `verifiers.validate` functions).
Prints one table of checks per task and its verdict — passed, rejected (which rows),
reference-failed (which step, its output) or verifier-unrunnable (what is missing) — with
every failing reason; `--json` prints one JSON object per task instead. Paths that are
not directories (a README caught by a glob) are skipped and said so. Exit status: 0 when
every task passes or, broken on purpose, is rejected where its task.toml expects; 1
otherwise, or when a task cannot be imported/built (the message says what to fix).

Examples:
    envfactory validate examples/tasks/csv-report
    envfactory validate examples/tasks/* --repeats 2
    envfactory validate examples/tasks/broken-always-pass --json
    envfactory validate examples/tasks/wal-replay --mutation-score --max-mutants 20
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from envfactory.core.errors import EnvFactoryError
from envfactory.core.models import WARNING_KINDS, GateCheck, SkippedCheck, TaskVerdict, shown
from envfactory.core.settings import load_settings
from envfactory.store import ArtifactStore

from .mutation_view import attach_mutation_score, mutation_json, print_mutation

if TYPE_CHECKING:
    from sandboxes import DockerEngine
    from verifiers.validate import TaskValidation

HELP = (
    "Examples:  envfactory validate examples/tasks/csv-report  ·  "
    "envfactory validate examples/tasks/* --repeats 2  ·  "
    "envfactory validate examples/tasks/broken-always-pass --json  ·  "
    "envfactory validate examples/tasks/wal-replay --mutation-score --max-mutants 20"
)


def validate(
    paths: Annotated[
        list[Path], typer.Argument(help="Task directories (Harbor or Terminal-Bench 1).")
    ],
    repeats: Annotated[
        int | None,
        typer.Option(
            "--repeats", "-r", min=1, help="Runs per check (default: settings.gates.repeats)."
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per task on stdout.")
    ] = False,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            "-j",
            min=1,
            help="Containers at once (default: settings.sandbox.pool_size).",
        ),
    ] = None,
    mutation: Annotated[
        bool,
        typer.Option(
            "--mutation-score",
            help="After the gates pass, weaken the verifier automatically and report which weaker verifiers the gates miss.",
        ),
    ] = False,
    max_mutants: Annotated[
        int,
        typer.Option(
            "--max-mutants",
            min=1,
            help="Mutants per task with --mutation-score (spread over operators).",
        ),
    ] = 40,
) -> None:
    """Build each task and run every gate on its verifier: oracle, no-op, unsolved states,
    shortcut probes; each check repeated and required to agree."""
    from sandboxes import DockerEngine

    settings = load_settings()
    jobs = concurrency or settings.sandbox.pool_size
    sandbox = settings.sandbox.model_copy(
        update={"pool_size": max(jobs, settings.sandbox.pool_size)}
    )
    engine = DockerEngine(sandbox, run_id=f"validate-{uuid.uuid4().hex[:8]}")
    artifacts = ArtifactStore.from_settings(settings)
    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False)
    failed = 0
    dirs = [p for p in paths if p.is_dir()]
    for p in paths:
        if not p.is_dir():
            err.print(f"skipped {p}: not a task directory")
    if not dirs:
        err.print(
            "[red]no task directory given[/]\n  hint: pass directories such as examples/tasks/csv-report"
        )
        raise typer.Exit(1)
    results: list[TaskValidation | None] = []
    try:
        for path in dirs:
            result = _validate_one(
                engine,
                path,
                artifacts,
                repeats or settings.gates.repeats,
                jobs,
                as_json,
                out,
                err,
                mutants=max_mutants if mutation else 0,
            )
            results.append(result)
            failed += 0 if result is not None and _as_expected(result) else 1
    finally:
        engine.gc(run_id=engine.run_id, include_live=True)
    (err if as_json else out).print(summary_line(results))
    err.print(f"disk quota: {engine.disk_bound()}", markup=False)
    raise typer.Exit(1 if failed else 0)


def summary_line(results: Sequence[TaskValidation | None]) -> str:
    """`N sound accepted, M broken rejected as expected` and what went otherwise."""
    done = [r for r in results if r is not None]
    sound = sum(1 for r in done if r.rejected_as_expected is None and r.passed)
    broken = sum(1 for r in done if r.rejected_as_expected)
    parts = [f"{sound} sound accepted", f"{broken} broken rejected as expected"]
    unexpected = len(done) - sound - broken
    if unexpected:
        parts.append(f"{unexpected} not as expected")
    if len(done) < len(results):
        parts.append(f"{len(results) - len(done)} could not be imported or built")
    return ", ".join(parts)


def _validate_one(
    engine: DockerEngine,
    path: Path,
    artifacts: ArtifactStore,
    repeats: int,
    jobs: int,
    as_json: bool,
    out: Console,
    err: Console,
    mutants: int = 0,
) -> TaskValidation | None:
    """Validate one task and print it; None when it could not be imported or built."""
    from verifiers.validate import validate_task

    with _progress(err, as_json) as bar:
        tid = bar.add_task(f"{path.name}: importing", total=None)

        def progress(done: int, total: int, what: str) -> None:
            bar.update(tid, completed=done, total=total, description=f"{path.name}: {what}")

        try:
            result = validate_task(
                engine,
                path,
                artifacts,
                repeats=repeats,
                concurrency=jobs,
                progress=progress,
                on_stage=lambda stage: bar.update(tid, description=f"{path.name}: {stage}"),
                caps=engine.settings.task_caps,
            )
            if mutants:  # --mutation-score (envfactory/cli/mutation_view.py)
                attach_mutation_score(
                    engine, result, artifacts, max_mutants=mutants, jobs=jobs, progress=progress
                )
        except EnvFactoryError as exc:
            _print_error(out if as_json else err, path, exc, as_json)
            return None
    if as_json:
        out.print_json(json.dumps({**_as_json(result), **mutation_json(result.report)}))
    else:
        _print_table(out, result)
        if mutants:
            print_mutation(out, result.report)
    return result


def _as_expected(result: TaskValidation) -> bool:
    """Passed, or broken on purpose and rejected by the check its task names."""
    if result.rejected_as_expected is not None:
        return bool(result.rejected_as_expected)
    return bool(result.passed)


def _progress(console: Console, quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=quiet,
    )


def check_mark(check: GateCheck) -> str:
    """How a table shows a row: ok, n/a (its premise or trace says it cannot judge), a
    warning (alternatives, tolerances), FLAKY or FAIL."""
    if check.passed:
        return "[green]ok[/]"
    if check.not_applicable:
        return "[dim]n/a[/]"
    if check.kind in WARNING_KINDS:
        return "[yellow]warning[/]"
    return "[red]FLAKY[/]" if check.flaky else "[red]FAIL[/]"


def _print_table(out: Console, result: TaskValidation) -> None:
    report = result.report
    table = Table(
        title=f"{result.path}  ({report.env_id}, {len(report.checks)} checks × {report.repeats})",
        title_justify="left",
    )
    for col in ("check", "kind", "runtime", "expected", "observed", "result", "s", "evidence"):
        table.add_column(col, overflow="fold", justify="right" if col == "s" else "left")
    for c in report.checks:
        evidence = (
            ""
            if c.passed
            else "; ".join(e for e in c.evidence if not e.startswith(("stdout", "stderr")))[:160]
        )
        table.add_row(
            c.name,
            c.kind.value,
            c.semantics,
            str(c.expected),
            " ".join(map(str, c.observed)),
            check_mark(c),
            f"{c.duration_s:.1f}",
            evidence,
        )
    out.print(table)
    for line in _facts(result):
        out.print(f"  {line}")
    colour = "green" if result.passed else "red"
    out.print(
        f"  verdict: [{colour}]{report.outcome.value.upper()}[/]  (built in {result.build_s:.1f}s, gated in {result.run.wall_s:.1f}s)"
    )
    for reason in report.reasons:
        out.print(f"    - {shown(reason)}", markup=False)
    if report.privileged_only:
        out.print(f"    {PRIVILEGED_ONLY}", markup=False)
    for other in report.semantics[1:] if report.outcome == TaskVerdict.PASSED else ():
        safe = report.safe_under(other)
        word = "[green]safe[/]" if safe else "[red]NOT SAFE[/] (an export to it is refused)"
        out.print(f"  under {other} semantics: {word}")
        for reason in () if safe else report.other_runtime_reasons:
            out.print(f"    - {reason}", markup=False)
    if report.reference_failure is not None and report.reference_failure.output:
        tail = report.reference_failure.output.strip().splitlines()[-12:]
        lines = "\n".join(f"      {shown(line)}" for line in tail)  # build output: escaped
        out.print("    step output:\n" + lines, markup=False)
    if result.rejected_as_expected is not None:
        expected = result.task.expected_failure or result.task.expected_failure_kind
        word = "yes" if result.rejected_as_expected else "[red]NO[/]"
        out.print(f"  broken on purpose, expected to fail at {expected}: {word}")


PRIVILEGED_ONLY = (
    "every reason above is a privileged row: it shows what a solver who knew the tests "
    "could do, not what any solver can"
)


def _facts(result: TaskValidation) -> list[str]:
    """Notes, base-image substitutions, what the verification layer provided, skips."""
    report = result.report
    lines = [f"note: {escape(n)}" for n in report.notes]
    lines += [f"base image: {escape(s)}" for s in result.substitutions]
    lines += [f"[yellow]warning: {escape(w)}[/]" for w in result.warnings]
    lines += [f"[yellow]warning: {escape(w)}[/]" for w in report.too_strict]
    lines += [f"[yellow]warning: {escape(w)}[/]" for w in report.tolerances]
    lines += [f"not applicable: {escape(w)}" for w in report.not_applicable]
    if report.provided:
        lines.append("provided offline for the verifier: " + escape(", ".join(report.provided)))
    lines += _skipped_lines(report.skipped)
    return lines


def _skipped_lines(skipped: Sequence[SkippedCheck], shown: int = 3) -> list[str]:
    """One line per reason, the reason first: the rows an early verdict skipped share it
    (18 harbor rows after one failed read as one line, not 18), and a long group names its
    first `shown` rows (`--json` lists every one in the report's `skipped`)."""
    by_why: dict[str, list[str]] = {}
    for s in skipped:
        by_why.setdefault(s.why, []).append(s.name)
    lines = []
    for why, names in by_why.items():
        what = names[0]
        if len(names) > 1:
            more = f" and {len(names) - shown} more" if len(names) > shown else ""
            what = f"{len(names)} checks ({', '.join(names[:shown])}{more})"
        lines.append(f"skipped, {escape(why)}: {escape(what)}")
    return lines


def _as_json(result: TaskValidation) -> dict[str, Any]:
    return {
        "task": str(result.path),
        "env_id": result.report.env_id,
        "image": result.image,
        "verdict": result.report.verdict.value,
        "outcome": result.report.outcome.value,
        "reasons": list(result.report.reasons),
        "privileged_only": result.report.privileged_only,
        "safe_under": {s: result.report.safe_under(s) for s in result.report.semantics},
        "substitutions": list(result.substitutions),
        "warnings": list(result.warnings),
        "too_strict": list(result.report.too_strict),
        "tolerances": list(result.report.tolerances),
        "not_applicable": list(result.report.not_applicable),
        "expected_failure": result.task.expected_failure,
        "rejected_as_expected": result.rejected_as_expected,
        "build_s": round(result.build_s, 3),
        "gate_s": round(result.run.wall_s, 3),
        "report": result.report.model_dump(mode="json"),
    }


def _print_error(console: Console, path: Path, exc: EnvFactoryError, as_json: bool) -> None:
    if as_json:
        console.print_json(
            json.dumps(
                {
                    "task": str(path),
                    "error": type(exc).__name__,
                    "message": exc.message,
                    "hint": exc.hint,
                }
            )
        )
    else:
        console.print(
            f"[red]{path}: {exc.message}[/]" + (f"\n  hint: {exc.hint}" if exc.hint else "")
        )
