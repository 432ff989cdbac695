"""Terminal-Bench 2 tasks as a stranger writes them (examples/tasks-tb2, not our house
style), validated end to end on real Docker: root work in solve.sh, the stock test.sh that
installs uv and runs `uvx -p 3.13 … pytest` offline through the verification layer, and a
verdict that says whose fault a rejection is."""

from __future__ import annotations

from pathlib import Path

import pytest

from envfactory.core.models import CheckKind, TaskVerdict
from verifiers.validate import validate_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TB2 = Path(__file__).resolve().parents[2] / "examples" / "tasks-tb2"


def test_a_broken_reference_solution_is_reference_failed_at_its_step(docker_engine, artifacts):
    result = validate_task(docker_engine, TB2 / "ledger-ranking", artifacts, repeats=1, probes=())
    report = result.report
    assert report.outcome == TaskVerdict.REFERENCE_FAILED, report.reasons
    failure = report.reference_failure
    assert failure is not None and failure.step == 3 and failure.exit_code == 127
    assert "sortt" in failure.output
    assert report.skipped  # settled at the failing step: nothing after it was verified


def test_root_work_and_an_offline_uvx_verifier_accept_the_reference_and_reject_prefixes(
    docker_engine, artifacts
):
    result = validate_task(
        docker_engine, TB2 / "sqlite-orders-report", artifacts, repeats=1, probes=()
    )
    report = result.report
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    assert any("uv" in p for p in report.provided) and any("pytest" in p for p in report.provided)
    assert {c.name for c in report.checks if c.kind == CheckKind.UNSOLVED} >= {"prefix-1"}
    assert any("Debian 13" in w for w in result.warnings)  # ubuntu:24.04 substituted, said so


def test_weak_tests_are_rejected_at_the_partial_state_they_accept(docker_engine, artifacts):
    result = validate_task(docker_engine, TB2 / "contacts-dedupe", artifacts, repeats=1, probes=())
    assert result.report.outcome == TaskVerdict.REJECTED
    assert result.report.reasons[0].startswith("unsolved prefix-1: expected 0, got [1]")
