"""Rollout: one episode of an environment driven by a rollout engine.

Invariants: the trajectory holds token ids exactly as the engine sampled them and the
environment sent them (no re-tokenisation of text round trips); each action token
carries the engine's logprob and weight version; the reward lands on the last action
token. A bad episode is data (reward 0, a finish reason), not an exception: running
out of turns ends with ``max_turns``, a context that would overflow ``max_tokens``
with ``length``, an engine abort with ``aborted``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from envfactory.trainer.engines.base import SamplingParams, TokenGenerator
from envfactory.trainer.environments import Environment
from envfactory.trainer.trajectory import FinishReason, Trajectory, TrajectoryBuilder


def run_episode(
    engine: TokenGenerator,
    env: Environment,
    seed: int,
    params: SamplingParams,
    max_turns: int,
    group_id: str | None = None,
    max_tokens: int | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Trajectory | None:
    """Play one episode; ``None`` only if the engine produced no token at all.

    ``should_stop`` is polled before every turn, so a trainer that is shutting down ends
    its rollouts at the next turn boundary and their environments close (no container is
    left behind, no thread outlives the interpreter)."""
    started = time.perf_counter()
    builder = TrajectoryBuilder(prompt_id=f"p{seed}", group_id=group_id)
    builder.add_observation(env.reset(seed))
    reward, finish = 0.0, "max_turns"
    for _ in range(max_turns):
        if should_stop is not None and should_stop():
            finish = "aborted"
            break
        if max_tokens is not None and len(builder) + params.max_new_tokens > max_tokens:
            finish = "length"  # the context would overflow: stop, reward 0
            break
        generation = engine.generate(builder.token_ids, params)
        if not generation.token_ids:
            finish = "aborted"
            break
        versions = (generation.weight_version,) * len(generation.token_ids)
        builder.add_action(generation.token_ids, generation.logprobs, versions)
        if generation.finish_reason == "aborted":
            finish = "aborted"
            break
        result = env.step(generation.token_ids)
        if result.done:
            reward, finish = result.reward, "env_done"
            break
        builder.add_observation(result.observation)
    if builder.num_action_tokens == 0:
        return None  # nothing the policy wrote: no training signal
    return builder.build(reward, _as_finish(finish), time.perf_counter() - started)


def _as_finish(value: str) -> FinishReason:
    return value  # type: ignore[return-value]
