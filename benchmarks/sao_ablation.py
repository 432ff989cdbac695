"""The ablation half of ``benchmarks/sao_vs_grpo.py``: reward curves under one budget.

Arms (the paper's Table 4 arms we can run): SAO (critic + DIS); SAO with a running-mean
baseline instead of the critic; the critic without DIS (plain PG); synchronous GRPO with
G = 8 as in the paper. Every arm gets the same budget: ``steps`` trainer steps of
``batch`` trajectories (the critic arms spend their first ``warmup`` steps on the critic
only, as the paper's recipe does, so they make ``warmup`` fewer policy updates). One
rollout thread, so each seed's run is reproducible up to thread timing; the seed sets
the model's initialisation *and* the prompt stream.

Reported per arm, over seeds: mean reward over the last third (mean ± std), steps to
0.9 (the first step whose trailing mean reward over ``window`` steps reaches 0.9; "-"
when a seed never does), critic explained variance after warm-up, masked fraction.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from envfactory.trainer.config import TrainerConfig
from envfactory.trainer.loop import Trainer
from envfactory.trainer.metrics import StepMetrics
from envfactory.trainer.models import TinyModelSpec, build_tiny_model
from envfactory.trainer.synthetic import get_task

TASK = get_task("graded_recall")
ARMS: dict[str, dict[str, object]] = {
    "sao": {"algorithm": "sao"},
    "mean-baseline": {"algorithm": "mean_baseline"},
    "critic, no DIS": {"algorithm": "pg"},
    "grpo-sync G=8": {"algorithm": "grpo", "group_size": 8},
}
TARGET = 0.9


@dataclass(frozen=True)
class Budget:
    steps: int
    batch: int
    warmup: int
    seeds: int
    window: int = 5
    lr: float = 3e-3
    value_lr: float = 3e-3


def trainer_for(arm: dict[str, object], budget: Budget, seed: int) -> Trainer:
    config = TrainerConfig(
        lr=budget.lr,
        value_lr=budget.value_lr,
        max_turns=TASK.turns,
        max_new_tokens=1,
        batch_size=budget.batch,
        rollout_workers=1,
        critic_warmup_steps=budget.warmup,
        seed=seed,
        **arm,  # type: ignore[arg-type]
    )
    policy = build_tiny_model(TinyModelSpec(vocab_size=TASK.vocab_size), seed)
    return Trainer(config, policy, TASK.make)


def steps_to(curve: list[float], target: float, window: int) -> int | None:
    for end in range(window, len(curve) + 1):
        if sum(curve[end - window : end]) / window >= target:
            return end - 1
    return None


def _run(arm: dict[str, object], budget: Budget, seed: int) -> dict[str, object]:
    history: list[StepMetrics] = trainer_for(arm, budget, seed).run(budget.steps)
    curve = [m.reward_mean for m in history]
    updated = [m for m in history if m.policy_updated]
    evs = [m.explained_variance for m in updated if m.explained_variance is not None]
    tail = curve[-max(1, len(curve) // 3) :]
    return {
        "curve": curve,
        "ev_curve": [m.explained_variance for m in history],
        "final": sum(tail) / len(tail),
        "steps_to_target": steps_to(curve, TARGET, budget.window),
        "ev": sum(evs) / len(evs) if evs else None,
        "mask": sum(m.mask_fraction for m in updated) / max(1, len(updated)),
        "updates": len(updated),
    }


def ablation(budget: Budget) -> dict[str, list[dict[str, object]]]:
    results: dict[str, list[dict[str, object]]] = {}
    for name, arm in ARMS.items():
        results[name] = []
        for seed in range(budget.seeds):
            results[name].append(_run(arm, budget, seed))
            print(f"  ablation: {name} seed {seed} done", file=sys.stderr, flush=True)
    return results


def _spread(values: list[float]) -> str:
    if not values:
        return "-"
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.3f} ± {sd:.3f}"


def print_table(results: dict[str, list[dict[str, object]]], budget: Budget) -> None:
    print(
        f"\nablation: graded_recall, {budget.steps} steps x batch {budget.batch} (critic arms: "
        f"{budget.warmup} warm-up steps), {budget.seeds} seeds, lr {budget.lr}; reward = mean "
        f"of the last third; steps to {TARGET} = first step whose {budget.window}-step "
        "trailing mean reaches it (per seed)"
    )
    print(f"{'arm':<16}{'reward':>16}{'steps to 0.9':>18}{'EV':>16}{'masked':>8}{'updates':>8}")
    for name, runs in results.items():
        finals = [float(r["final"]) for r in runs]  # type: ignore[arg-type]
        hits = ",".join(
            "-" if r["steps_to_target"] is None else str(r["steps_to_target"]) for r in runs
        )
        evs = [float(r["ev"]) for r in runs if r["ev"] is not None]  # type: ignore[arg-type]
        mask = statistics.fmean(float(r["mask"]) for r in runs)  # type: ignore[arg-type]
        print(
            f"{name:<16}{_spread(finals):>16}{hits:>18}{_spread(evs):>16}"
            f"{mask:>8.3f}{runs[0]['updates']:>8}"
        )


def plot(results: dict[str, list[dict[str, object]]], path: Path, budget: Budget) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, runs in results.items():
        curves = [list(r["curve"]) for r in runs]  # type: ignore[call-overload]
        steps = range(len(curves[0]))
        mean = [statistics.fmean(c[i] for c in curves) for i in steps]
        ax.plot(steps, _smooth(mean, budget.window), label=name)
        lo = [min(c[i] for c in curves) for i in steps]
        hi = [max(c[i] for c in curves) for i in steps]
        ax.fill_between(steps, _smooth(lo, budget.window), _smooth(hi, budget.window), alpha=0.15)
    ax.axhline(TARGET, color="grey", linewidth=0.8, linestyle="--")
    ax.axvline(budget.warmup, color="grey", linewidth=0.6, linestyle=":")
    ax.set_xlabel(f"trainer step (batch of {budget.batch})")
    ax.set_ylabel(f"batch reward ({budget.window}-step trailing mean)")
    ax.set_title(f"graded_recall, {budget.seeds} seeds (band: min-max over seeds)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _smooth(values: list[float], window: int) -> list[float]:
    return [statistics.fmean(values[max(0, i - window + 1) : i + 1]) for i in range(len(values))]
