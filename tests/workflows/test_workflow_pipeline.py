"""SynthesizeEnvironment on the real Temporal dev server, over file-backed fake services.

Fake *services* sit behind the real activities (heartbeats, error translation and all),
so what is under test is the workflow's ordering, its review protocol and its failure
handling — not the components, which have their own tests.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from temporalio.client import WorkflowFailureError, WorkflowHistory, WorkflowUpdateFailedError
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError
from temporalio.worker import Replayer
from wf_fakes import FileServices, Scenario

from envfactory.core.models import Decision, ReviewItem, ReviewState
from envfactory.core.settings import Settings
from workflows import client as wfclient
from workflows.activities import PipelineActivities
from workflows.pipeline import SynthesizeEnvironment
from workflows.types import PipelineConfig, ReviewDecision, SynthesisInput
from workflows.worker import WORKFLOWS, build_workers, run_workers

pytestmark = pytest.mark.temporal


def _config(queues: tuple[str, str], **kw: object) -> PipelineConfig:
    defaults: dict[str, object] = {"heartbeat_timeout_s": 5, "max_attempts": 3}
    return PipelineConfig(
        task_queue_agents=queues[0], task_queue_sandbox=queues[1], **{**defaults, **kw}
    )


class Harness:
    """An in-process worker over FileServices, started for the duration of a test."""

    def __init__(self, env, loop, tmp: Path, queues, scenario: Scenario, **config: object):
        self.env, self.loop = env, loop
        (tmp / "scenario.json").write_text(scenario.model_dump_json())
        self.services = FileServices(tmp)
        self.config = _config(queues, **config)
        self._stop = asyncio.Event()
        self._task = None

    async def _start(self) -> None:
        acts = PipelineActivities(self.services)
        workers = build_workers(self.env.client, acts, self.config)
        self._task = asyncio.create_task(run_workers(workers, self._stop))

    def __enter__(self) -> Harness:
        self.loop.run(self._start())
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:
            self._stop.set()
            await self._task

        self.loop.run(stop())

    def start(self, seed_id: str):
        wid = f"synthesize-{seed_id}-{uuid.uuid4().hex[:6]}"
        return self.loop.run(
            self.env.client.start_workflow(
                SynthesizeEnvironment.run,
                SynthesisInput(seed_id=seed_id, config=self.config),
                id=wid,
                task_queue=self.config.task_queue_agents,
            )
        )

    def result(self, handle, timeout: float = 120):
        return self.loop.run(handle.result(), timeout)

    def wait_for_stage(self, handle, stage: str, timeout: float = 60):
        async def poll():
            while True:
                status = await handle.query(SynthesizeEnvironment.status)
                if status.stage == stage:
                    return status
                await asyncio.sleep(0.1)

        return self.loop.run(asyncio.wait_for(poll(), timeout))


@pytest.fixture
def harness(temporal_env, loop, tmp_path, queues):
    def make(scenario: Scenario = Scenario(), **config: object) -> Harness:
        return Harness(temporal_env, loop, tmp_path, queues, scenario, **config)

    return make


def test_a_solvable_seed_runs_every_box_in_order_and_is_published(harness):
    with harness(Scenario(judge_rewards=[1, 0])) as h:
        handle = h.start("seed-ok")
        result = h.result(handle)
        status = h.loop.run(handle.query(SynthesizeEnvironment.status))
    assert result.outcome == "published"
    assert result.solve_rate == 0.5
    order = [c["call"] for c in h.services.calls()]
    assert order == [
        "research",
        "build",
        "build_cleanup",
        "set_status",
        "run_agent",
        "run_agent",
        "run_agent",  # 2 judges, 1 red team
        "synthesize_verifier",
        "run_gates",
        "score",
        "mine",
        "analyze",  # the model pass, after the rules
        "publish",
    ]
    assert status.stage == "done" and status.outcome == "published"
    assert h.services.stored("published") == [result.env_id]


def test_a_task_no_judge_solved_is_marked_unproven_and_not_published(harness):
    with harness(Scenario(judge_rewards=[0, 0])) as h:
        result = h.result(h.start("seed-hard"))
    assert result.outcome == "unproven"
    assert h.services.stored("published") == []
    [status] = [c for c in h.services.calls("set_status") if c["status"] == "unproven"]
    assert status["env"] == result.env_id


def test_a_bad_seed_fails_fast_as_non_retryable_with_a_clear_reason(harness):
    with harness(Scenario(invalid_seeds=["seed-bad"])) as h:
        with pytest.raises(WorkflowFailureError) as info:
            h.result(h.start("seed-bad"))
    cause = info.value.cause
    assert isinstance(cause, ApplicationError) and cause.non_retryable
    assert cause.type == "InvalidSeed"
    assert "seed.yaml: description: must not be empty" in cause.message
    assert len(h.services.calls("research")) == 1  # not retried
    assert h.services.calls("build") == []


def test_hard_gate_failures_trigger_patch_rounds_with_the_reasons_then_publish(harness):
    with harness(Scenario(hard_gate_failures=1)) as h:
        result = h.result(h.start("seed-patch"))
    assert result.outcome == "published" and result.verifier_version == 2
    rounds = h.services.calls("synthesize_verifier")
    assert [r["round"] for r in rounds] == [0, 1]
    assert rounds[1]["reasons"] == ["no-op no-op: expected 0, got [1, 1, 1]"]


def test_a_failed_shortcut_probe_is_left_to_review_and_never_starts_a_patch_round(harness):
    """The workflow decides on the failure's kind (a probe), not on its reason's wording."""
    with harness(Scenario(probe_gate_failures=1)) as h:
        result = h.result(h.start("seed-probe"))
    assert len(h.services.calls("synthesize_verifier")) == 1
    assert [c["call"] for c in h.services.calls()][-3:] == ["mine", "analyze", "set_status"]
    assert result.outcome == "rejected"  # nothing was confirmed to patch with: gates stand
    assert result.reasons == ("probe reward-file@no-op: expected 0, got [1, 1, 1]",)


def test_a_patch_round_is_told_only_the_hard_failures(harness):
    with harness(Scenario(hard_gate_failures=1, probe_gate_failures=1)) as h:
        result = h.result(h.start("seed-hard-and-probe"))
    assert result.outcome == "published" and result.verifier_version == 2
    rounds = h.services.calls("synthesize_verifier")
    assert rounds[1]["reasons"] == ["no-op no-op: expected 0, got [1, 1, 1]"]


def test_a_verifier_still_failing_after_the_last_patch_round_is_rejected(harness):
    with harness(Scenario(hard_gate_failures=9), max_patch_rounds=1) as h:
        result = h.result(h.start("seed-never"))
    assert result.outcome == "rejected"
    assert result.reasons[0] == "still failing after 1 patch round(s)"
    assert len(h.services.calls("synthesize_verifier")) == 2
    assert h.services.stored("published") == []


def test_a_review_decision_resumes_a_waiting_workflow_and_patches_with_the_evidence(harness):
    with harness(Scenario(red_team_shortcut_until=2)) as h:
        handle = h.start("seed-review")
        status = h.wait_for_stage(handle, "awaiting-review")
        [item] = status.open_review_items
        decision = ReviewDecision(item_id=item, decision=Decision.CONFIRM, reviewer="alice")
        recorded = h.loop.run(handle.execute_update(SynthesizeEnvironment.decide, decision))
        result = h.result(handle)
    assert recorded.state.value == "confirmed"
    assert result.outcome == "published" and result.verifier_version == 2
    patch = h.services.calls("synthesize_verifier")[1]
    assert patch["confirmed"] == [recorded.finding_id]  # the evidence, never the solution
    assert len(h.services.calls("record_decision")) == 1


def test_a_decision_for_the_wrong_state_is_refused_before_it_reaches_history(harness):
    with harness(Scenario(red_team_shortcut_until=2)) as h:
        handle = h.start("seed-refuse")
        status = h.wait_for_stage(handle, "awaiting-review")
        wrong = ReviewDecision(item_id="item-nope", decision=Decision.DISMISS, reviewer="bob")
        with pytest.raises(WorkflowUpdateFailedError) as info:
            h.loop.run(handle.execute_update(SynthesizeEnvironment.decide, wrong))
        assert "not open here" in str(info.value.cause)
        [item] = status.open_review_items
        right = ReviewDecision(item_id=item, decision=Decision.DISMISS, reviewer="bob")
        h.loop.run(handle.execute_update(SynthesizeEnvironment.decide, right))
        result = h.result(handle)
        history = h.loop.run(handle.fetch_history())
    assert result.outcome == "published" and result.verifier_version == 1
    accepted = [
        e
        for e in history.events
        if e.HasField("workflow_execution_update_accepted_event_attributes")
    ]
    assert len(accepted) == 1  # the refused update left no trace in history
    assert [(c["item"], c["decision"]) for c in h.services.calls("record_decision")] == [
        (item, "dismiss")
    ]


def test_the_signal_fallback_decides_an_open_item(harness):
    with harness(Scenario(red_team_shortcut_until=2)) as h:
        handle = h.start("seed-signal")
        [item] = h.wait_for_stage(handle, "awaiting-review").open_review_items
        decision = ReviewDecision(item_id=item, decision=Decision.DISMISS, reviewer="carol")
        h.loop.run(handle.signal(SynthesizeEnvironment.decide_signal, decision))
        result = h.result(handle)
    assert result.outcome == "published"
    assert [c["decision"] for c in h.services.calls("record_decision")] == ["dismiss"]


HISTORIES = Path(__file__).parent / "histories"


def test_a_fresh_history_replays_deterministically(harness, loop):
    """Also re-records the stored history when ENVFACTORY_RECORD_HISTORIES=1 (on purpose only)."""
    with harness(Scenario(red_team_shortcut_until=3, hard_gate_failures=1)) as h:
        handle = h.start("seed-replay")
        [item] = h.wait_for_stage(handle, "awaiting-review").open_review_items
        decision = ReviewDecision(item_id=item, decision=Decision.CONFIRM, reviewer="alice")
        h.loop.run(handle.execute_update(SynthesizeEnvironment.decide, decision))
        h.result(handle)
        history = loop.run(handle.fetch_history())
    replayer = Replayer(workflows=WORKFLOWS, data_converter=pydantic_data_converter)
    replay = loop.run(replayer.replay_workflow(history, raise_on_replay_failure=False))
    assert replay.replay_failure is None
    assert len(history.events) > 30  # research, build, agents, 2+ rounds, review, publish
    if os.environ.get("ENVFACTORY_RECORD_HISTORIES") == "1":
        (HISTORIES / f"{handle.id}.json").write_text(history.to_json())  # named by workflow id


def test_recorded_histories_still_replay_with_todays_workflow_code(loop):
    """A history recorded by an earlier version of the code: a non-deterministic change to
    the workflows (reordered activities, a new timer without a patch) fails here."""
    files = sorted(HISTORIES.glob("*.json"))
    assert files, f"no recorded histories under {HISTORIES}"
    replayer = Replayer(workflows=WORKFLOWS, data_converter=pydantic_data_converter)
    for path in files:
        history = WorkflowHistory.from_json(path.stem, path.read_text())  # ids derive from it
        replay = loop.run(replayer.replay_workflow(history, raise_on_replay_failure=False))
        assert replay.replay_failure is None, f"{path.name}: {replay.replay_failure}"


def test_submitting_the_same_seed_twice_starts_one_pipeline(harness, loop):
    with harness(Scenario()) as h:
        first = loop.run(wfclient.astart_synthesis(h.env.client, "seed-twice", h.config))
        second = loop.run(wfclient.astart_synthesis(h.env.client, "seed-twice", h.config))
        h.result(first)
        again = h.result(second)
    assert first.id == second.id == "synthesize-seed-twice"
    assert again.outcome == "published"  # the second handle is typed: it yields the result model
    assert len(h.services.calls("research")) == 1


def test_validate_tasks_publishes_sound_imports_and_rejects_broken_ones_with_reasons(harness, loop):
    with harness(Scenario(failing_envs=["env-broken-always-pass"])) as h:
        handle = loop.run(
            wfclient.astart_validation(
                h.env.client,
                ["env-sound", "env-broken-always-pass"],
                h.config,
                f"validate-{uuid.uuid4().hex[:6]}",
            )
        )
        result = h.result(handle)
    by_env = {r.env_id: r for r in result.results}
    assert by_env["env-sound"].outcome == "published"
    assert by_env["env-broken-always-pass"].outcome == "rejected"
    assert by_env["env-broken-always-pass"].reasons == ("no-op no-op: expected 0, got [1, 1, 1]",)
    assert h.services.stored("published") == ["env-sound"]
    assert h.services.calls("research") == [] and h.services.calls("run_agent") == []


def test_validate_tasks_reports_each_tasks_progress_and_files_its_gate_findings(harness, loop):
    ids = ["env-sound", "env-broken-always-pass"]
    with harness(Scenario(failing_envs=["env-broken-always-pass"])) as h:
        first = loop.run(wfclient.astart_validation(h.env.client, ids, h.config))
        again = loop.run(wfclient.astart_validation(h.env.client, ids[::-1], h.config))
        h.result(first)
        status = loop.run(wfclient.validation_status(h.env.client, first.id))
    assert first.id == again.id == wfclient.validation_id(ids)  # one run for one set of tasks
    assert status.done and [t.env_id for t in status.tasks] == ids
    by_env = {t.env_id: t for t in status.tasks}
    assert (by_env["env-sound"].outcome, by_env["env-sound"].gate_report_id) == (
        "published",
        "gate-env-sound-v1",
    )
    assert by_env["env-broken-always-pass"].reasons == ("no-op no-op: expected 0, got [1, 1, 1]",)
    assert [c["trajectories"] for c in h.services.calls("mine")] == [[], []]  # the report's only
    statuses = [(c["env"], c["status"]) for c in h.services.calls("set_status")]
    assert sorted(statuses) == sorted(
        [
            ("env-sound", "built"),
            ("env-broken-always-pass", "built"),
            ("env-broken-always-pass", "rejected"),
        ]
    )


def test_a_decision_stored_but_never_delivered_is_found_by_the_review_poll(harness):
    with harness(Scenario(red_team_shortcut_until=2), review_poll_s=1) as h:
        handle = h.start("seed-undelivered")
        [item] = h.wait_for_stage(handle, "awaiting-review").open_review_items
        h.services.decide_in_store(item, "confirm", "dana")  # the API stored it; notify failed
        result = h.result(handle)
        status = h.loop.run(handle.query(SynthesizeEnvironment.status))
    assert result.outcome == "published" and result.verifier_version == 2
    assert [(d.item_id, d.reviewer) for d in status.decided] == [(item, "dana")]
    assert h.services.calls("record_decision") == []  # nothing recorded twice


def test_one_crashed_judge_is_recorded_as_failed_and_the_others_carry_on(harness):
    with harness(Scenario(crashing_judges=[1], judge_rewards=[1, 0])) as h:
        handle = h.start("seed-one-crash")
        result = h.result(handle)
        status = h.loop.run(handle.query(SynthesizeEnvironment.status))
    assert result.outcome == "published" and result.solve_rate == 0.5
    [crashed] = [a for a in status.agents if a.failed]
    assert (crashed.kind, crashed.index) == ("judge", 1)
    assert (
        len([c for c in h.services.calls("run_agent") if c["trajectory"].endswith("judge-1")]) == 3
    )


def test_when_every_judge_crashes_the_pipeline_fails_loudly_instead_of_calling_it_unproven(harness):
    with harness(Scenario(crashing_judges=[0, 1])) as h:
        with pytest.raises(WorkflowFailureError) as info:
            h.result(h.start("seed-all-crash"))
    assert "the Docker daemon went away" in info.value.cause.message
    assert h.services.calls("synthesize_verifier") == []
    assert [c["status"] for c in h.services.calls("set_status")] == ["built", "rejected"]


def test_a_box_longer_than_its_heartbeat_timeout_still_completes_first_time(harness):
    """The activity layer heartbeats for the whole call, cleanup included."""
    with harness(Scenario(slow_build_s=3, slow_cleanup_s=3), heartbeat_timeout_s=2) as h:
        result = h.result(h.start("seed-slow"))
    assert result.outcome == "published"
    assert len(h.services.calls("build")) == 1 and len(h.services.calls("build_cleanup")) == 1


def test_a_cancelled_pipeline_waits_for_the_running_box_to_finish_its_cleanup(harness):
    with harness(Scenario(slow_build_s=2, slow_cleanup_s=3), heartbeat_timeout_s=2) as h:
        handle = h.start("seed-cancel")
        h.wait_for_stage(handle, "build")
        time.sleep(0.5)  # the build is running
        h.loop.run(handle.cancel())
        with pytest.raises(WorkflowFailureError) as info:
            h.result(handle)
        history = h.loop.run(handle.fetch_history())
        cleanup = h.services.calls("build_cleanup")
    assert "cancel" in str(info.value.cause).lower()
    assert len(cleanup) == 1  # the cleanup ran to its end, once
    kinds = [e.WhichOneof("attributes") for e in history.events]
    assert "activity_task_canceled_event_attributes" in kinds or (
        "activity_task_completed_event_attributes" in kinds
    )


class _Envs:
    """The one store method the API sink reads: which seed an environment came from."""

    def __init__(self, seed_of: dict[str, str]) -> None:
        self.seed_of = seed_of

    def get(self, env_id: str):
        return SimpleNamespace(seed_id=self.seed_of[env_id])


def test_the_api_decision_sink_delivers_a_stored_decision_to_the_waiting_pipeline(harness, loop):
    with harness(Scenario(red_team_shortcut_until=2)) as h:
        handle = loop.run(wfclient.astart_synthesis(h.env.client, "seed-api", h.config))
        status = h.wait_for_stage(handle, "awaiting-review")
        [item_id] = status.open_review_items
        h.services.decide_in_store(item_id, "confirm", "erin")  # the API stores first
        target = h.env.client.service_client.config.target_host
        settings = Settings(
            temporal={
                "address": target,
                "task_queue_agents": h.config.task_queue_agents,
                "task_queue_sandbox": h.config.task_queue_sandbox,
            }
        )
        store = SimpleNamespace(environments=_Envs({status.env_id: "seed-api"}))
        on_decision, _ = wfclient.api_sinks(settings, store)
        item = ReviewItem(
            id=item_id,
            finding_id="f",
            env_id=status.env_id,
            state=ReviewState.CONFIRMED,
            reviewer="erin",
        )
        loop.run(on_decision(item))
        result = h.result(handle)
    assert result.outcome == "published" and result.verifier_version == 2
    assert [(c["item"], c["decision"]) for c in h.services.calls("record_decision")] == [
        (item_id, "confirm")
    ]  # delivered once, and the already stored identical decision is accepted
