"""Advantage estimators: skip-observation token-level GAE (SAO) and group baselines (GRPO).

Skip-observation GAE. A trajectory is ``[a_0, o_0, a_1, o_1, ...]`` at token level.
Observation tokens were not chosen by the model, so the Bellman recursion skips them:
the step after the last token of action i is the first token of action i+1::

    δ_t = r_t + γ V(next action token) − V(t)
    Â_t = δ_t + γ λ Â(next action token)

with V = 0 and Â = 0 past the last action token (the episode is over).
Invariants: observation tokens get no advantage and no return (``None``), and they
must carry zero reward (a reward on a token the model did not write would be lost).
The result equals plain GAE run on the sequence of action tokens alone; the tests
check that property on random sequences.
"""

from __future__ import annotations

from collections.abc import Sequence

from envfactory.core.errors import TrainerError


def skip_observation_gae(
    rewards: Sequence[float],
    values: Sequence[float],
    action_mask: Sequence[bool],
    gamma: float,
    lam: float,
) -> tuple[list[float | None], list[float | None]]:
    """Return (advantages, returns) per token; ``None`` on observation tokens."""
    n = len(rewards)
    if len(values) != n or len(action_mask) != n:
        raise TrainerError("rewards, values and action_mask must have the same length")
    advantages: list[float | None] = [None] * n
    returns: list[float | None] = [None] * n
    next_value = 0.0
    next_adv = 0.0
    for t in range(n - 1, -1, -1):
        if not action_mask[t]:
            if rewards[t] != 0.0:
                raise TrainerError(f"observation token {t} carries reward {rewards[t]}")
            continue  # the bridge: next_value/next_adv still refer to the next action token
        delta = rewards[t] + gamma * next_value - values[t]
        next_adv = delta + gamma * lam * next_adv
        next_value = values[t]
        advantages[t] = next_adv
        returns[t] = next_adv + values[t]
    return advantages, returns


def plain_gae(
    rewards: Sequence[float], values: Sequence[float], gamma: float, lam: float
) -> list[float]:
    """Textbook GAE over a sequence where every step is the agent's (terminal at the end)."""
    advantages = [0.0] * len(rewards)
    next_value = 0.0
    next_adv = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        delta = rewards[t] + gamma * next_value - values[t]
        next_adv = delta + gamma * lam * next_adv
        advantages[t] = next_adv
        next_value = values[t]
    return advantages


def group_advantages(rewards: Sequence[float], eps: float = 1e-6) -> list[float]:
    """GRPO: each trajectory's reward standardised within its group of G rollouts."""
    if len(rewards) < 2:
        raise TrainerError("a group baseline needs G > 1 rollouts of the same prompt")
    mean = sum(rewards) / len(rewards)
    var = sum((r - mean) ** 2 for r in rewards) / len(rewards)
    std = var**0.5
    return [(r - mean) / (std + eps) for r in rewards]
