"""benchmarks/suite.py's counting and formatting, without Docker: verdicts are taken from
real `GateReport`s, failures are counted under their own headings, and the N-worker
figure is labelled an estimate computed from the measured per-task times."""

from __future__ import annotations

from pathlib import Path

from benchmarks.suite import (
    SuiteSummary,
    TaskRow,
    as_json,
    failed_row,
    format_report,
    task_dirs,
    verdict_of,
)
from envfactory.core.errors import InvalidTask
from envfactory.core.models import CheckKind, GateCheck, GateReport, StepFailure


def _check(kind: CheckKind, name: str, expected: int, observed: int) -> GateCheck:
    return GateCheck(kind=kind, name=name, expected=expected, observed=(observed,))


def _report(**extra: object) -> GateReport:
    checks = (_check(CheckKind.ORACLE, "oracle", 1, 1), _check(CheckKind.NOOP, "no-op", 0, 0))
    return GateReport(env_id="e", verifier_version=1, checks=checks, **extra)  # type: ignore[arg-type]


def test_verdict_is_the_reports_outcome_when_it_has_one() -> None:
    failed = _report(reference_failure=StepFailure(step=3, exit_code=127))
    assert verdict_of(_report()) == "passed"
    assert verdict_of(failed) == "reference-failed"
    assert verdict_of(_report(unrunnable=("network: example.org",))) == "verifier-unrunnable"


def test_verdict_falls_back_to_the_gate_verdict_without_an_outcome() -> None:
    class OldReport:  # a report from before TaskVerdict existed
        verdict = "failed"

    assert verdict_of(OldReport()) == "failed"


def test_an_import_failure_is_counted_under_its_own_heading_with_its_message() -> None:
    exc = InvalidTask("tasks/x: no task.toml", hint="add task.toml")
    row = failed_row("x", None, exc, 0.2)
    summary = SuiteSummary([row, TaskRow("y", "passed", 2.0, 8.0, 5)], 10.5, 4, 2)
    text = format_report(summary)
    assert summary.counts == {"import-failed": 1, "passed": 1}
    assert "import-failed:\n  x: InvalidTask: tasks/x: no task.toml (fix: add task.toml)" in text


def test_a_build_failure_keeps_its_build_seconds() -> None:
    row = failed_row("z", "building", OSError("daemon gone"), 3.5)
    assert (row.verdict, row.build_s, row.gate_s) == ("build-failed", 3.5, 0.0)


def test_the_worker_estimate_is_mean_task_time_times_tasks_over_workers() -> None:
    rows = [TaskRow("a", "passed", 1.0, 9.0), TaskRow("b", "rejected", 0.0, 30.0)]
    summary = SuiteSummary(rows, wall_s=41.0, workers=4, cores=2)
    assert summary.estimated_wall_s == 20.0 * 2 / 4
    assert round(summary.tasks_per_hour, 1) == round(2 / 41.0 * 3600, 1)
    text = format_report(summary)
    assert "estimate with 4 workers" in text and "assumes perfect scaling" in text
    assert "measured (1 task at a time): 2 tasks in 41.0s wall" in text
    assert as_json(summary)["estimate"]["wall_s"] == 10.0  # type: ignore[index]


def test_suite_directory_lists_task_directories_and_a_task_directory_is_its_own_suite(
    tmp_path: Path,
) -> None:
    for name in ("b-task", "a-task", ".git"):
        (tmp_path / name).mkdir()
    (tmp_path / "README.md").write_text("suite")
    (tmp_path / "a-task" / "task.toml").write_text("")
    assert [p.name for p in task_dirs(tmp_path)] == ["a-task", "b-task"]
    assert task_dirs(tmp_path / "a-task") == [tmp_path / "a-task"]
