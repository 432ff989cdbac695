"""One type per vocabulary: gate failures as data, decisions and the states they leave,
agent roles, verification scopes. Code decides on these, never on formatted text."""

from __future__ import annotations

import pytest

from envfactory.core.models import (
    PIPELINE_ROLES,
    AgentRole,
    CheckKind,
    Decision,
    FailureKind,
    GateCheck,
    GateFailure,
    GateReport,
    ReviewState,
    StepFailure,
    Trajectory,
    VerifyScope,
)
from envfactory.core.settings import AgentsSettings


def _row(kind, name, expected, observed, **kw):
    return GateCheck(kind=kind, name=name, expected=expected, observed=observed, **kw)


def _report(**kw) -> GateReport:
    checks = (
        _row(CheckKind.ORACLE, "oracle", 1, (1, 0, 1)),
        _row(CheckKind.NOOP, "no-op", 0, (0,)),
        _row(CheckKind.UNSOLVED, "prefix-1", 0, (1,)),
        _row(CheckKind.PROBE, "reward-file@prefix-1", 0, (1,), derived_from="prefix-1"),
        _row(CheckKind.PROBE, "conftest@prefix-1", 0, (1,), derived_from="prefix-1"),
        _row(CheckKind.PROBE, "reward-file@no-op", 0, (1,)),
        _row(CheckKind.PROBE, "reward-file@no-op", 0, (1,), semantics="harbor"),
    )
    return GateReport(
        env_id="env-1", verifier_version=1, checks=checks, semantics=("envfactory", "harbor"), **kw
    )


def test_gate_failures_are_data_and_the_reasons_are_their_sentences():
    report = _report(
        reference_failure=StepFailure(step=2, title="build", exit_code=3),
        unrunnable=("python3.13",),
    )
    assert [(f.kind, f.check_kind, f.check) for f in report.failures] == [
        (FailureKind.REFERENCE_FAILED, None, None),
        (FailureKind.CHECK, CheckKind.ORACLE, "oracle"),
        (FailureKind.CHECK, CheckKind.UNSOLVED, "prefix-1"),
        (FailureKind.CHECK, CheckKind.PROBE, "reward-file@no-op"),
        (FailureKind.UNRUNNABLE, None, None),
    ]
    assert report.reasons == (
        "reference solution failed at step 2 (build): exit 3",
        "oracle oracle: flaky, rewards [1, 0, 1]",
        "unsolved prefix-1: expected 0, got [1] (and 2 probe rows on it)",
        "probe reward-file@no-op: expected 0, got [1]",
        "verifier unrunnable: python3.13",
    )  # the wording people and old histories know, unchanged
    assert report.failures[1].flaky and report.failures[2].derived_rows == 2
    assert report.other_runtime_reasons == (
        "probe reward-file@no-op [harbor]: expected 0, got [1]",
    )


def test_a_report_missing_its_oracle_says_so_as_a_missing_check():
    report = GateReport(env_id="env-1", verifier_version=1, checks=())
    [missing] = report.failures
    assert (missing.kind, missing.check_kind) == (FailureKind.MISSING_CHECK, CheckKind.ORACLE)
    assert report.reasons == ("no oracle check was run",)


def test_every_reason_line_reads_back_as_the_failure_it_was_written_from():
    """`from_reason` exists for payloads that kept only the text (old workflow histories):
    it must recover what the workflow decides on, for every line the report writes."""
    harbor_first = _report().model_copy(update={"semantics": ("harbor", "envfactory")})
    reports = [
        _report(reference_failure=StepFailure(step=1, exit_code=1), unrunnable=("uv",)),
        harbor_first,
        GateReport(
            env_id="e", verifier_version=1, checks=(_row(CheckKind.ORACLE, "oracle", 1, (1,)),)
        ),
    ]
    failures = [f for r in reports for f in r.failures]
    assert {f.kind for f in failures} == set(FailureKind)
    for f in failures:
        back = GateFailure.from_reason(f.reason)
        assert back.model_dump(exclude={"derived_rows"}) == f.model_dump(exclude={"derived_rows"})


def test_a_line_that_is_no_gate_reason_is_refused():
    with pytest.raises(ValueError, match="not a line of GateReport.reasons"):
        GateFailure.from_reason("the verifier looked at me funny")


def test_a_decision_and_the_state_it_leaves_map_both_ways():
    assert {d: d.state for d in Decision} == {
        Decision.CONFIRM: ReviewState.CONFIRMED,
        Decision.DISMISS: ReviewState.DISMISSED,
    }
    assert all(d.state.decision is d for d in Decision)
    with pytest.raises(ValueError, match="'open' has no decision"):
        _ = ReviewState.OPEN.decision


def test_each_pipeline_role_is_spelled_as_its_settings_section():
    assert {r.value for r in PIPELINE_ROLES} <= set(AgentsSettings.model_fields)
    assert AgentRole.RED_TEAM.value == "red_team"


def test_a_trajectory_stored_under_the_old_red_team_spelling_still_reads():
    old = '{"id": "t-1", "role": "red-team"}'
    assert Trajectory.model_validate_json(old).role is AgentRole.RED_TEAM
    with pytest.raises(ValueError):
        AgentRole("red team")


def test_verify_scope_is_one_enum_that_reads_and_writes_its_values():
    assert VerifyScope("full-state") is VerifyScope.FULL_STATE
    assert f"{VerifyScope.WORKSPACE}" == "workspace" and VerifyScope.WORKSPACE == "workspace"
