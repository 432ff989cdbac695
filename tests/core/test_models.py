"""Domain models: frozen, strict, and their verdict logic."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from envfactory.core.models import (
    CheckKind,
    Constraints,
    GateCheck,
    GateReport,
    GateVerdict,
    StateKind,
    StateRef,
    TaskSeed,
)

KEY = "a" * 64


def _seed(**kw):
    base = dict(id="seed-1", title="t", description="d", domain="data", content_hash=KEY)
    return TaskSeed(**(base | kw))


def test_models_are_frozen():
    seed = _seed()
    with pytest.raises(ValidationError):
        seed.title = "other"  # type: ignore[misc]


def test_unknown_keys_are_refused():
    with pytest.raises(ValidationError, match="extra"):
        _seed(colour="blue")


def test_artifact_keys_must_be_sha256_hex():
    with pytest.raises(ValidationError):
        _seed(content_hash="not-a-hash")


def test_constraints_reject_out_of_range_budgets():
    with pytest.raises(ValidationError):
        Constraints(max_turns=0)


def test_models_round_trip_through_json():
    seed = _seed()
    assert TaskSeed.model_validate_json(seed.model_dump_json()) == seed


def _check(kind, expected, observed, name="x"):
    state = StateRef(image="sha256:" + KEY, kind=StateKind.PRISTINE)
    return GateCheck(kind=kind, name=name, state=state, expected=expected, observed=observed)


def test_gate_report_passes_only_when_every_check_matches():
    report = GateReport(
        env_id="env-1",
        verifier_version=1,
        checks=(_check(CheckKind.ORACLE, 1, (1, 1, 1)), _check(CheckKind.NOOP, 0, (0, 0, 0))),
    )
    assert report.verdict == GateVerdict.PASSED
    assert report.reasons == ()


def test_a_flaky_check_fails_the_report_and_says_flaky():
    report = GateReport(
        env_id="env-1",
        verifier_version=1,
        checks=(_check(CheckKind.ORACLE, 1, (1, 0, 1), "oracle"), _check(CheckKind.NOOP, 0, (0,))),
    )
    assert report.verdict == GateVerdict.FAILED
    assert report.reasons == ("oracle oracle: flaky, rewards [1, 0, 1]",)


def test_a_report_without_oracle_and_noop_cannot_pass():
    report = GateReport(env_id="env-1", verifier_version=1, checks=())
    assert report.verdict == GateVerdict.FAILED
    assert "no oracle check was run" in report.reasons


def test_gate_report_round_trips_with_computed_fields():
    report = GateReport(
        env_id="env-1", verifier_version=1, checks=(_check(CheckKind.NOOP, 0, (1,)),)
    )
    data = report.model_dump(mode="json")
    assert data["verdict"] == "failed"
    assert GateReport.model_validate(data) == report
    assert GateReport.model_validate_json(report.model_dump_json()) == report


def test_a_solve_rate_band_is_inclusive_and_zero_is_never_in_it():
    from envfactory.core.models import SolveRate, SolveRateBand

    band = SolveRateBand(min=0.25, max=0.75)
    assert [SolveRate.measure(4, n, band).verdict for n in range(5)] == [
        "unproven",  # 0 of 4
        "in_band",  # 0.25: the minimum itself
        "in_band",
        "in_band",  # 0.75: the maximum itself
        "too_easy",
    ]
    assert SolveRateBand().verdict(0.0) == "unproven" and SolveRateBand().verdict(1.0) == "in_band"
    assert SolveRateBand.for_seed(None, None) is None
    assert SolveRateBand.for_seed(0.5, None) == SolveRateBand(min=0.5, max=1.0)
    assert SolveRateBand.for_seed(None, 0.5) == SolveRateBand(min=0.0, max=0.5)


def test_a_tolerance_rewarded_or_a_row_not_applicable_is_a_warning_never_a_reason():
    tolerated = _check(CheckKind.TOLERANCE, 0, (1,), "probe:records-reordered@oracle")
    unread = _check(CheckKind.PROBE, 0, (1,), "probe:truncated-outputs@oracle").model_copy(
        update={"not_applicable": "the verifier never read what it changed"}
    )
    report = GateReport(
        env_id="env-1",
        verifier_version=1,
        checks=(
            _check(CheckKind.ORACLE, 1, (1,)),
            _check(CheckKind.NOOP, 0, (0,)),
            tolerated,
            unread,
        ),
    )
    assert report.reasons == () and report.verdict == GateVerdict.PASSED
    assert report.tolerances == (
        "tolerates probe:records-reordered@oracle (probe:records-reordered@oracle: rewards [1])",
    )
    assert report.not_applicable == (
        "probe:truncated-outputs@oracle: the verifier never read what it changed",
    )


def test_a_report_stored_before_tolerances_and_not_applicable_rows_still_reads():
    stored = {
        "env_id": "env-1",
        "verifier_version": 1,
        "checks": [{"kind": "oracle", "name": "oracle", "expected": 1, "observed": [1]}],
    }
    report = GateReport.model_validate(stored)
    assert report.checks[0].not_applicable is None
    assert report.tolerances == () and report.not_applicable == ()
