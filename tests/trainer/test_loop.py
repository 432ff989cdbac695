import itertools
import math
import threading

import pytest
import torch

from envfactory.trainer.checkpoint import load_checkpoint, save_checkpoint
from envfactory.trainer.loop import RolloutError
from envfactory.trainer.metrics import plot_metrics
from envfactory.trainer.synthetic import RecallEnvironment

from .helpers import TASK, GatedEnvironment, tiny_config, tiny_trainer, trajectory


def test_a_slow_rollout_does_not_hold_up_training_in_single_rollout_mode():
    gate = threading.Event()
    slow = GatedEnvironment(gate)
    counter = itertools.count()

    class AfterSlowStarted(RecallEnvironment):
        # the other episodes start only once the slow one is stuck in its step
        def reset(self, seed):
            slow.entered.wait()
            return super().reset(seed)

    def factory():
        if next(counter) == 0:
            return slow
        return AfterSlowStarted(TASK.turns, TASK.n_symbols)

    trainer = tiny_trainer(tiny_config(rollout_workers=2))
    released = []

    def after_step(metrics):
        if metrics.step == 2:  # three updates happened while one episode was stuck
            assert not gate.is_set()
            released.append(metrics.step)
            gate.set()

    history = trainer.run(3, on_step=after_step)
    assert released == [2] and len(history) == 3


def test_weights_are_synced_to_the_engine_after_every_update():
    trainer = tiny_trainer(tiny_config())
    trainer.run(3)
    assert trainer.version == trainer.engine.version == 3
    engine_params = dict(trainer.engine.model.named_parameters())
    for name, param in trainer.policy.named_parameters():
        assert torch.equal(param, engine_params[name])


def test_injected_policy_lag_serves_weights_k_versions_old():
    trainer = tiny_trainer(tiny_config(sync_lag=2, max_staleness=10))
    history = trainer.run(4)
    assert trainer.version == 4 and trainer.engine.version == 2
    assert history[-1].staleness_mean >= 2


def test_critic_warmup_trains_only_the_critic():
    trainer = tiny_trainer(tiny_config(critic_warmup_steps=2))
    before = {n: p.detach().clone() for n, p in trainer.policy.named_parameters()}
    history = trainer.run(2)
    assert [m.policy_updated for m in history] == [False, False]
    assert trainer.version == 0
    assert all(torch.equal(p, before[n]) for n, p in trainer.policy.named_parameters())
    assert all(m.value_loss is not None and math.isfinite(m.value_loss) for m in history)


def test_grpo_trains_on_complete_groups_of_the_same_prompt():
    trainer = tiny_trainer(tiny_config(algorithm="grpo", group_size=4, batch_size=8))
    seen = []
    original = trainer.learner.step

    def spy(batch, version, step_index):
        seen.append(batch)
        return original(batch, version, step_index)

    trainer.learner.step = spy  # an observer on our own object, not a patch of behaviour
    history = trainer.run(2)
    for batch in seen:
        groups = {}
        for t in batch:
            groups.setdefault(t.group_id, []).append(t.prompt_id)
        assert all(len(m) == 4 and len(set(m)) == 1 for m in groups.values())
    assert all(m.staleness_max == 0 for m in history)


def test_async_grpo_trains_on_whole_groups_while_another_group_is_stuck():
    gate = threading.Event()
    slow = GatedEnvironment(gate)
    counter = itertools.count()

    def factory():
        return slow if next(counter) == 0 else RecallEnvironment(TASK.turns, TASK.n_symbols)

    config = tiny_config(
        algorithm="grpo", group_size=4, batch_size=8, grpo_async=True, rollout_workers=2
    )
    trainer = tiny_trainer(config, env_factory=factory)
    seen = []
    original = trainer.learner.step

    def spy(batch, version, step_index):
        seen.append(batch)
        return original(batch, version, step_index)

    trainer.learner.step = spy  # an observer on our own object, not a patch of behaviour

    def after_step(metrics):
        if metrics.step == 1:  # two updates while one worker's group was stuck
            assert slow.entered.is_set() and not gate.is_set()
            gate.set()

    trainer.run(2, on_step=after_step)
    assert gate.is_set()
    for batch in seen:
        groups = {}
        for t in batch:
            groups.setdefault(t.group_id, []).append(t.prompt_id)
        assert len(groups) == 2 and all(len(m) == 4 and len(set(m)) == 1 for m in groups.values())


def test_the_running_mean_baseline_replaces_the_critic():
    trainer = tiny_trainer(tiny_config(algorithm="mean_baseline", baseline_decay=0.9))
    assert trainer.learner.critic is None
    history = trainer.run(2)
    assert all(m.policy_updated and m.explained_variance is None for m in history)
    r1, r2 = (m.reward_mean for m in history)
    assert trainer.learner.baseline == pytest.approx(0.9 * r1 + 0.1 * r2)


def test_a_slow_environment_waits_longer_on_later_steps():
    import time

    from envfactory.trainer.synthetic import SlowEnvironment

    env = SlowEnvironment(RecallEnvironment(3, 4), median_s=0.02, sigma=0.0)
    env.reset(0)
    waits = []
    for _ in range(3):
        started = time.perf_counter()
        env.step((3,))
        waits.append(time.perf_counter() - started)
    # sleep never returns early: lower bounds hold on any machine
    assert waits[0] >= 0.02 and waits[2] >= 0.06


def test_metrics_report_mismatch_masking_staleness_and_idle_time(tmp_path):
    trainer = tiny_trainer(tiny_config())
    history = trainer.run(3)
    for m in history:
        # a step sees only a few same-version tokens, each within a few fp32 ulps; the
        # 1e-7 bound on the mean is pinned over many tokens in test_torch_engine
        assert m.logprob_mismatch is None or m.logprob_mismatch <= 1e-6
        assert 0.0 <= m.mask_fraction <= 1.0 and 0.0 <= m.trainer_idle_fraction <= 1.0
        assert m.trajectories == 8 and m.tokens_per_s > 0
    assert plot_metrics(history, tmp_path / "curves.png").stat().st_size > 0


def test_staleness_accounting_survives_a_checkpoint_and_resume(tmp_path):
    config = tiny_config(max_staleness=3)
    first = tiny_trainer(config)
    first.run(3)
    waiting = (trajectory(version=1), trajectory(version=3))
    first.buffer.restore([(t,) for t in waiting])
    before = [t.staleness(first.version) for item in first.buffer.snapshot() for t in item]
    save_checkpoint(first, tmp_path / "ckpt")

    second = load_checkpoint(tiny_trainer(config, seed=99), tmp_path / "ckpt")
    assert (second.version, second.step, second.engine.version) == (3, 3, 3)
    after = [t.staleness(second.version) for item in second.buffer.snapshot() for t in item]
    assert after == before
    for name, param in second.policy.named_parameters():
        assert torch.equal(param, dict(first.policy.named_parameters())[name])
    history = second.run(2)
    assert [m.step for m in second.history] == [0, 1, 2, 3, 4]
    assert second.version == 5 and history[0].policy_version == 4


def test_a_crashing_environment_fails_the_run_loudly_instead_of_hanging():
    class Broken(RecallEnvironment):
        def step(self, action):
            raise OSError("sandbox vanished")

    trainer = tiny_trainer(tiny_config(), env_factory=lambda: Broken(TASK.turns, TASK.n_symbols))
    with pytest.raises(RolloutError, match="sandbox vanished") as info:
        trainer.run(1)
    assert isinstance(info.value.__cause__, OSError)


def test_when_training_ends_every_rollout_worker_has_stopped_and_closed_its_environment():
    # regression: `envfactory train --pack` aborted at exit ("terminate called without an
    # active exception") and left episode containers running, because rollout threads were
    # abandoned mid-episode after a join timeout
    closed: list[int] = []

    class Tracked(RecallEnvironment):
        def close(self):
            closed.append(1)
            super().close()

    trainer = tiny_trainer(
        tiny_config(rollout_workers=3),
        env_factory=lambda: Tracked(TASK.turns, TASK.n_symbols),
    )
    trainer.run(2)
    assert len(closed) == 3
    assert not [t for t in threading.enumerate() if t.name.startswith("rollout-")]
