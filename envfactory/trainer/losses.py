"""Policy losses: DIS (SAO), plain policy gradient, and PPO-clip (the GRPO baseline).

All three take per-token tensors of shape ``[B, T]`` and compute in fp32.

DIS, direct double-sided importance sampling (MISSION.md, SAO section)::

    r_t   = exp(log πθ(a_t|s_t) − log π_rollout(a_t|s_t))
    f(x)  = x  if 1 − ε_l < x < 1 + ε_h  else 0        (open interval)
    L     = − Σ_t sg(f(r_t)) · Â_t · log πθ(a_t|s_t) / N

``π_rollout`` is the logprob the rollout engine recorded when it sampled the token;
no π_old is recomputed. Tokens outside the window are *masked* (weight 0), never
clipped, so a boundary value such as r = 1 − ε_l exactly is masked. "Exactly" is
meant in the ratio's own dtype: the bounds are the decimal 1 − ε_l and 1 + ε_h
rounded once to that dtype (in float64, ``1.0 - 0.8`` is 0.19999999999999996, which
would keep r = 0.2; ``dis_bounds`` computes 0.2).

Normaliser N: the number of action tokens in the batch, kept or masked. Masked tokens
therefore still count in the denominator: when many tokens fall outside the window
the update shrinks instead of putting all its weight on the few that survived. The
gradient of one kept token is −r_t · Â_t · ∇log πθ / N, the importance-weighted
policy gradient (sg(r)·∇log π = ∇r).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import torch

from envfactory.core.errors import TrainerConfigError


@dataclass(frozen=True)
class DISConfig:
    """The DIS trust window: keep a token iff 1 − eps_low < r < 1 + eps_high."""

    eps_low: float
    eps_high: float

    def __post_init__(self) -> None:
        if not (0.0 < self.eps_low <= 1.0) or self.eps_high <= 0.0:
            raise TrainerConfigError(
                f"DIS window needs 0 < eps_low <= 1 and eps_high > 0, got "
                f"eps_low={self.eps_low}, eps_high={self.eps_high}",
                hint="use a preset: reasoning (0.3, 5.0) or coding (0.8, 3.0)",
            )


DIS_PRESETS: dict[str, DISConfig] = {
    "reasoning": DISConfig(eps_low=0.3, eps_high=5.0),
    "coding": DISConfig(eps_low=0.8, eps_high=3.0),
}


@dataclass(frozen=True)
class LossOutput:
    """The scalar to backpropagate plus what the metrics need (all detached floats)."""

    loss: torch.Tensor
    keep_fraction: float
    mask_fraction: float


def _nearest(value: Decimal, dtype: torch.dtype) -> torch.Tensor:
    """The ``dtype`` number nearest to the exact decimal ``value`` (one rounding)."""
    guess = torch.tensor(float(value), dtype=torch.float64).to(dtype)
    candidates = (
        torch.nextafter(guess, torch.tensor(-torch.inf, dtype=dtype)),
        guess,
        torch.nextafter(guess, torch.tensor(torch.inf, dtype=dtype)),
    )
    return min(candidates, key=lambda c: abs(Decimal(float(c)) - value))


def dis_bounds(config: DISConfig, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """(1 − ε_l, 1 + ε_h) as the ``dtype`` numbers nearest to the decimal bounds."""
    one = Decimal(1)
    low = _nearest(one - Decimal(repr(config.eps_low)), dtype)
    high = _nearest(one + Decimal(repr(config.eps_high)), dtype)
    return low, high


def dis_keep_mask(ratio: torch.Tensor, config: DISConfig) -> torch.Tensor:
    """Tokens whose ratio lies strictly inside the window (NaN and inf are masked)."""
    low, high = dis_bounds(config, ratio.dtype)
    return (ratio > low.to(ratio.device)) & (ratio < high.to(ratio.device))


def _action_count(action_mask: torch.Tensor) -> torch.Tensor:
    # clamp: an all-observation batch gives a zero loss rather than a NaN
    return action_mask.sum().clamp(min=1).to(torch.float32)


def _ratio(
    logp: torch.Tensor, rollout_logp: torch.Tensor, action_mask: torch.Tensor
) -> torch.Tensor:
    log_ratio = (logp.detach() - rollout_logp).masked_fill(~action_mask, 0.0)
    return torch.exp(log_ratio.to(torch.float32))


def dis_loss(
    logp: torch.Tensor,
    rollout_logp: torch.Tensor,
    advantages: torch.Tensor,
    action_mask: torch.Tensor,
    config: DISConfig,
) -> LossOutput:
    """The SAO policy loss; see the module docstring for the normaliser."""
    logp = logp.to(torch.float32)
    ratio = _ratio(logp, rollout_logp.to(torch.float32), action_mask)
    keep = dis_keep_mask(ratio, config) & action_mask
    weight = torch.where(keep, ratio, torch.zeros_like(ratio)).detach()
    n = _action_count(action_mask)
    loss = -(weight * advantages.to(torch.float32) * logp).masked_fill(~action_mask, 0.0).sum() / n
    kept = float(keep.sum()) / float(n)
    return LossOutput(loss, kept, 1.0 - kept)


def pg_loss(
    logp: torch.Tensor,
    rollout_logp: torch.Tensor,
    advantages: torch.Tensor,
    action_mask: torch.Tensor,
) -> LossOutput:
    """Plain policy gradient: − Σ Â · log πθ / N; treats every token as on-policy."""
    del rollout_logp  # the signature matches the other losses; PG never looks at it
    logp = logp.to(torch.float32)
    n = _action_count(action_mask)
    loss = -(advantages.to(torch.float32) * logp).masked_fill(~action_mask, 0.0).sum() / n
    return LossOutput(loss, 1.0, 0.0)


def ppo_clip_loss(
    logp: torch.Tensor,
    rollout_logp: torch.Tensor,
    advantages: torch.Tensor,
    action_mask: torch.Tensor,
    clip: float = 0.2,
) -> LossOutput:
    """PPO-clip against the rollout logprob, as a standard GRPO trainer uses it."""
    logp = logp.to(torch.float32)
    adv = advantages.to(torch.float32)
    ratio = torch.exp((logp - rollout_logp.to(torch.float32)).masked_fill(~action_mask, 0.0))
    unclipped = ratio * adv
    clipped = ratio.clamp(1.0 - clip, 1.0 + clip) * adv
    n = _action_count(action_mask)
    loss = -torch.minimum(unclipped, clipped).masked_fill(~action_mask, 0.0).sum() / n
    # "masked" here means: clipped, so the token gives no gradient
    active = (unclipped <= clipped) & action_mask
    kept = float(active.sum()) / float(n)
    return LossOutput(loss, kept, 1.0 - kept)
