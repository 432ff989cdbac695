"""Small builders shared by the trainer tests."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from envfactory.trainer.config import TrainerConfig
from envfactory.trainer.environments import StepResult
from envfactory.trainer.loop import Trainer
from envfactory.trainer.models import TinyModelSpec, build_tiny_model
from envfactory.trainer.synthetic import RecallEnvironment, get_task
from envfactory.trainer.trajectory import Trajectory, TrajectoryBuilder

TASK = get_task("two_turn_recall")


def tiny_config(**overrides) -> TrainerConfig:
    base = dict(
        batch_size=8,
        lr=1e-2,
        value_lr=1e-2,
        critic_warmup_steps=0,
        max_turns=TASK.turns,
        max_new_tokens=1,
        rollout_workers=2,
        max_staleness=4,
        seed=0,
    )
    base.update(overrides)
    return TrainerConfig(**base)


def tiny_trainer(config: TrainerConfig, env_factory=TASK.make, seed: int = 0) -> Trainer:
    policy = build_tiny_model(TinyModelSpec(vocab_size=TASK.vocab_size), seed)
    return Trainer(config, policy, env_factory)


def trajectory(version: int, reward: float = 1.0, prompt: str = "p") -> Trajectory:
    b = TrajectoryBuilder(prompt)
    b.add_observation([0, 3])
    b.add_action((3,), (-0.5,), (version,))
    return b.build(reward, "env_done", 0.0)


class GatedEnvironment(RecallEnvironment):
    """A recall environment whose steps block until ``gate`` is set (a very slow rollout)."""

    def __init__(self, gate: threading.Event) -> None:
        super().__init__(TASK.turns, TASK.n_symbols)
        self.gate = gate
        self.entered = threading.Event()

    def step(self, action: tuple[int, ...]) -> StepResult:
        self.entered.set()
        self.gate.wait()
        return super().step(action)


class BrokenRecall(RecallEnvironment):
    """A recall environment whose first step fails (a vanished sandbox)."""

    def step(self, action: tuple[int, ...]) -> StepResult:
        raise OSError("sandbox vanished")


def broken_recall() -> BrokenRecall:
    return BrokenRecall(TASK.turns, TASK.n_symbols)


class MarkedRecall(RecallEnvironment):
    """A recall environment that leaves a file named for its process when closed."""

    def __init__(self, marks: Path) -> None:
        super().__init__(TASK.turns, TASK.n_symbols)
        self._marks = marks

    def close(self) -> None:
        (self._marks / f"closed-{os.getpid()}").write_text("closed")


@dataclass(frozen=True)
class MarkedRecallFactory:
    """Picklable: worker processes build their environments with it."""

    marks: Path

    def __call__(self) -> MarkedRecall:
        return MarkedRecall(self.marks)


@dataclass(frozen=True)
class NicenessCheckedRecall:
    """A picklable factory of recall environments that refuse to run at another niceness
    than ``expected`` (the worker process's, read where the episode runs)."""

    expected: int

    def __call__(self) -> RecallEnvironment:
        niceness = os.nice(0)
        if niceness != self.expected:
            raise RuntimeError(f"rollout process at niceness {niceness}, not {self.expected}")
        return RecallEnvironment(TASK.turns, TASK.n_symbols)
