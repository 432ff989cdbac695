"""Per-step training metrics and their PNG plots.

``logprob_mismatch`` is mean |log π_train − log π_rollout| over the batch's action
tokens that were sampled with exactly the weights the trainer holds (same version);
``None`` when the batch has none (all tokens stale). ``None`` always means "not
measured this step" (no critic in GRPO, no same-version tokens), never zero. ``trainer_idle_fraction`` is the
share of wall time the trainer spent waiting for data since the run started;
``tokens_per_s`` counts every token of the trained trajectories per wall second and
``trajectories_per_s`` every finished rollout (trained, dropped or still buffered).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

PLOTTED: tuple[str, ...] = (
    "reward_mean",
    "mask_fraction",
    "logprob_mismatch",
    "staleness_mean",
    "value_loss",
    "explained_variance",
    "policy_grad_norm",
    "entropy",
    "tokens_per_s",
    "trainer_idle_fraction",
)


class StepMetrics(BaseModel):
    model_config = ConfigDict(frozen=True)

    step: int
    policy_version: int
    policy_updated: bool
    trajectories: int
    reward_mean: float
    keep_fraction: float
    mask_fraction: float
    logprob_mismatch: float | None
    staleness_mean: float
    staleness_max: int
    value_loss: float | None
    explained_variance: float | None
    policy_grad_norm: float
    critic_grad_norm: float
    entropy: float
    tokens_per_s: float
    trajectories_per_s: float
    trainer_idle_fraction: float
    dropped_stale: int
    wall_s: float


def _finite(values: Sequence[float | None]) -> list[float]:
    return [v if v is not None and math.isfinite(v) else math.nan for v in values]


def plot_metrics(history: Sequence[StepMetrics], path: Path, title: str = "") -> Path:
    """One small panel per metric in ``PLOTTED``; returns the PNG's path."""
    import matplotlib

    matplotlib.use("Agg")  # headless: never needs a display
    import matplotlib.pyplot as plt

    cols = 5
    rows = math.ceil(len(PLOTTED) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    steps = [m.step for m in history]
    for ax, name in zip(axes.flat, PLOTTED, strict=False):
        ax.plot(steps, _finite([getattr(m, name) for m in history]), linewidth=1.2)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("step", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(PLOTTED) :]:
        ax.axis("off")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
