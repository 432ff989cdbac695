"""Built-in synthetic multi-turn tasks with a binary reward, for CPU runs and tests.

Token layout shared by every task: 0 BOS, 1 SEP, 2 EOS, then ``n_symbols`` symbols.
Each task is a recall game: the observation shows a symbol, the agent answers with
one token, the environment shows the next symbol, and so on for ``turns`` turns. The
reward is 1 iff every answer named the symbol shown just before it, else 0. A
uniformly random policy over the vocabulary scores (1/vocab)^turns, so learning is
visible from a near-zero start; the answer of turn t depends on the environment's
reply to turn t − 1, so a policy that ignores observations cannot succeed.

``graded_recall`` is the task where the value function matters. Each prompt has a
visible difficulty: a level d (0..turns, uniform over seeds) says how many of the
episode's turns are *checked* (the last d); the others are free (any answer passes).
A wrong answer on a checked turn ends the episode with reward 0; surviving every turn
gives 1. Observations and answers share one token family: token ``O(s, r)`` shows
symbol s and r, the number of checked turns still ahead (this one included), and an
answer names the symbol of the ``O`` token it is (its r is ignored). So the success
probability of a state is q^r for a policy that names a symbol right with
probability q: it varies with the prompt (r starts at d) and moves within the episode,
which a constant baseline cannot follow and a critic can. Under a uniformly random
policy q = (turns + 1) / vocab, so rewards are frequent from the first step (about
0.37 on average for the default 3 turns and 2 symbols), and the credit of an episode
lies on its checked turns, not its free ones.

``long_tail_recall`` has the long-tail episode lengths of agentic tasks: each prompt
draws its number of turns n from a discrete power law, P(n ≥ k) = k^−1.2, capped at
``turns`` (32): most episodes take one to three turns, about one in sixty takes all
32. Only the last answer is checked (it must name the last symbol shown), so a random
policy scores 1 / n_symbols and learning stays visible.

``SlowEnvironment`` gives rollouts the latency of real agent environments: step k of an
episode sleeps k × median × exp(σ·z), z drawn afresh for every turn and rollout (later turns carry
longer contexts and more work, and any turn can hit a slow tail), so an episode of n
steps waits ~n²/2 median delays: long trajectories are the slow ones. ``SlowTask`` is
the picklable factory for it (rollout worker processes need one).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

from envfactory.core.errors import TrainerConfigError
from envfactory.trainer.environments import Environment, StepResult

BOS, SEP, EOS = 0, 1, 2
FIRST_SYMBOL = 3


@dataclass(frozen=True)
class SyntheticTask:
    name: str
    turns: int
    n_symbols: int
    description: str
    graded: bool = False
    long_tail: bool = False

    @property
    def vocab_size(self) -> int:
        if self.graded:
            return FIRST_SYMBOL + self.n_symbols * (self.turns + 1)
        return FIRST_SYMBOL + self.n_symbols

    def make(self) -> Environment:
        if self.graded:
            return GradedRecallEnvironment(self.turns, self.n_symbols)
        if self.long_tail:
            return LongTailRecallEnvironment(self.turns, self.n_symbols)
        return RecallEnvironment(self.turns, self.n_symbols)


TASKS: dict[str, SyntheticTask] = {
    task.name: task
    for task in (
        SyntheticTask("echo", 1, 4, "one turn: repeat the symbol shown"),
        SyntheticTask("two_turn_recall", 2, 4, "two turns: repeat each symbol as it is shown"),
        SyntheticTask("three_turn_recall", 3, 4, "three turns of the same game"),
        SyntheticTask(
            "graded_recall",
            3,
            2,
            "three turns, a visible difficulty: the last d are checked (see the module doc)",
            graded=True,
        ),
        SyntheticTask(
            "long_tail_recall",
            32,
            2,
            "1 to 32 turns, long-tailed lengths; the last answer is checked",
            long_tail=True,
        ),
    )
}


def get_task(name: str) -> SyntheticTask:
    try:
        return TASKS[name]
    except KeyError:
        raise TrainerConfigError(
            f"unknown synthetic task {name!r}", hint=f"choose one of {', '.join(sorted(TASKS))}"
        ) from None


class RecallEnvironment:
    """See the module docstring; one action token per turn is read, extra ones ignored."""

    def __init__(self, turns: int, n_symbols: int) -> None:
        self._turns = turns
        self._n = n_symbols
        self._rng = random.Random(0)
        self._shown = 0
        self._turn = 0
        self._correct = True

    def _symbol(self) -> int:
        return FIRST_SYMBOL + self._rng.randrange(self._n)

    def reset(self, seed: int) -> tuple[int, ...]:
        self._rng = random.Random(seed)
        self._turn = 0
        self._correct = True
        self._shown = self._symbol()
        return (BOS, self._shown)

    def step(self, action: tuple[int, ...]) -> StepResult:
        self._correct = self._correct and bool(action) and action[0] == self._shown
        self._turn += 1
        if self._turn >= self._turns:
            return StepResult((), True, 1.0 if self._correct else 0.0)
        self._shown = self._symbol()
        return StepResult((SEP, self._shown), False)

    def close(self) -> None:
        return None


class LongTailRecallEnvironment(RecallEnvironment):
    """See the module docstring: a power-law number of turns, the last one checked."""

    ALPHA = 1.2

    def __init__(self, max_turns: int, n_symbols: int) -> None:
        super().__init__(max_turns, n_symbols)
        self._max_turns = max_turns
        self._length = 1

    def reset(self, seed: int) -> tuple[int, ...]:
        rng = random.Random(f"length:{seed}")
        tail = 1.0 / (1.0 - rng.random()) ** (1.0 / self.ALPHA)
        self._length = min(self._max_turns, int(tail))
        return super().reset(seed)

    def step(self, action: tuple[int, ...]) -> StepResult:
        right = bool(action) and action[0] == self._shown
        self._turn += 1
        if self._turn >= self._length:
            return StepResult((), True, 1.0 if right else 0.0)
        self._shown = self._symbol()
        return StepResult((SEP, self._shown), False)


class GradedRecallEnvironment:
    """See the module docstring; one action token per turn is read, extra ones ignored."""

    def __init__(self, turns: int, n_symbols: int) -> None:
        self._turns = turns
        self._n = n_symbols
        self._rng = random.Random(0)
        self._level = 0
        self._turn = 0
        self._shown = 0

    def token(self, symbol: int, remaining: int) -> int:
        return FIRST_SYMBOL + symbol * (self._turns + 1) + remaining

    def symbol_of(self, token: int) -> int | None:
        index = token - FIRST_SYMBOL
        if 0 <= index < self._n * (self._turns + 1):
            return index // (self._turns + 1)
        return None

    def remaining_checks(self) -> int:
        """Checked turns from the current one to the end (the last ``level`` are checked)."""
        return min(self._level, self._turns - self._turn)

    def _observe(self) -> int:
        self._shown = self._rng.randrange(self._n)
        return self.token(self._shown, self.remaining_checks())

    def reset(self, seed: int) -> tuple[int, ...]:
        self._rng = random.Random(seed)
        self._level = self._rng.randrange(self._turns + 1)
        self._turn = 0
        return (BOS, self._observe())

    def step(self, action: tuple[int, ...]) -> StepResult:
        checked = self.remaining_checks() == self._turns - self._turn
        right = bool(action) and self.symbol_of(action[0]) == self._shown
        self._turn += 1
        if checked and not right:
            return StepResult((), True, 0.0)
        if self._turn >= self._turns:
            return StepResult((), True, 1.0)
        return StepResult((SEP, self._observe()), False)

    def close(self) -> None:
        return None


class SlowEnvironment:
    """Wraps an environment; step k sleeps k × ``median_s`` × exp(``sigma`` × z).

    z is standard normal, drawn for every turn from a generator seeded by the episode's
    seed and a salt of this instance: the G rollouts of one GRPO prompt wait for
    independent draws (with one shared seed they would all take exactly as long and the
    group barrier would cost nothing), so draws do not repeat across runs."""

    def __init__(self, inner: Environment, median_s: float, sigma: float = 1.0) -> None:
        self._inner = inner
        self._median = median_s
        self._sigma = sigma
        self._rng = random.Random(0)
        self._salt = random.Random().getrandbits(64)  # os.urandom-seeded
        self._steps = 0

    def reset(self, seed: int) -> tuple[int, ...]:
        self._rng = random.Random(f"latency:{seed}:{self._salt}")
        self._steps = 0
        return self._inner.reset(seed)

    def step(self, action: tuple[int, ...]) -> StepResult:
        self._steps += 1
        delay = self._median * self._steps * math.exp(self._sigma * self._rng.gauss(0.0, 1.0))
        if delay > 0:
            time.sleep(delay)
        return self._inner.step(action)

    def close(self) -> None:
        self._inner.close()


@dataclass(frozen=True)
class SlowTask:
    """A picklable factory of ``SlowEnvironment``s around a synthetic task."""

    task: SyntheticTask
    median_s: float
    sigma: float = 1.0

    def __call__(self) -> Environment:
        return SlowEnvironment(self.task.make(), self.median_s, self.sigma)
