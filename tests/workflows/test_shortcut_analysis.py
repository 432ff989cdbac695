"""The shortcut analyst behind `StoreServices.analyze`: a real SQLite store, the project's
local chat-completions server (a real HTTP server the `openai` client talks to) or the
scripted backend — no Temporal, no Docker. And the solve-rate band's side of the store:
the rate written into the gate report, the too-easy flag and the publish guard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envfactory.agents.chat_server import LocalChatServer, text_reply, tool_reply
from envfactory.agents.scriptbook import ScriptBook
from envfactory.core.models import (
    AgentRole,
    BuildContext,
    CheckKind,
    Decision,
    EnvironmentSpec,
    EnvStatus,
    FileEntry,
    GateCheck,
    GateReport,
    PathChange,
    ReviewState,
    SolveRate,
    SolveRateBand,
    StateKind,
    StateRef,
    Step,
    TaskSeed,
    ToolCall,
    Trajectory,
    TrajectoryStep,
    Verifier,
)
from envfactory.core.models.verifiers import Provenance
from envfactory.core.settings import Settings
from workflows import types as t
from workflows.models_source import ModelSource
from workflows.store_services import StoreServices, build_services

KEY = "0" * 64
SECRET_STEP = "sed -i s/REFERENCE-ONLY-FIX/x/ /workspace/etl.py"
VERIFIER_TEXT = "test -s /workspace/out.csv  # checks only that the file exists"
TITLE = "ETL drops rows"


class NoEngine:
    """Nothing here may touch Docker: any engine call is a test failure."""

    def __getattr__(self, name: str):
        raise AssertionError(f"the engine was used: {name}")


def store_services_at(
    tmp_path: Path, agents: dict, scripts: ScriptBook | None = None
) -> StoreServices:
    settings = Settings(home=tmp_path / "home", agents=agents)
    models = ModelSource(settings.agents, scripts=scripts)
    svc = build_services(settings, NoEngine(), models)  # type: ignore[arg-type]
    seed = TaskSeed(id="seed-1", title=TITLE, description="d", domain="data", content_hash=KEY)
    svc.store.seeds.add(seed)
    spec = EnvironmentSpec(
        id="env-1",
        seed_id="seed-1",
        name="etl",
        instruction="make the nightly ETL keep every row",
        build=BuildContext(files=(FileEntry(path="Dockerfile", key=KEY),)),
        reference_solution=(Step(script=SECRET_STEP),),
        image="sha256:img",
    )
    svc.store.environments.add(spec, EnvStatus.BUILT)
    check = FileEntry(path="check.sh", key=svc.artifacts.put_bytes(VERIFIER_TEXT.encode()))
    svc.store.verifiers.add(
        Verifier(
            env_id="env-1", files=(check,), entry="bash check.sh", provenance=Provenance(author="t")
        )
    )
    return svc


def _rewarded_judge(svc: StoreServices, tid: str = "t-judge-0") -> str:
    call = ToolCall(
        id="c", name="shell", arguments=json.dumps({"command": "touch /workspace/out.csv"})
    )
    svc.store.trajectories.add(
        Trajectory(
            id=tid,
            role=AgentRole.JUDGE,
            env_id="env-1",
            reward=1,
            steps=(TrajectoryStep(index=0, tool_calls=(call,), observations=("exit_code: 0",)),),
            final_state=StateRef(image="sha256:judge", kind=StateKind.SOLVER),
            diff=(PathChange(path="/workspace/out.csv", kind="A"),),
        )
    )
    return tid


def _openai(url: str) -> dict:
    return {"shortcut_analyst": {"backend": "openai", "model": "analyst-m", "base_url": url}}


FINDING = {
    "rule": "creates-empty-output",
    "rationale": "the judge touched an empty out.csv instead of fixing the ETL",
    "weakness": "check.sh only tests that out.csv exists, not its rows",
    "step_indexes": [0],
}


def test_a_finding_the_analyst_reports_lands_in_the_review_queue_found_by_the_model(tmp_path):
    with LocalChatServer([tool_reply(("finish", {"findings": [FINDING]}))]) as server:
        svc = store_services_at(tmp_path, _openai(server.url))
        inp = t.AnalyzeInput(
            env_id="env-1", verifier_version=1, trajectory_ids=(_rewarded_judge(svc),)
        )
        first = svc.analyze(inp)
        again = svc.analyze(inp)  # a retried activity reads the stored analysis back
        asked = json.dumps(server.requests)
    assert first == again and not first.failures and len(server.requests) == 1
    (finding,) = svc.store.findings.list(found_by="model")
    assert (finding.found_by, finding.rule) == ("model", "model:creates-empty-output")
    assert (
        finding.weakness == FINDING["weakness"] and FINDING["weakness"] in finding.evidence.summary
    )
    assert finding.evidence.commands and "touch /workspace/out.csv" in finding.evidence.commands[0]
    (item,) = svc.store.reviews.list(env_id="env-1")
    assert item.finding_id == finding.id and item.state == ReviewState.OPEN
    assert first.open_items == (item.id,)
    # the analyst read the verifier and the trajectory, never the reference solution
    assert "checks only that the file exists" in asked and "touch /workspace/out.csv" in asked
    assert "REFERENCE-ONLY-FIX" not in asked
    analyses = svc.store.trajectories.list(env_id="env-1", role=AgentRole.SHORTCUT_ANALYST.value)
    assert len(analyses) == 1 and analyses[0].stop_reason == "finished"


def test_malformed_analyst_output_is_retried_then_recorded_as_a_failure_not_raised(tmp_path):
    replies = [
        tool_reply(("finish", '{"findings": [')),  # not JSON
        tool_reply(("finish", {"findings": [{"rule": "Not A Rule!", "rationale": "x"}]})),
        text_reply("Looks honest to me."),  # no tool call at all
        tool_reply(("finish", {"findings": [FINDING]})),  # too late: 3 attempts
    ]
    with LocalChatServer(replies) as server:
        svc = store_services_at(tmp_path, {**_openai(server.url), "analyst_attempts": 3})
        out = svc.analyze(
            t.AnalyzeInput(
                env_id="env-1", verifier_version=1, trajectory_ids=(_rewarded_judge(svc),)
            )
        )
        requests = len(server.requests)
    assert requests == 3
    assert out.finding_ids == () and out.open_items == ()
    (why,) = out.failures
    assert why.startswith("t-judge-0: ") and "turn budget spent" in why
    assert svc.store.findings.list(env_id="env-1") == []
    (analysis,) = svc.store.trajectories.list(role=AgentRole.SHORTCUT_ANALYST.value)
    assert analysis.stop_reason == "budget" and len(analysis.steps) == 3
    errors = [s.error or "" for s in analysis.steps]
    assert "not valid JSON" in errors[0] and "rule" in errors[1]


def test_a_step_the_trajectory_does_not_have_is_refused_and_asked_again(tmp_path):
    wrong = {**FINDING, "step_indexes": [7]}
    replies = [
        tool_reply(("finish", {"findings": [wrong]})),
        tool_reply(("finish", {"findings": [FINDING]})),
    ]
    with LocalChatServer(replies) as server:
        svc = store_services_at(tmp_path, _openai(server.url))
        out = svc.analyze(
            t.AnalyzeInput(
                env_id="env-1", verifier_version=1, trajectory_ids=(_rewarded_judge(svc),)
            )
        )
        second_request = json.dumps(server.requests[1]["messages"][2:])
    assert len(out.finding_ids) == 1 and "not steps of the trajectory" in second_request


def test_a_scripted_analyst_reads_nothing_without_a_script(tmp_path):
    svc = store_services_at(tmp_path, {}, scripts=ScriptBook((tmp_path / "no-scripts",)))
    out = svc.analyze(
        t.AnalyzeInput(env_id="env-1", verifier_version=1, trajectory_ids=(_rewarded_judge(svc),))
    )
    assert out.skipped == ("t-judge-0",) and out.finding_ids == () and out.failures == ()


def test_a_scripted_analyst_reports_what_its_script_says(tmp_path):
    scripts = tmp_path / "scripts" / "etl"
    scripts.mkdir(parents=True)
    script = {
        "role": "shortcut_analyst",
        "seed": TITLE,
        "turns": [{"calls": [{"tool": "finish", "args": {"findings": [FINDING]}}]}],
    }
    (scripts / "shortcut_analyst.yaml").write_text(json.dumps(script))
    svc = store_services_at(tmp_path, {}, scripts=ScriptBook((tmp_path / "scripts",)))
    out = svc.analyze(
        t.AnalyzeInput(env_id="env-1", verifier_version=1, trajectory_ids=(_rewarded_judge(svc),))
    )
    (fid,) = out.finding_ids
    assert svc.store.findings.get(fid).found_by == "model"


def test_only_rewarded_solver_trajectories_are_analysed(tmp_path):
    with LocalChatServer([]) as server:  # any request would get a 400 and a failure
        svc = store_services_at(tmp_path, _openai(server.url))
        tid = _rewarded_judge(svc)
        svc.store.trajectories.set_reward(tid, 0)
        out = svc.analyze(t.AnalyzeInput(env_id="env-1", verifier_version=1, trajectory_ids=(tid,)))
        assert server.requests == []
    assert out == t.AnalyzeOutcome()


# -- the solve-rate band in the store ----------------------------------------------------


def _report(svc: StoreServices, solve: SolveRate | None = None) -> str:
    checks = (
        GateCheck(kind=CheckKind.ORACLE, name="oracle", expected=1, observed=(1,)),
        GateCheck(kind=CheckKind.NOOP, name="no-op", expected=0, observed=(0,)),
    )
    report = GateReport(env_id="env-1", verifier_version=1, checks=checks, solve_rate=solve)
    return str(svc.store.gate_reports.add(report))


def _publish(svc: StoreServices, report_id: str) -> t.Published:
    return svc.publish(t.PublishInput(env_id="env-1", verifier_version=1, gate_report_id=report_id))


def test_scoring_writes_the_solve_rate_and_its_band_into_the_gate_report(tmp_path):
    svc = store_services_at(tmp_path, {})
    report_id = _report(svc)
    tid = _rewarded_judge(svc)  # no final state here: scored 0 without Docker
    svc.store.trajectories.add(
        svc.store.trajectories.get(tid).model_copy(update={"id": "t2", "final_state": None})
    )
    band = SolveRateBand(min=0.25, max=0.75)
    out = svc.score(
        t.ScoreInput(
            env_id="env-1",
            verifier_version=1,
            trajectory_ids=("t2",),
            gate_report_id=report_id,
            judges=4,
            band=band,
        )
    )
    stored = svc.store.gate_reports.get(int(report_id)).solve_rate
    assert out.solve_rate == stored
    assert stored is not None and (stored.judges, stored.solved, stored.verdict) == (
        4,
        0,
        "unproven",
    )
    assert stored.band == band


def test_a_rate_above_the_band_is_published_only_once_a_reviewer_overrides_the_flag(tmp_path):
    svc = store_services_at(tmp_path, {})
    solve = SolveRate.measure(2, 2, SolveRateBand(max=0.5))
    report_id = _report(svc, solve)
    refused = _publish(svc, report_id)
    assert not refused.published and "no reviewer overrode" in " ".join(refused.reasons)
    flag = svc.flag_too_easy(
        t.FlagInput(env_id="env-1", gate_report_id=report_id, solve_rate=solve)
    )
    assert flag == svc.flag_too_easy(  # idempotent under retry
        t.FlagInput(env_id="env-1", gate_report_id=report_id, solve_rate=solve)
    )
    assert svc.store.findings.get(flag.finding_id).rule == "solve-rate:too-easy"
    decision = t.ReviewDecision(item_id=flag.item_id, decision=Decision.DISMISS, reviewer="ana")
    svc.record_decision(t.DecisionInput(env_id="env-1", decision=decision))
    assert _publish(svc, report_id).published


def test_a_rate_below_the_band_is_never_published(tmp_path):
    svc = store_services_at(tmp_path, {})
    report_id = _report(svc, SolveRate.measure(4, 1, SolveRateBand(min=0.5)))
    refused = _publish(svc, report_id)
    assert not refused.published and "unproven" in " ".join(refused.reasons)


@pytest.mark.parametrize(
    ("constraints", "judges", "band"),
    [
        ({}, None, None),
        ({"judges": 5, "max_solve_rate": 0.6}, 5, SolveRateBand(min=0.0, max=0.6)),
    ],
)
def test_research_hands_the_workflow_the_seeds_own_judges_and_band(
    tmp_path, constraints, judges, band
):
    svc = store_services_at(tmp_path, {})
    seed = svc.store.seeds.get("seed-1")
    with svc.store.session() as tx:  # a second seed with these constraints
        tx.seeds.add(
            seed.model_copy(
                update={
                    "id": "seed-2",
                    "content_hash": "1" * 64,
                    "constraints": seed.constraints.model_copy(update=constraints),
                }
            )
        )
    ref = svc.research(t.ResearchInput(seed_id="seed-2", env_id="env-1"))  # stored: no agent
    assert (ref.judges, ref.band) == (judges, band)
