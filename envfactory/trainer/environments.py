"""Environments plug into the trainer as data generation, never as loop changes.

An ``Environment`` speaks tokens: ``reset(seed)`` gives the first observation (the
prompt), ``step(action)`` gives the next observation, whether the episode is done,
and the reward (binary in every environment we ship). Text environments (packs) are
wrapped with a ``Codec``.

``PackEnvironment`` adapts a pack as described by the packs package, by duck typing
so this module imports nothing from it: ``pack.reset()`` returns an episode with
``instruction`` (optional), ``exec(action: str) -> str``, ``reward() -> float`` and
``close()``. The episode ends when the action contains the done marker or after
``max_turns`` actions; the reward is then asked for once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from envfactory.core.errors import TrainerError


@dataclass(frozen=True)
class StepResult:
    observation: tuple[int, ...]
    done: bool
    reward: float = 0.0


@runtime_checkable
class Environment(Protocol):
    def reset(self, seed: int) -> tuple[int, ...]: ...

    def step(self, action: tuple[int, ...]) -> StepResult: ...

    def close(self) -> None: ...


EnvFactory = Callable[[], Environment]


class Codec(Protocol):
    """Text ↔ token ids, plus the framing ids around prompts, observations and actions."""

    vocab_size: int
    bos_ids: tuple[int, ...]  # before the instruction
    sep_ids: tuple[int, ...]  # after each environment message: "your turn"
    stop_ids: tuple[int, ...]  # a token that ends an action

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: list[int] | tuple[int, ...]) -> str: ...


class ByteCodec:
    """UTF-8 bytes shifted past three specials (0 BOS, 1 SEP, 2 EOS): a tokenizer
    for tiny models that needs no download."""

    BOS, SEP, EOS = 0, 1, 2
    OFFSET = 3
    vocab_size: int = 256 + OFFSET
    bos_ids: tuple[int, ...] = (BOS,)
    sep_ids: tuple[int, ...] = (SEP,)
    stop_ids: tuple[int, ...] = (EOS,)

    def encode(self, text: str) -> list[int]:
        return [b + self.OFFSET for b in text.encode("utf-8")]

    def decode(self, ids: list[int] | tuple[int, ...]) -> str:
        raw = bytes(i - self.OFFSET for i in ids if i >= self.OFFSET)
        return raw.decode("utf-8", errors="replace")


class HFCodec:
    """A Hugging Face tokenizer (from a local model directory) as a Codec."""

    def __init__(self, tokenizer: Any) -> None:
        self._tok = tokenizer
        self.vocab_size: int = len(tokenizer)
        bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
        self.bos_ids: tuple[int, ...] = (int(bos),) if bos is not None else ()
        self.sep_ids: tuple[int, ...] = tuple(tokenizer.encode("\n", add_special_tokens=False))
        self.stop_ids: tuple[int, ...] = (int(eos),) if eos is not None else ()

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False))

    def decode(self, ids: list[int] | tuple[int, ...]) -> str:
        return str(self._tok.decode(list(ids), skip_special_tokens=True))


class PackEnvironment:
    """A pack episode as token-level data generation (see the module docstring)."""

    def __init__(
        self, pack: Any, codec: Codec, max_turns: int = 8, done_marker: str = "<done>"
    ) -> None:
        self._pack = pack
        self._codec = codec
        self._max_turns = max_turns
        self._done_marker = done_marker
        self._episode: Any = None
        self._turns = 0

    def reset(self, seed: int) -> tuple[int, ...]:
        self.close()
        self._episode = self._pack.reset()
        self._turns = 0
        instruction = getattr(self._episode, "instruction", None) or getattr(
            self._pack, "instruction", ""
        )
        codec = self._codec
        return (*codec.bos_ids, *codec.encode(str(instruction)), *codec.sep_ids)

    def step(self, action: tuple[int, ...]) -> StepResult:
        if self._episode is None:
            raise TrainerError("PackEnvironment.step() called before reset()")
        self._turns += 1
        text = self._codec.decode(action)
        finished = self._done_marker in text
        if not finished:
            observation = str(self._episode.exec(text))
        if finished or self._turns >= self._max_turns:
            reward = float(self._episode.reward())
            self.close()
            return StepResult((), True, reward)
        return StepResult((*self._codec.encode(observation), *self._codec.sep_ids), False)

    def close(self) -> None:
        if self._episode is not None:
            episode, self._episode = self._episode, None
            episode.close()
