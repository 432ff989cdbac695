"""Trainer configuration: one frozen model, validated once at the edge (CLI, benchmark).

Algorithms share one code path and differ only in three switches:

=============  ==================  ==========================  ===================
name           sampling            advantage                   policy loss
=============  ==================  ==========================  ===================
sao            async, G = 1        critic + skip-obs GAE       DIS
mean_baseline  async, G = 1        reward − running mean       DIS
pg             async, G = 1        critic + skip-obs GAE       plain PG (no DIS)
grpo           sync batches, G>1   group-standardised reward   PPO-clip
=============  ==================  ==========================  ===================

``mean_baseline`` is the paper's "running-mean baseline" ablation: SAO with the critic
replaced by an exponential moving average of past rewards (``baseline_decay``).
``grpo_async`` keeps GRPO's groups but drops the batch barrier: each rollout worker
plays the G rollouts of one prompt and hands the group to the buffer as soon as it is
complete, like SAO hands over single trajectories.

``rollout_mode`` says where episodes run: ``threads`` of the trainer's interpreter
(any engine), or ``processes`` (the torch engine in worker processes fed from shared
memory, so rollouts and the learner do not share a GIL; ``rollout_processes.py``).
``concurrent_episodes`` > 1 lets each worker play that many episodes at once, one
thread each, whose token steps share batched forwards (``engines/batching_engine.py``:
continuous batching); with an external engine (SGLang) the server batches instead.
``rollout_nice`` raises the niceness of rollout processes: when the learner and the
rollouts both want a core, the learner (the asynchronous modes' critical path) gets
it and rollouts fill what is left; a synchronous learner runs while rollouts idle, so
it changes little there. On CPU only, where the learner shares cores with rollouts.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from envfactory.core.errors import TrainerConfigError
from envfactory.trainer.critic import DEFAULT_FREEZE_PATTERNS, CriticConfig
from envfactory.trainer.losses import DIS_PRESETS, DISConfig

Algorithm = Literal["sao", "mean_baseline", "pg", "grpo"]


class TrainerConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    algorithm: Algorithm = "sao"
    batch_size: int = 128
    group_size: int = 1
    lr: float = 1e-6
    value_lr: float = 5e-6
    critic_updates: int = 2
    critic_warmup_steps: int = 10
    freeze_patterns: tuple[str, ...] = DEFAULT_FREEZE_PATTERNS
    dis_preset: Literal["reasoning", "coding"] = "reasoning"
    ppo_clip: float = 0.2
    baseline_decay: float = 0.9
    grpo_async: bool = False
    gamma: float = 1.0
    lam: float = 0.95
    lam_critic: float = 1.0
    normalize_advantages: bool = False
    max_grad_norm: float = 1.0
    max_staleness: int = 4
    rollout_workers: int = 2
    rollout_mode: Literal["threads", "processes"] = "threads"
    concurrent_episodes: int = 1
    rollout_nice: int = 0
    buffer_capacity: int | None = None
    max_new_tokens: int = 1
    max_turns: int = 8
    max_context_tokens: int = 4096
    temperature: float = 1.0
    stop_token_ids: tuple[int, ...] = ()
    sync_lag: int = 0
    seed: int = 0

    @model_validator(mode="after")
    def _check(self) -> TrainerConfig:
        if self.algorithm == "grpo" and self.group_size < 2:
            raise ValueError("grpo needs group_size > 1 (its baseline is the group mean)")
        if self.algorithm != "grpo" and self.group_size != 1:
            raise ValueError(f"{self.algorithm} is single-rollout: group_size must be 1")
        if self.batch_size % self.group_size:
            raise ValueError("batch_size must be a multiple of group_size")
        if self.grpo_async and self.algorithm != "grpo":
            raise ValueError("grpo_async applies to algorithm grpo only")
        if not 0.0 <= self.baseline_decay < 1.0:
            raise ValueError("baseline_decay must be in [0, 1)")
        if self.concurrent_episodes < 1 or self.rollout_workers < 1:
            raise ValueError("rollout_workers and concurrent_episodes must be >= 1")
        if not 0 <= self.rollout_nice <= 19 or (
            self.rollout_nice and self.rollout_mode != "processes"
        ):
            raise ValueError("rollout_nice is 0..19 and applies to rollout_mode 'processes'")
        if self.critic_updates < 1 or self.sync_lag < 0 or self.max_staleness < 0:
            raise ValueError("critic_updates >= 1, sync_lag >= 0 and max_staleness >= 0")
        return self

    @property
    def dis(self) -> DISConfig:
        return DIS_PRESETS[self.dis_preset]

    @property
    def uses_critic(self) -> bool:
        return self.algorithm in ("sao", "pg")

    @property
    def rollout_threads(self) -> int:
        """Episodes in flight at once: every worker plays ``concurrent_episodes``."""
        return self.rollout_workers * self.concurrent_episodes

    @property
    def capacity(self) -> int:
        # enough for the next batch while the trainer works on this one
        return self.buffer_capacity or 2 * self.batch_size

    @classmethod
    def from_options(cls, **options: Any) -> TrainerConfig:
        """Validate at the edge: every problem, by field, in one ``TrainerConfigError``."""
        try:
            return cls(**options)
        except ValidationError as err:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'config'}: {e['msg']}"
                for e in err.errors()
            )
            raise TrainerConfigError(f"invalid trainer config: {problems}") from None

    def critic_config(self) -> CriticConfig:
        return CriticConfig(lr=self.value_lr, freeze_patterns=self.freeze_patterns)
