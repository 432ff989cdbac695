import pytest

from envfactory.trainer.config import TrainerConfig
from envfactory.trainer.loop import Trainer
from envfactory.trainer.models import TinyModelSpec, build_tiny_model
from envfactory.trainer.synthetic import get_task

TASK = get_task("two_turn_recall")
STEP_BUDGET = 150


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_tiny_model_learns_the_two_turn_recall_task_with_sao(seed):
    config = TrainerConfig(
        algorithm="sao",
        batch_size=32,
        lr=3e-3,  # 1e-2 learns faster but can collapse onto a wrong deterministic answer
        value_lr=3e-3,  # a critic much faster than the policy zeroes the advantage of
        # a wrong answer the policy has become sure of, and learning stalls near 0.5
        critic_warmup_steps=2,
        max_turns=TASK.turns,
        max_new_tokens=1,
        rollout_workers=1,
        max_staleness=2,
        seed=seed,
    )
    policy = build_tiny_model(TinyModelSpec(vocab_size=TASK.vocab_size), seed)
    trainer = Trainer(config, policy, TASK.make)
    rewards = []

    def stop_early(metrics):
        rewards.append(metrics.reward_mean)

    # train in chunks and stop once the goal is met, within the fixed budget
    while len(rewards) < STEP_BUDGET:
        trainer.run(10, on_step=stop_early)
        if len(rewards) >= 15 and sum(rewards[-5:]) / 5 >= 0.9:
            break
    start = sum(rewards[:3]) / 3
    end = sum(rewards[-5:]) / 5
    assert start <= 0.2, rewards[:3]
    assert end >= 0.9, (len(rewards), rewards[-10:])
