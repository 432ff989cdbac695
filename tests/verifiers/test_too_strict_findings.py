"""Too-strict findings, without Docker: a correct alternative the verifier rejected, and a
judge that says it solved the task and got 0, each go to the review queue as a finding
that is never a regression (a confirmed one is a state the verifier should accept) and
whose evidence holds nothing of the reference's result."""

from __future__ import annotations

from envfactory.core.models import (
    AgentRole,
    CheckKind,
    GateCheck,
    GateReport,
    PathChange,
    StateKind,
    StateRef,
    Trajectory,
)
from envfactory.core.models.rows import FindingRule, Rule
from verifiers.evidence import findings_from_report
from verifiers.mining import MiningConfig, rejected_claims

SECRET = "north 17 south 5"  # what the reference's result holds: never in the evidence


def _report(alternative_observed: tuple[int, ...]) -> GateReport:
    return GateReport(
        env_id="env-1",
        verifier_version=1,
        checks=(
            GateCheck(kind=CheckKind.ORACLE, name="oracle", expected=1, observed=(1,)),
            GateCheck(kind=CheckKind.NOOP, name="no-op", expected=0, observed=(0,)),
            GateCheck(
                kind=CheckKind.ALTERNATIVE,
                name="probe:yaml-reserialised@oracle",
                expected=1,
                observed=alternative_observed,
                evidence=(
                    "probe yaml-reserialised: Applied to the oracle state, a correct alternative.",
                    "state: rewrote out/summary.yaml",
                    "exit codes [1]",
                    f"stdout: expected {SECRET}",
                ),
            ),
        ),
    )


def test_a_rejected_alternative_is_a_too_strict_finding_with_no_state_and_no_output() -> None:
    found = [f for f in findings_from_report(_report((0,))) if f.source == "alternative"]
    assert len(found) == 1
    finding = found[0]
    rule = Rule.parse(finding.rule)
    assert rule == Rule(FindingRule.TOO_STRICT, "yaml-reserialised")
    assert not rule.shortcut
    assert finding.state is None
    text = finding.evidence.summary + finding.evidence.verifier_output
    assert "too strict" in text and "exit codes [1]" in text
    assert SECRET not in text and "summary.yaml" not in text


def test_an_accepted_alternative_is_no_finding() -> None:
    assert not [f for f in findings_from_report(_report((1,))) if f.source == "alternative"]


def _judge(tid: str, *, reward: int | None, claimed: bool | None) -> Trajectory:
    return Trajectory(
        id=tid,
        role=AgentRole.JUDGE,
        env_id="env-1",
        final_state=StateRef(image="sha256:" + tid.rjust(64, "0"), kind=StateKind.SOLVER),
        diff=(PathChange(kind="A", path="/app/out/summary.yaml"),),
        claimed_solved=claimed,
        reward=reward,
    )


def test_a_judge_that_claims_success_and_gets_0_is_a_too_strict_question() -> None:
    config = MiningConfig(env_id="env-1", workspace_paths=("/app",), reference_steps=1)
    trajectories = [
        _judge("1", reward=0, claimed=True),
        _judge("2", reward=1, claimed=True),
        _judge("3", reward=0, claimed=False),
        _judge("4", reward=0, claimed=None),
    ]
    found = rejected_claims(trajectories, config)
    assert [f.evidence.trajectory_id for f in found] == ["1"]
    assert Rule.parse(found[0].rule) == Rule(FindingRule.TOO_STRICT, "judge")
    assert found[0].state is not None and found[0].evidence.diff
    assert rejected_claims(trajectories, config)[0].id == found[0].id  # stable: deduplicated


def _rule(family: FindingRule) -> Rule:
    try:
        return Rule(family)
    except ValueError:  # a family that names a detail
        return Rule(family, "x")


def test_every_other_finding_rule_is_a_shortcut() -> None:
    shortcut = {family for family in FindingRule if _rule(family).shortcut}
    assert shortcut == set(FindingRule) - {FindingRule.TOO_STRICT}
