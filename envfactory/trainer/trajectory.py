"""One rollout as the trainer sees it: tokens exactly as sampled, and who produced each.

Invariants (checked on construction, so a bad rollout fails where it is made, not
deep inside the loss):
- every per-token sequence has the same length as ``token_ids``;
- ``rollout_logprobs[i]`` and ``policy_versions[i]`` are set iff token ``i`` is an
  action token (model-generated); observation tokens (prompt, environment replies)
  carry ``None`` because the policy never chose them;
- there is at least one action token, and the scalar reward sits on the last one.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from envfactory.core.errors import TrainerError

FinishReason = Literal["env_done", "max_turns", "length", "aborted"]


class Trajectory(BaseModel):
    """A finished episode: ``[o_prompt, a_0, o_0, a_1, o_1, ...]`` flattened to tokens."""

    model_config = ConfigDict(frozen=True)

    prompt_id: str
    token_ids: tuple[int, ...]
    action_mask: tuple[bool, ...]
    rollout_logprobs: tuple[float | None, ...]
    policy_versions: tuple[int | None, ...]
    reward: float
    finish_reason: FinishReason
    group_id: str | None = None
    rollout_seconds: float = 0.0

    @model_validator(mode="after")
    def _check_alignment(self) -> Trajectory:
        n = len(self.token_ids)
        lengths = {len(self.action_mask), len(self.rollout_logprobs), len(self.policy_versions)}
        if lengths != {n}:
            raise ValueError(f"per-token fields must all have length {n}, got {sorted(lengths)}")
        for i, is_action in enumerate(self.action_mask):
            has_lp = self.rollout_logprobs[i] is not None
            has_v = self.policy_versions[i] is not None
            if is_action != has_lp or is_action != has_v:
                raise ValueError(
                    f"token {i}: logprob and version must be present exactly on action tokens"
                )
        if not any(self.action_mask):
            raise ValueError("a trajectory needs at least one action token")
        return self

    @property
    def num_action_tokens(self) -> int:
        return sum(self.action_mask)

    @property
    def last_action_index(self) -> int:
        return max(i for i, m in enumerate(self.action_mask) if m)

    @property
    def token_rewards(self) -> list[float]:
        """Per-token reward: zero everywhere except the last action token."""
        rewards = [0.0] * len(self.token_ids)
        rewards[self.last_action_index] = self.reward
        return rewards

    @property
    def oldest_version(self) -> int:
        return min(v for v in self.policy_versions if v is not None)

    @property
    def newest_version(self) -> int:
        return max(v for v in self.policy_versions if v is not None)

    def staleness(self, trainer_version: int) -> int:
        """Policy updates between the oldest token's weights and the trainer's now."""
        return trainer_version - self.oldest_version


class TrajectoryBuilder:
    """Accumulates segments of one episode; ``build`` freezes them into a Trajectory."""

    def __init__(self, prompt_id: str, group_id: str | None = None) -> None:
        self.prompt_id = prompt_id
        self.group_id = group_id
        self._tokens: list[int] = []
        self._mask: list[bool] = []
        self._logprobs: list[float | None] = []
        self._versions: list[int | None] = []

    def __len__(self) -> int:
        return len(self._tokens)

    @property
    def token_ids(self) -> list[int]:
        return list(self._tokens)

    @property
    def num_action_tokens(self) -> int:
        return sum(self._mask)

    def add_observation(self, token_ids: list[int] | tuple[int, ...]) -> None:
        n = len(token_ids)
        self._tokens.extend(token_ids)
        self._mask.extend([False] * n)
        self._logprobs.extend([None] * n)
        self._versions.extend([None] * n)

    def add_action(
        self, token_ids: tuple[int, ...], logprobs: tuple[float, ...], versions: tuple[int, ...]
    ) -> None:
        if not (len(token_ids) == len(logprobs) == len(versions)):
            raise TrainerError("an action needs one logprob and one policy version per token")
        self._tokens.extend(token_ids)
        self._mask.extend([True] * len(token_ids))
        self._logprobs.extend(logprobs)
        self._versions.extend(versions)

    def build(self, reward: float, finish_reason: FinishReason, seconds: float) -> Trajectory:
        return Trajectory(
            prompt_id=self.prompt_id,
            token_ids=tuple(self._tokens),
            action_mask=tuple(self._mask),
            rollout_logprobs=tuple(self._logprobs),
            policy_versions=tuple(self._versions),
            reward=reward,
            finish_reason=finish_reason,
            group_id=self.group_id,
            rollout_seconds=seconds,
        )
