"""The rollout-engine interface: generate with per-token logprobs, take new weights.

Invariants every engine keeps:
- ``Generation.logprobs[i]`` is the log-probability under which ``token_ids[i]`` was
  sampled (fp32, at the requested temperature): DIS divides by it;
- ``Generation.weight_version`` is the policy version the engine held when the
  segment started; an engine never reports a version newer than the weights used;
- ``update_weights`` returns only once new requests will see the new weights.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import torch

from envfactory.core.errors import RolloutEngineError

EngineFinish = Literal["stop", "length", "aborted"]


@dataclass(frozen=True)
class SamplingParams:
    max_new_tokens: int
    temperature: float = 1.0
    stop_token_ids: tuple[int, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Generation:
    token_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    finish_reason: EngineFinish
    weight_version: int

    def __post_init__(self) -> None:
        if len(self.token_ids) != len(self.logprobs):
            raise RolloutEngineError(
                f"the engine returned {len(self.token_ids)} tokens but "
                f"{len(self.logprobs)} logprobs (one per generated token is required)"
            )


class TokenGenerator(Protocol):
    """What an episode needs from an engine: one segment of tokens with logprobs."""

    def generate(self, prompt_ids: list[int], params: SamplingParams) -> Generation: ...


class WeightSink(Protocol):
    """What the trainer's weight sync needs: take version ``version`` of the weights."""

    @property
    def version(self) -> int: ...

    def update_weights(self, model: torch.nn.Module, version: int) -> None: ...


@runtime_checkable
class RolloutEngine(Protocol):
    @property
    def version(self) -> int: ...

    def generate(self, prompt_ids: list[int], params: SamplingParams) -> Generation: ...

    def update_weights(self, model: torch.nn.Module, version: int) -> None: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...
