"""SAO vs GRPO (and PG without DIS) on a tiny model, CPU only. Prints tables, saves a PNG.

Part 1, throughput: every environment step sleeps for a heavy-tailed time
(log-normal, median ``--latency-ms``, sigma 1.5, so a few episodes take 20-50x the
median). SAO (single rollout, async buffer) and GRPO (groups of G, synchronous
batches) run with the same workers, batch and steps in one process; we report
trajectories produced and trained per second, and the trainer's idle fraction.

Part 2, policy lag: the rollout engine is fed weights ``k`` policy versions old
(k in 0, 1, 2, 4); for SAO, GRPO and PG-without-DIS we report the mean reward over
the last third of the run, the mean fraction of action tokens masked (DIS window) or
clipped (PPO), and the mean pre-clip policy gradient norm.

Run: ``python benchmarks/sao_vs_grpo.py`` (``--quick`` for a smoke run, ``--seeds 3`` to
average the lag sweep over seeds: single-seed RL curves on this task are noisy).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envfactory.trainer.config import TrainerConfig  # noqa: E402
from envfactory.trainer.loop import Trainer  # noqa: E402
from envfactory.trainer.metrics import StepMetrics  # noqa: E402
from envfactory.trainer.models import (  # noqa: E402
    TinyModelSpec,
    build_tiny_model,
    limit_cpu_threads,
)
from envfactory.trainer.synthetic import SlowEnvironment, get_task  # noqa: E402

TASK = get_task("two_turn_recall")
OUT = Path(__file__).resolve().parent / "out"


def _config(algorithm: str, **kw: object) -> TrainerConfig:
    base: dict[str, object] = dict(
        algorithm=algorithm,
        group_size=4 if algorithm == "grpo" else 1,
        lr=3e-3,
        value_lr=3e-3,
        critic_warmup_steps=2,
        max_turns=TASK.turns,
        max_new_tokens=1,
        seed=0,
    )
    base.update(kw)
    return TrainerConfig(**base)  # type: ignore[arg-type]


def _trainer(config: TrainerConfig, env_factory=TASK.make) -> Trainer:  # type: ignore[no-untyped-def]
    return Trainer(
        config, build_tiny_model(TinyModelSpec(vocab_size=TASK.vocab_size), 0), env_factory
    )


def throughput(
    steps: int, batch: int, workers: int, latency_ms: float
) -> dict[str, dict[str, float]]:
    rng = random.Random(0)
    median = latency_ms / 1000.0

    def delay() -> float:
        return median * math.exp(rng.gauss(0.0, 1.5))

    results = {}
    for algorithm in ("sao", "grpo"):
        config = _config(algorithm, batch_size=batch, rollout_workers=workers, max_staleness=4)
        trainer = _trainer(config, lambda: SlowEnvironment(TASK.make(), delay))
        started = time.perf_counter()
        history = trainer.run(steps)
        wall = time.perf_counter() - started
        last = history[-1]
        results[algorithm] = {
            "produced_per_s": last.trajectories_per_s,
            "trained_per_s": sum(m.trajectories for m in history) / wall,
            "idle_fraction": last.trainer_idle_fraction,
            "wall_s": wall,
        }
    return results


def _summary(history: list[StepMetrics]) -> dict[str, float]:
    tail = history[-max(1, len(history) // 3) :]
    updated = [m for m in history if m.policy_updated]
    return {
        "reward": sum(m.reward_mean for m in tail) / len(tail),
        "mask": sum(m.mask_fraction for m in updated) / max(1, len(updated)),
        "grad_norm": sum(m.policy_grad_norm for m in updated) / max(1, len(updated)),
        "staleness": sum(m.staleness_mean for m in history) / len(history),
    }


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: sum(r[key] for r in rows) / len(rows) for key in rows[0]}


def lag_sweep(
    steps: int, batch: int, lags: list[int], seeds: int
) -> dict[str, dict[int, dict[str, float]]]:
    results: dict[str, dict[int, dict[str, float]]] = {}
    for algorithm in ("sao", "grpo", "pg"):
        results[algorithm] = {}
        for k in lags:
            rows = []
            for seed in range(seeds):
                config = _config(
                    algorithm,
                    batch_size=batch,
                    rollout_workers=1,
                    sync_lag=k,
                    max_staleness=k + 4,
                    seed=seed,
                )
                rows.append(_summary(_trainer(config).run(steps)))
            results[algorithm][k] = _mean(rows)
            print(f"  lag run done: {algorithm} k={k}", file=sys.stderr, flush=True)
    return results


def _plot(
    tp: dict[str, dict[str, float]], lag: dict[str, dict[int, dict[str, float]]], path: Path
) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(17, 3.6))
    names = list(tp)
    xs = range(len(names))
    axes[0].bar(
        [x - 0.2 for x in xs], [tp[n]["produced_per_s"] for n in names], 0.4, label="produced"
    )
    axes[0].bar(
        [x + 0.2 for x in xs], [tp[n]["trained_per_s"] for n in names], 0.4, label="trained"
    )
    axes[0].set_xticks(list(xs), [f"{n}\nidle {tp[n]['idle_fraction']:.2f}" for n in names])
    axes[0].set_title("trajectories/s, heavy-tailed latency")
    axes[0].legend(fontsize=7)
    for ax, key in zip(axes[1:], ("reward", "mask", "grad_norm"), strict=True):
        for algorithm, by_k in lag.items():
            ks = sorted(by_k)
            ax.plot(ks, [by_k[k][key] for k in ks], marker="o", label=algorithm)
        ax.set_xlabel("injected policy lag k")
        ax.set_title(key)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few steps, for a smoke run")
    parser.add_argument("--latency-ms", type=float, default=5.0)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--throughput-steps", type=int, default=30)
    parser.add_argument("--lag-steps", type=int, default=80)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seeds", type=int, default=1, help="lag-sweep seeds to average")
    args = parser.parse_args()
    limit_cpu_threads(1)
    tp_steps, lag_steps, batch = (
        (4, 6, 8) if args.quick else (args.throughput_steps, args.lag_steps, args.batch)
    )
    tp = throughput(tp_steps, batch, args.workers, args.latency_ms)
    print(
        f"\nthroughput: {tp_steps} steps, batch {batch}, {args.workers} workers, "
        f"log-normal step latency median {args.latency_ms} ms sigma 1.5"
    )
    print(f"{'algo':<6}{'produced/s':>12}{'trained/s':>12}{'idle':>8}{'wall s':>9}")
    for name, r in tp.items():
        print(
            f"{name:<6}{r['produced_per_s']:>12.1f}{r['trained_per_s']:>12.1f}{r['idle_fraction']:>8.2f}{r['wall_s']:>9.1f}"
        )
    lag = lag_sweep(lag_steps, batch, [0, 1, 2, 4], args.seeds)
    print(
        f"\npolicy lag: {lag_steps} steps, batch {batch}, {args.seeds} seed(s); "
        "reward = mean of the last third"
    )
    print(f"{'algo':<6}{'k':>3}{'reward':>9}{'masked':>9}{'grad':>9}{'stale':>8}")
    for name, by_k in lag.items():
        for k, r in by_k.items():
            print(
                f"{name:<6}{k:>3}{r['reward']:>9.3f}{r['mask']:>9.3f}{r['grad_norm']:>9.3f}{r['staleness']:>8.2f}"
            )
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "sao_vs_grpo.json").write_text(json.dumps({"throughput": tp, "lag": lag}, indent=1))
    print(f"\nplot: {_plot(tp, lag, OUT / 'sao_vs_grpo.png')}")


if __name__ == "__main__":
    main()
