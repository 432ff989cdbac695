"""StoreServices methods that need only the store: mining into the review queue, decisions,
the review poll and the publish guard — on a real SQLite store, no Temporal, no Docker."""

from __future__ import annotations

import json

import pytest

from envfactory.core.errors import Conflict
from envfactory.core.models import (
    AgentRole,
    AuthMethod,
    BuildContext,
    CheckKind,
    Decision,
    EnvironmentSpec,
    EnvStatus,
    FileEntry,
    GateCheck,
    GateReport,
    Mutant,
    MutationScore,
    PathChange,
    ReviewState,
    StateKind,
    StateRef,
    Step,
    ToolCall,
    Trajectory,
    TrajectoryStep,
)
from envfactory.core.settings import Settings
from workflows import types as t
from workflows.models_source import ModelSource
from workflows.store_services import build_services

KEY = "0" * 64


class NoEngine:
    """These methods must not touch Docker: any engine call is a test failure."""

    def __getattr__(self, name: str):
        raise AssertionError(f"the engine was used: {name}")


@pytest.fixture
def services(tmp_path):
    settings = Settings(home=tmp_path / "home")
    svc = build_services(settings, NoEngine(), ModelSource(settings.agents))  # type: ignore[arg-type]
    spec = EnvironmentSpec(
        id="env-1",
        name="demo",
        instruction="fix the pipeline so rows are kept",
        build=BuildContext(files=(FileEntry(path="Dockerfile", key=KEY),)),
        reference_solution=(Step(script="a"), Step(script="b"), Step(script="c")),
        image="sha256:img",
    )
    svc.store.environments.add(spec, EnvStatus.BUILT)
    yield svc
    svc.store.close()


def _gate(svc, *, probe_fooled: bool) -> str:
    noop = GateCheck(kind=CheckKind.NOOP, name="no-op", expected=0, observed=(0, 0, 0))
    oracle = GateCheck(kind=CheckKind.ORACLE, name="oracle", expected=1, observed=(1, 1, 1))
    probe = GateCheck(
        kind=CheckKind.PROBE,
        name="probe:reward-file@no-op",
        expected=0,
        observed=(1, 1, 1) if probe_fooled else (0, 0, 0),
        state=StateRef(image="sha256:probe", kind=StateKind.PROBE),
    )
    report = GateReport(env_id="env-1", verifier_version=1, checks=(oracle, noop, probe))
    return str(svc.store.gate_reports.add(report))


def _red_team(svc, tid: str = "t-red") -> str:
    call = ToolCall(
        id="c",
        name="shell",
        arguments=json.dumps({"command": "echo 1 > /logs/verifier/reward.txt"}),
    )
    traj = Trajectory(
        id=tid,
        role=AgentRole.RED_TEAM,
        env_id="env-1",
        reward=1,
        steps=(TrajectoryStep(index=0, tool_calls=(call,)),),
        final_state=StateRef(image="sha256:red", kind=StateKind.SOLVER),
        diff=(PathChange(path="/logs/verifier/reward.txt", kind="A"),),
    )
    svc.store.trajectories.add(traj)
    return tid


def test_mining_files_findings_and_review_items_once_even_when_run_twice(services):
    report = _gate(services, probe_fooled=True)
    inp = t.MineInput(env_id="env-1", gate_report_id=report, trajectory_ids=(_red_team(services),))
    first = services.mine(inp)
    second = services.mine(inp)
    assert first == second
    rules = {services.store.findings.get(f).rule for f in first.finding_ids}
    assert {"probe:reward-file", "writes-reward-file", "red-team-rewarded"} <= rules
    assert len(services.store.reviews.list(env_id="env-1")) == len(first.open_items) == len(rules)


def test_a_decided_item_is_not_reopened_by_the_next_round_of_mining(services):
    inp = t.MineInput(
        env_id="env-1",
        gate_report_id=_gate(services, probe_fooled=False),
        trajectory_ids=(_red_team(services),),
    )
    items = services.mine(inp).open_items
    decision = t.ReviewDecision(item_id=items[0], decision=Decision.CONFIRM, reviewer="ana")
    services.record_decision(t.DecisionInput(env_id="env-1", decision=decision))
    assert items[0] not in services.mine(inp).open_items


def test_recording_the_same_decision_twice_is_idempotent_but_a_contrary_one_conflicts(services):
    inp = t.MineInput(
        env_id="env-1",
        gate_report_id=_gate(services, probe_fooled=False),
        trajectory_ids=(_red_team(services),),
    )
    item = services.mine(inp).open_items[0]
    confirm = t.ReviewDecision(item_id=item, decision=Decision.CONFIRM, reviewer="ana")
    first = services.record_decision(t.DecisionInput(env_id="env-1", decision=confirm))
    again = services.record_decision(t.DecisionInput(env_id="env-1", decision=confirm))
    assert first == again and first.state == ReviewState.CONFIRMED
    dismiss = confirm.model_copy(update={"decision": Decision.DISMISS, "reviewer": "bob"})
    with pytest.raises(Conflict):
        services.record_decision(t.DecisionInput(env_id="env-1", decision=dismiss))
    [audit] = services.store.reviews.audit(item)  # sent straight to the workflow: no token
    assert (audit.reviewer, audit.auth) == ("ana", AuthMethod.WORKFLOW_UPDATE)


def test_the_review_poll_reports_decisions_made_outside_the_workflow(services):
    inp = t.MineInput(
        env_id="env-1",
        gate_report_id=_gate(services, probe_fooled=False),
        trajectory_ids=(_red_team(services),),
    )
    items = services.mine(inp).open_items
    services.store.reviews.decide(items[0], "carol", Decision.DISMISS, "api")
    known = services.review_state(t.ReviewStateInput(env_id="env-1", item_ids=items))
    assert [(d.item_id, d.state) for d in known.decided] == [(items[0], ReviewState.DISMISSED)]
    assert known.reviewers == ("carol",)


def test_publish_refuses_with_every_reason_when_gates_failed_and_reviews_are_open(services):
    report = _gate(services, probe_fooled=True)
    services.mine(t.MineInput(env_id="env-1", gate_report_id=report, trajectory_ids=()))
    out = services.publish(
        t.PublishInput(env_id="env-1", verifier_version=1, gate_report_id=report)
    )
    assert not out.published
    assert any(r.startswith("gate: probe probe:reward-file@no-op") for r in out.reasons), (
        out.reasons
    )
    assert any("still open" in r for r in out.reasons)
    assert services.store.environments.record("env-1").status == EnvStatus.REJECTED


def test_publish_marks_a_clean_environment_published(services):
    report = _gate(services, probe_fooled=False)
    out = services.publish(
        t.PublishInput(env_id="env-1", verifier_version=1, gate_report_id=report)
    )
    assert out.published and out.reasons == ()
    assert services.store.environments.record("env-1").status == EnvStatus.PUBLISHED


def _gate_with_mutation(svc, killed: int, survived: int) -> str:
    oracle = GateCheck(kind=CheckKind.ORACLE, name="oracle", expected=1, observed=(1,))
    noop = GateCheck(kind=CheckKind.NOOP, name="no-op", expected=0, observed=(0,))
    mutants = tuple(
        Mutant(file="check.py", operator="drop-check", line=i, diff=f"-check {i}\n+pass", status=s)
        for i, s in enumerate(["killed"] * killed + ["survived"] * survived)
    )
    score = MutationScore(killed=killed, survived=survived, mutants=mutants)
    report = GateReport(env_id="env-1", verifier_version=1, checks=(oracle, noop), mutation=score)
    return str(svc.store.gate_reports.add(report))


def test_a_mutation_score_below_the_setting_sends_the_environment_to_review(services):
    low = t.MineInput(
        env_id="env-1", gate_report_id=_gate_with_mutation(services, 1, 3), trajectory_ids=()
    )
    mined = services.mine(low)
    (finding,) = [services.store.findings.get(f) for f in mined.finding_ids]
    assert finding.source == "mutation" and "-check 3" in finding.evidence.verifier_output
    assert len(mined.open_items) == 1
    high = t.MineInput(
        env_id="env-1", gate_report_id=_gate_with_mutation(services, 9, 1), trajectory_ids=()
    )
    assert services.mine(high).finding_ids == ()  # 0.9 >= gates.mutation_min_score (0.8)


def test_too_strict_findings_are_queued_and_a_confirmed_one_is_never_a_regression(services):
    oracle = GateCheck(kind=CheckKind.ORACLE, name="oracle", expected=1, observed=(1,))
    rejected = GateCheck(
        kind=CheckKind.ALTERNATIVE, name="probe:json-reserialised@oracle", expected=1, observed=(0,)
    )
    report = services.store.gate_reports.add(
        GateReport(env_id="env-1", verifier_version=1, checks=(oracle, rejected))
    )
    judge = Trajectory(
        id="t-judge",
        role=AgentRole.JUDGE,
        env_id="env-1",
        reward=0,
        claimed_solved=True,
        final_state=StateRef(image="sha256:judge", kind=StateKind.SOLVER),
        diff=(PathChange(path="/app/out.json", kind="A"),),
    )
    services.store.trajectories.add(judge)
    red = _red_team(services)
    mined = services.mine(
        t.MineInput(env_id="env-1", gate_report_id=str(report), trajectory_ids=(red,))
    )
    rules = {services.store.findings.get(f).rule for f in mined.finding_ids}
    assert {"too-strict:json-reserialised", "too-strict:judge", "red-team-rewarded"} <= rules
    for item in mined.open_items:
        decision = t.ReviewDecision(item_id=item, decision=Decision.CONFIRM, reviewer="ana")
        services.record_decision(t.DecisionInput(env_id="env-1", decision=decision))
    regressions = services._regressions("env-1")
    assert {r.image for r in regressions} == {"sha256:red"}  # the judge's state is not one
