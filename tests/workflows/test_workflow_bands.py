"""SynthesizeEnvironment on the real Temporal dev server (file-backed fake services behind
the real activities): the model pass of shortcut mining, and the solve-rate band."""

from __future__ import annotations

import pytest
from test_shortcut_analysis import FINDING, store_services_at
from test_workflow_pipeline import Harness
from wf_fakes import FileServices, Scenario

from envfactory.agents.chat_server import LocalChatServer, text_reply, tool_reply
from envfactory.core.models import (
    AgentRole,
    Decision,
    SolveRateBand,
    StateKind,
    StateRef,
    ToolCall,
    Trajectory,
    TrajectoryStep,
)
from envfactory.core.settings import GateSettings, Settings
from workflows import types as t
from workflows.client import pipeline_config
from workflows.pipeline import SynthesizeEnvironment
from workflows.store_services import StoreServices
from workflows.types import ReviewDecision

pytestmark = pytest.mark.temporal


@pytest.fixture
def harness(temporal_env, loop, tmp_path, queues):
    def make(scenario: Scenario = Scenario(), **config: object) -> Harness:
        return Harness(temporal_env, loop, tmp_path, queues, scenario, **config)

    return make


def _decide(h: Harness, handle, decision: Decision) -> tuple[str, ...]:
    items = h.wait_for_stage(handle, "awaiting-review").open_review_items
    for item in items:
        d = ReviewDecision(item_id=item, decision=decision, reviewer="ana")
        h.loop.run(handle.execute_update(SynthesizeEnvironment.decide, d))
    return items


def _history(h: Harness, handle) -> tuple[str, ...]:
    return h.loop.run(handle.query(SynthesizeEnvironment.status)).history


def test_model_findings_wait_for_review_beside_the_rules_and_a_dismissal_publishes(harness):
    with harness(Scenario(judge_rewards=[1, 0], analyst_finds=True)) as h:
        handle = h.start("seed-analyst")
        items = _decide(h, handle, Decision.DISMISS)
        result = h.result(handle)
        history = _history(h, handle)
    assert items == (f"item-model-{handle.id}-judge-0",)
    assert result.outcome == "published"
    assert [c["call"] for c in h.services.calls()].index("analyze") > [
        c["call"] for c in h.services.calls()
    ].index("mine")
    assert any(line.startswith("analysis: 1 model finding(s), 1 open") for line in history)


def test_an_analyst_that_gives_no_valid_report_is_logged_and_the_pipeline_goes_on(harness):
    with harness(Scenario(judge_rewards=[1, 1], analyst_fails=True)) as h:
        handle = h.start("seed-analyst-broken")
        result = h.result(handle)
        history = _history(h, handle)
    assert result.outcome == "published"
    failed = [line for line in history if line.startswith("analysis failed: ")]
    assert len(failed) == 2 and all("no valid report" in line for line in failed)


def test_a_rate_above_the_band_confirmed_by_a_reviewer_ends_too_easy_without_a_patch_round(
    harness,
):
    band = SolveRateBand(max=0.5)
    with harness(Scenario(judge_rewards=[1, 1]), solve_rate_band=band) as h:
        handle = h.start("seed-easy")
        items = _decide(h, handle, Decision.CONFIRM)
        result = h.result(handle)
        status = h.loop.run(handle.query(SynthesizeEnvironment.status))
    assert items == (f"item-too-easy-{result.env_id}",)
    assert status.solve_rate_band == band and status.outcome == "too_easy"
    assert result.outcome == "too_easy" and result.solve_rate == 1.0
    assert "band [0, 0.5]" in result.reasons[0]
    assert len(h.services.calls("synthesize_verifier")) == 1  # about the task, not the verifier
    assert h.services.calls("publish") == []
    assert h.services.calls("set_status")[-1]["status"] == "too_easy"


def test_a_reviewer_who_dismisses_the_too_easy_flag_lets_the_task_be_published(harness):
    with harness(Scenario(judge_rewards=[1, 1]), solve_rate_band=SolveRateBand(max=0.5)) as h:
        handle = h.start("seed-easy-override")
        _decide(h, handle, Decision.DISMISS)
        result = h.result(handle)
    assert result.outcome == "published"


def test_a_rate_below_the_band_is_unproven(harness):
    with harness(Scenario(judge_rewards=[1, 0]), solve_rate_band=SolveRateBand(min=0.75)) as h:
        result = h.result(h.start("seed-below"))
    assert result.outcome == "unproven" and result.solve_rate == 0.5
    assert "below the band" in result.reasons[0]
    assert h.services.calls("mine") == [] and h.services.calls("publish") == []


def test_the_seeds_own_judges_and_band_replace_the_configured_ones(harness):
    scenario = Scenario(
        judge_rewards=[1, 1, 1], seed_judges=3, seed_band=SolveRateBand(min=0.0, max=0.9)
    )
    with harness(scenario, judges=2) as h:
        handle = h.start("seed-own-band")
        items = _decide(h, handle, Decision.CONFIRM)
        result = h.result(handle)
    judges = [c for c in h.services.calls("run_agent") if "-judge-" in c["trajectory"]]
    assert len(judges) == 3
    assert items and result.outcome == "too_easy" and "band [0, 0.9]" in result.reasons[0]


def test_the_settings_band_and_k_reach_the_pipeline_config():
    gates = GateSettings(judges=5, min_solve_rate=0.2, max_solve_rate=0.8)
    config = pipeline_config(Settings(gates=gates))
    assert config.judges == 5 and config.solve_rate_band == SolveRateBand(min=0.2, max=0.8)


class RealAnalyst(FileServices):
    """Fake services, except `analyze`: the real StoreServices method, its analyst talking
    to the local chat server over HTTP (the judges' trajectories copied into its store)."""

    def __init__(self, root, real: StoreServices) -> None:
        super().__init__(root)
        self.real = real

    def analyze(self, inp: t.AnalyzeInput) -> t.AnalyzeOutcome:
        for tid in inp.trajectory_ids:
            call = ToolCall(id="c", name="shell", arguments='{"command": "touch out.csv"}')
            self.real.store.trajectories.add(
                Trajectory(
                    id=tid,
                    role=AgentRole.JUDGE,
                    env_id="env-1",
                    reward=1,
                    steps=(TrajectoryStep(index=0, tool_calls=(call,)),),
                    final_state=StateRef(image="sha256:j", kind=StateKind.SOLVER),
                )
            )
        return self.real.analyze(inp.model_copy(update={"env_id": "env-1"}))


def _with_real_analyst(h: Harness, tmp_path, url: str) -> None:
    real = store_services_at(
        tmp_path / "real",
        {
            "shortcut_analyst": {"backend": "openai", "model": "m", "base_url": url},
            "analyst_attempts": 2,
        },
    )
    h.services = RealAnalyst(h.services.root, real)


def test_on_the_chat_server_a_malformed_analyst_is_recorded_and_the_pipeline_publishes(
    harness, tmp_path
):
    replies = [tool_reply(("finish", '{"findings": [')), text_reply("no tool call")]
    with LocalChatServer(replies) as server:
        h = harness(Scenario(judge_rewards=[1, 0]))
        _with_real_analyst(h, tmp_path, server.url)
        with h:
            handle = h.start("seed-real-analyst-broken")
            result = h.result(handle)
            history = _history(h, handle)
        requests = len(server.requests)
    assert result.outcome == "published" and requests == 2
    (failed,) = [line for line in history if line.startswith("analysis failed: ")]
    assert "turn budget spent" in failed
    real = h.services.real  # type: ignore[attr-defined]
    (analysis,) = real.store.trajectories.list(role=AgentRole.SHORTCUT_ANALYST.value)
    assert analysis.stop_reason == "budget"


def test_on_the_chat_server_an_analyst_finding_waits_for_review_found_by_the_model(
    harness, tmp_path
):
    with LocalChatServer([tool_reply(("finish", {"findings": [FINDING]}))]) as server:
        h = harness(Scenario(judge_rewards=[1, 0]))
        _with_real_analyst(h, tmp_path, server.url)
        with h:
            handle = h.start("seed-real-analyst")
            (item,) = h.wait_for_stage(handle, "awaiting-review").open_review_items
            real = h.services.real  # type: ignore[attr-defined]
            finding = real.store.findings.get(real.store.reviews.get(item).finding_id)
            d = ReviewDecision(item_id=item, decision=Decision.DISMISS, reviewer="ana")
            h.loop.run(handle.execute_update(SynthesizeEnvironment.decide, d))
            result = h.result(handle)
    assert finding.found_by == "model" and finding.weakness == FINDING["weakness"]
    assert result.outcome == "published"
