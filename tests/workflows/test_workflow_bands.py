"""SynthesizeEnvironment on the real Temporal dev server (file-backed fake services behind
the real activities): the model pass of shortcut mining, and the solve-rate band."""

from __future__ import annotations

import pytest
from test_workflow_pipeline import Harness
from wf_fakes import Scenario

from envfactory.core.models import Decision, SolveRateBand
from envfactory.core.settings import GateSettings, Settings
from workflows.client import pipeline_config
from workflows.pipeline import SynthesizeEnvironment
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
