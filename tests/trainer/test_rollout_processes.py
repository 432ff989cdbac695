"""Rollout workers as processes (``rollout_mode="processes"``): weights from shared
memory, each token tagged with the version that produced it, no process left behind."""

from __future__ import annotations

import multiprocessing
import os

import pytest
import torch

from envfactory.core.errors import RolloutError, TrainerConfigError
from envfactory.trainer.trajectory import Trajectory

from .helpers import (
    TASK,
    MarkedRecallFactory,
    NicenessCheckedRecall,
    broken_recall,
    tiny_config,
    tiny_trainer,
)

pytestmark = pytest.mark.slow  # each run starts worker processes (seconds on 2 cores)


def _rollout_children() -> list[multiprocessing.process.BaseProcess]:
    return [p for p in multiprocessing.active_children() if p.name.startswith("rollout-")]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _spy_batches(trainer) -> list[tuple[int, list[Trajectory]]]:
    seen: list[tuple[int, list[Trajectory]]] = []
    original = trainer.learner.step

    def spy(batch, version, step_index):
        seen.append((version, list(batch)))
        return original(batch, version, step_index)

    trainer.learner.step = spy  # an observer on our own object, not a patch of behaviour
    return seen


@pytest.mark.parametrize(
    "arm",
    [
        {"algorithm": "sao"},
        {"algorithm": "grpo", "group_size": 4},
        {"algorithm": "grpo", "group_size": 4, "grpo_async": True},
    ],
    ids=["sao", "grpo-sync", "grpo-async"],
)
def test_worker_processes_train_on_weights_whose_version_advances(arm):
    trainer = tiny_trainer(tiny_config(rollout_mode="processes", sync_lag=1, **arm))
    seen = _spy_batches(trainer)
    # six steps: past max_staleness (4), a batch cannot be all version-0 trajectories
    # however far the workers ran ahead of a loaded learner
    history = trainer.run(6)
    assert trainer.version == 6
    # the lagged push: the workers' shared weights are version 5, equal to those pushed
    assert trainer.weights.version == 5
    versions = {v for _, batch in seen for t in batch for v in t.policy_versions if v is not None}
    assert versions - {0}, "no trajectory was produced with updated weights"
    for (version, batch), metrics in zip(seen, history, strict=True):
        expected = [version - min(v for v in t.policy_versions if v is not None) for t in batch]
        assert metrics.staleness_mean == pytest.approx(sum(expected) / len(expected))
    # a lag of one version: from the second update on, every token is at least one old
    assert all(m.staleness_mean >= 1 for m in history[2:])
    if arm["algorithm"] == "grpo":
        for _, batch in seen:
            groups = {t.group_id for t in batch}
            assert len(groups) == len(batch) // 4 and all(g is not None for g in groups)
    assert not _rollout_children()


def test_shared_weights_equal_the_policy_after_each_push():
    trainer = tiny_trainer(tiny_config(rollout_mode="processes"))
    trainer.run(2)
    assert trainer.weights.version == trainer.version == 2
    shared = dict(trainer.shared.model.named_parameters())
    for name, param in trainer.policy.named_parameters():
        assert torch.equal(param, shared[name])


def test_every_worker_process_stops_and_closes_its_environment(tmp_path):
    trainer = tiny_trainer(
        tiny_config(rollout_mode="processes", rollout_workers=3),
        env_factory=MarkedRecallFactory(tmp_path),
    )
    pids: set[int] = set()
    trainer.run(2, on_step=lambda m: pids.update(p.pid for p in _rollout_children()))
    assert len(pids) == 3
    assert all(_gone(pid) for pid in pids)
    assert not _rollout_children()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"closed-{pid}" for pid in pids)


def test_a_crash_in_a_worker_process_fails_the_run_and_leaves_no_process():
    trainer = tiny_trainer(tiny_config(rollout_mode="processes"), env_factory=broken_recall)
    with pytest.raises(RolloutError, match="sandbox vanished"):
        trainer.run(1)
    assert not _rollout_children()


def test_an_environment_factory_that_cannot_be_pickled_is_refused_before_any_process():
    with pytest.raises(TrainerConfigError, match="cannot be pickled") as info:
        tiny_trainer(tiny_config(rollout_mode="processes"), env_factory=lambda: TASK.make())
    assert "rollout_mode 'threads'" in str(info.value.hint)
    assert not _rollout_children()


def test_rollout_nice_lowers_the_priority_of_the_worker_processes_only():
    base = os.nice(0)
    config = tiny_config(rollout_mode="processes", rollout_nice=3, concurrent_episodes=2)
    trainer = tiny_trainer(config, env_factory=NicenessCheckedRecall(min(base + 3, 19)))
    trainer.run(1)
    assert os.nice(0) == base  # the learner's process keeps its priority


def test_rollout_nice_is_refused_for_rollout_threads():
    with pytest.raises(ValueError, match="rollout_nice"):
        tiny_config(rollout_nice=5)
