"""Gate a whole task suite and say what it costs: verdicts, per-task seconds, tasks/hour.

Every task directory under DIR (Harbor or Terminal-Bench 1 layout; `verifiers.formats.
load_task` tells which) is validated with one `verifiers.validate.validate_task` call on
a local `DockerEngine`, one task at a time, and the script prints:

- counts per verdict: the report's `outcome` (a `TaskVerdict`: passed / rejected /
  reference-failed / verifier-unrunnable) when the report has one, else its `verdict`;
- per task: its verdict, build seconds, gate seconds, checks and first reason;
- tasks that could not be imported, built or gated, each under its own heading with its
  error message (the run goes on past them);
- total wall, tasks/hour as measured (one task at a time), and an *estimate* for N
  workers: the measured per-task time × tasks / N (perfect scaling assumed; the machine's
  core count is printed beside it so the reader can judge that assumption).

Invariants: a task's failure to import or build is a row, never the end of the run; the
measured numbers and the estimate are labelled as such; nothing is mocked (real Docker).

Usage:
    python benchmarks/suite.py examples/tasks [--workers 4] [--repeats 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# `python benchmarks/suite.py` puts benchmarks/ on sys.path, not the checkout, so an
# editable install elsewhere would be measured instead: measure the code beside us.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: headings for tasks that never got a gate report, by the stage they failed in
FAILED_STAGES = {None: "import-failed", "building": "build-failed", "gating": "gate-error"}
TASK_MARKERS = ("task.toml", "instruction.md", "environment", "task.yaml")


@dataclass
class TaskRow:
    """One task's result: a verdict with its timings, or the stage it failed in and why."""

    name: str
    verdict: str  # a TaskVerdict / GateVerdict value, or a FAILED_STAGES heading
    build_s: float = 0.0
    gate_s: float = 0.0
    checks: int = 0
    reasons: tuple[str, ...] = ()
    error: str | None = None

    @property
    def total_s(self) -> float:
        return self.build_s + self.gate_s


@dataclass
class SuiteSummary:
    rows: list[TaskRow]
    wall_s: float
    workers: int
    cores: int
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.counts = dict(Counter(r.verdict for r in self.rows).most_common())

    @property
    def tasks_per_hour(self) -> float:
        return len(self.rows) / self.wall_s * 3600 if self.wall_s > 0 else 0.0

    @property
    def mean_task_s(self) -> float:
        return sum(r.total_s for r in self.rows) / len(self.rows) if self.rows else 0.0

    @property
    def estimated_wall_s(self) -> float:
        """Per-task time × tasks / workers: an estimate that assumes perfect scaling."""
        return self.mean_task_s * len(self.rows) / max(self.workers, 1)

    @property
    def estimated_tasks_per_hour(self) -> float:
        est = self.estimated_wall_s
        return len(self.rows) / est * 3600 if est > 0 else 0.0


def verdict_of(report: object) -> str:
    """The report's `outcome` (TaskVerdict) when it has one, else its `verdict`."""
    outcome = getattr(report, "outcome", None)
    chosen = outcome if outcome is not None else report.verdict  # type: ignore[attr-defined]
    return str(getattr(chosen, "value", chosen))


def task_dirs(root: Path) -> list[Path]:
    """Sub-directories of `root` that look like tasks (hidden ones skipped); a directory
    holding none is itself the task (so `suite.py examples/tasks/csv-report` works)."""
    if any((root / m).exists() for m in TASK_MARKERS):
        return [root]
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def row_from_validation(name: str, result: object) -> TaskRow:
    report = result.report  # type: ignore[attr-defined]
    return TaskRow(
        name=name,
        verdict=verdict_of(report),
        build_s=result.build_s,  # type: ignore[attr-defined]
        gate_s=result.run.wall_s,  # type: ignore[attr-defined]
        checks=len(report.checks),
        reasons=tuple(report.reasons),
    )


def failed_row(name: str, stage: str | None, exc: BaseException, elapsed_s: float) -> TaskRow:
    """A task that never got a report: counted under the stage it failed in."""
    # EnvFactoryError keeps the message and the fix apart; print them on one line
    text = getattr(exc, "message", None) or str(exc)
    message = " ".join(text.split()) or type(exc).__name__
    hint = getattr(exc, "hint", None)
    if hint:
        message += f" (fix: {' '.join(str(hint).split())})"
    built = elapsed_s if stage == "building" else 0.0
    return TaskRow(
        name=name,
        verdict=FAILED_STAGES.get(stage, "gate-error"),
        build_s=built,
        error=f"{type(exc).__name__}: {message}",
    )


def format_report(summary: SuiteSummary) -> str:
    """The human-readable table: verdict counts, per-task rows, failures, throughput."""
    rows = summary.rows
    width = max([len(r.name) for r in rows] + [4])
    out = [
        f"{'task':{width}}  {'verdict':20}  {'build s':>8}  {'gate s':>8}  {'checks':>6}  first reason"
    ]
    for r in rows:
        first = (r.reasons[0] if r.reasons else "")[:90]
        out.append(
            f"{r.name:{width}}  {r.verdict:20}  {r.build_s:8.1f}  {r.gate_s:8.1f}  "
            f"{r.checks:6d}  {first if r.error is None else '-'}"
        )
    out.append("")
    out.append("verdicts: " + "   ".join(f"{k}: {v}" for k, v in summary.counts.items()))
    for heading in sorted({r.verdict for r in rows if r.error is not None}):
        out.append(f"{heading}:")
        out += [f"  {r.name}: {r.error}" for r in rows if r.verdict == heading]
    out += _throughput_lines(summary)
    return "\n".join(out)


def _throughput_lines(s: SuiteSummary) -> list[str]:
    builds = sum(r.build_s for r in s.rows)
    gates = sum(r.gate_s for r in s.rows)
    return [
        "",
        f"measured (1 task at a time): {len(s.rows)} tasks in {s.wall_s:.1f}s wall "
        f"(build {builds:.1f}s + gate {gates:.1f}s) -> {s.tasks_per_hour:.1f} tasks/hour",
        f"estimate with {s.workers} workers: mean per-task {s.mean_task_s:.1f}s x {len(s.rows)} tasks "
        f"/ {s.workers} = {s.estimated_wall_s:.1f}s -> {s.estimated_tasks_per_hour:.1f} tasks/hour "
        f"(assumes perfect scaling; this machine has {s.cores} cores)",
        f"  gate time only (builds cached): {gates / len(s.rows) if s.rows else 0:.1f}s x "
        f"{len(s.rows)} / {s.workers} = {gates / max(s.workers, 1):.1f}s",
    ]


def as_json(summary: SuiteSummary) -> dict[str, object]:
    return {
        "counts": summary.counts,
        "tasks": [asdict(r) | {"total_s": r.total_s} for r in summary.rows],
        "wall_s": summary.wall_s,
        "tasks_per_hour": summary.tasks_per_hour,
        "estimate": {
            "workers": summary.workers,
            "wall_s": summary.estimated_wall_s,
            "tasks_per_hour": summary.estimated_tasks_per_hour,
            "assumes": "perfect scaling: mean measured per-task seconds x tasks / workers",
        },
        "cores": summary.cores,
    }


def run_one(
    engine: object, path: Path, artifacts: object, repeats: int, concurrency: int
) -> TaskRow:
    """Validate one task; an import, build or gate failure becomes a row, not a crash."""
    from envfactory.core.errors import EnvFactoryError
    from verifiers.validate import validate_task

    stage: list[str | None] = [None]
    t0 = time.monotonic()
    try:
        result = validate_task(
            engine,
            path,
            artifacts,
            repeats=repeats,
            concurrency=concurrency,  # type: ignore[arg-type]
            on_stage=lambda s: stage.__setitem__(0, s),
        )
    except (EnvFactoryError, OSError) as exc:  # docker/IO trouble is a row too
        return failed_row(path.name, stage[0], exc, time.monotonic() - t0)
    return row_from_validation(path.name, result)


def run_suite(
    paths: Sequence[Path], *, repeats: int, concurrency: int, workers: int, progress: bool = True
) -> SuiteSummary:
    """Gate every task in `paths` on a fresh engine and temporary artifact store."""
    from envfactory.core.settings import load_settings
    from envfactory.store import ArtifactStore
    from sandboxes import DockerEngine

    settings = load_settings()
    engine = DockerEngine(
        settings.sandbox.model_copy(update={"pool_size": max(concurrency, 1)}),
        run_id=f"suite-{uuid.uuid4().hex[:8]}",
    )
    rows: list[TaskRow] = []
    t0 = time.monotonic()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            artifacts = ArtifactStore(Path(tmp) / "artifacts")
            for path in paths:
                rows.append(run_one(engine, path, artifacts, repeats, concurrency))
                if progress:
                    r = rows[-1]
                    print(
                        f"  {r.name}: {r.verdict} ({r.build_s:.1f}s build, {r.gate_s:.1f}s gate)",
                        file=sys.stderr,
                        flush=True,
                    )
    finally:
        engine.gc(run_id=engine.run_id, include_live=True)
    return SuiteSummary(rows, time.monotonic() - t0, workers, os.cpu_count() or 1)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("dir", type=Path, help="a suite directory (or one task directory)")
    ap.add_argument(
        "--workers",
        type=int,
        default=4,
        help="N for the throughput estimate (the run itself is one task at a time)",
    )
    ap.add_argument("--repeats", type=int, default=1, help="runs per gate check")
    ap.add_argument("--concurrency", type=int, default=2, help="containers at once within a task")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args(argv)
    if not args.dir.is_dir():
        ap.error(f"{args.dir} is not a directory: give a suite directory such as examples/tasks")
    summary = run_suite(
        task_dirs(args.dir),
        repeats=args.repeats,
        concurrency=args.concurrency,
        workers=args.workers,
    )
    print(json.dumps(as_json(summary), indent=2) if args.json else format_report(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
