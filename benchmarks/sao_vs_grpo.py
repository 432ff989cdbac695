"""SAO against GRPO on a tiny model, CPU only: throughput and an ablation. Prints tables,
saves JSON and PNGs under ``benchmarks/out/``.

Part 1, throughput (``--part throughput``). Task ``long_tail_recall``: episode lengths
follow a power law (1 to 32 turns, P(n ≥ k) = k^−1.2) and every environment step
sleeps k × median × exp(z), z ~ N(0, 1) drawn per turn (``SlowTask``), so the long
episodes are the slow ones, as in agentic tasks. Arms, all with the same rollout
worker *processes* (``--workers``, default 1; weights pushed through shared memory, one
torch thread each), each playing ``--concurrent`` episodes at once (default 32: their
token steps share one batched forward, ``BatchingEngine``), at niceness
``--rollout-nice`` (default 10: the learner gets a core first), batch 32, the same
steps and max staleness 4 (before continuous batching the setting was
``--workers 8 --concurrent 1 --rollout-nice 0``):
- SAO: single rollouts enter the buffer as they finish; the critic trains (K = 2) from
  the first step (no warm-up here: the warm-up steps would count as zero-trajectory
  policy steps for nobody else);
- asynchronous GRPO: a worker plays the G = 8 rollouts of one prompt and hands the
  group to the same buffer when complete;
- synchronous GRPO: 4 prompts × G = 8 per step; the step waits for the slowest.
Reported per arm, mean ± sample std over seeds: *trained* trajectories per second and
trained tokens per second (every token of the trajectories that reached an update),
over the wall time from "all workers ready" to the last update; one row with latency,
one with none. Also: the trainer's idle fraction (waiting for data; near 0 means the
learner is the bottleneck), mean staleness and trajectories dropped as too stale. The
load average of the machine is printed with the table.

Part 2, ablation (``--part ablation``, ``sao_ablation.py``): SAO, SAO with a running-mean
baseline, the critic without DIS, synchronous GRPO (G = 8) on ``graded_recall`` under
one budget of steps × batch; reward curves and steps to 0.9 over seeds.

Run: ``python benchmarks/sao_vs_grpo.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import sao_ablation  # noqa: E402

from envfactory.trainer.config import TrainerConfig  # noqa: E402
from envfactory.trainer.loop import Trainer  # noqa: E402
from envfactory.trainer.models import (  # noqa: E402
    TinyModelSpec,
    build_tiny_model,
    limit_cpu_threads,
)
from envfactory.trainer.synthetic import SlowTask, get_task  # noqa: E402

TASK = get_task("long_tail_recall")
OUT = Path(__file__).resolve().parent / "out"
ARMS: dict[str, dict[str, object]] = {
    "sao": {"algorithm": "sao"},
    "grpo-async G=8": {"algorithm": "grpo", "group_size": 8, "grpo_async": True},
    "grpo-sync G=8": {"algorithm": "grpo", "group_size": 8},
}
BASELINE = "grpo-sync G=8"


def _load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def _run(
    arm: dict[str, object], args: argparse.Namespace, latency_ms: float, seed: int
) -> dict[str, float]:
    config = TrainerConfig(
        lr=3e-3,
        value_lr=3e-3,
        max_turns=TASK.turns,
        max_new_tokens=1,
        batch_size=args.batch,
        rollout_workers=args.workers,
        rollout_mode="processes",
        concurrent_episodes=args.concurrent,
        rollout_nice=args.rollout_nice,
        max_staleness=4,
        critic_warmup_steps=0,
        seed=seed,
        **arm,  # type: ignore[arg-type]
    )
    policy = build_tiny_model(TinyModelSpec(vocab_size=TASK.vocab_size), seed)
    history = Trainer(config, policy, SlowTask(TASK, latency_ms / 1000.0)).run(args.steps)
    wall = history[-1].wall_s
    return {
        "trained_per_s": sum(m.trajectories for m in history) / wall,
        "tokens_per_s": history[-1].tokens_per_s,
        "idle": history[-1].trainer_idle_fraction,
        "staleness": statistics.fmean(m.staleness_mean for m in history),
        "dropped_stale": history[-1].dropped_stale,
        "wall_s": wall,
    }


def throughput(args: argparse.Namespace) -> dict[str, dict[str, list[dict[str, float]]]]:
    results: dict[str, dict[str, list[dict[str, float]]]] = {}
    for latency in args.latencies:
        row = results.setdefault(f"{latency:g}", {})
        for seed in range(args.seeds):
            for name, arm in ARMS.items():  # arms interleaved: load drifts hit all alike
                row.setdefault(name, []).append(_run(arm, args, latency, seed))
                print(f"  {latency:g} ms, {name}, seed {seed}: done ({_load()})", file=sys.stderr)
    return results


def _spread(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.1f} ± {sd:.1f}"


def print_throughput(
    results: dict[str, dict[str, list[dict[str, float]]]], args: argparse.Namespace
) -> None:
    print(
        f"\nthroughput: long_tail_recall, {args.steps} steps x batch {args.batch}, "
        f"{args.workers} worker processes x {args.concurrent} episodes, {args.seeds} seeds (mean ± std); step k of an "
        f"episode sleeps k x median x exp(N(0,1)); {_load()}"
    )
    print(
        f"{'median ms':>9}  {'arm':<16}{'trained traj/s':>16}{'trained tok/s':>16}"
        f"{'x sync':>8}{'idle':>6}{'stale':>7}{'dropped':>9}"
    )
    for latency, row in results.items():
        base = statistics.fmean(r["trained_per_s"] for r in row[BASELINE])
        for name, runs in row.items():
            per_s = [r["trained_per_s"] for r in runs]
            print(
                f"{latency:>9}  {name:<16}{_spread(per_s):>16}"
                f"{_spread([r['tokens_per_s'] for r in runs]):>16}"
                f"{statistics.fmean(per_s) / base:>8.2f}"
                f"{statistics.fmean(r['idle'] for r in runs):>6.2f}"
                f"{statistics.fmean(r['staleness'] for r in runs):>7.2f}"
                f"{statistics.fmean(r['dropped_stale'] for r in runs):>9.1f}"
            )


def plot_throughput(results: dict[str, dict[str, list[dict[str, float]]]], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    rows = list(results)
    width = 0.8 / len(ARMS)
    for panel, key, label in (
        (axes[0], "trained_per_s", "trained trajectories / s"),
        (axes[1], "tokens_per_s", "trained tokens / s"),
    ):
        for i, name in enumerate(ARMS):
            runs = [[r[key] for r in results[row][name]] for row in rows]
            means = [statistics.fmean(v) for v in runs]
            sds = [statistics.stdev(v) if len(v) > 1 else 0.0 for v in runs]
            xs = [j + i * width for j in range(len(rows))]
            panel.bar(xs, means, width, yerr=sds, capsize=3, label=name)
        panel.set_xticks([j + width for j in range(len(rows))])
        panel.set_xticklabels([f"median {row} ms" for row in rows])
        panel.set_ylabel(label)
    axes[0].legend(fontsize=8)
    fig.suptitle("long_tail_recall (error bars: std over seeds)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["throughput", "ablation", "all"], default="all")
    parser.add_argument("--quick", action="store_true", help="a few steps, for a smoke run")
    parser.add_argument("--latencies", default="5,0", help="comma-separated median ms per turn")
    parser.add_argument("--workers", type=int, default=1, help="rollout worker processes")
    parser.add_argument(
        "--concurrent",
        type=int,
        default=32,
        help="episodes each worker plays at once (> 1: their token steps are batched)",
    )
    parser.add_argument(
        "--rollout-nice", type=int, default=10, help="niceness of the rollout processes"
    )
    parser.add_argument("--steps", type=int, default=12, help="throughput steps per run")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--ablation-steps", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    args.latencies = [float(x) for x in args.latencies.split(",")]
    if args.quick:
        args.steps, args.ablation_steps, args.warmup, args.seeds, args.workers = 2, 4, 1, 1, 2
    limit_cpu_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    saved: dict[str, object] = {}
    if args.part in ("throughput", "all"):
        tp = throughput(args)
        print_throughput(tp, args)
        saved["throughput"] = tp
        print(f"plot: {plot_throughput(tp, OUT / 'sao_vs_grpo_throughput.png')}")
    if args.part in ("ablation", "all"):
        budget = sao_ablation.Budget(args.ablation_steps, args.batch, args.warmup, args.seeds)
        ab = sao_ablation.ablation(budget)
        sao_ablation.print_table(ab, budget)
        print(_load())
        saved["ablation"] = ab
        print(f"plot: {sao_ablation.plot(ab, OUT / 'sao_vs_grpo_ablation.png', budget)}")
    (OUT / f"sao_vs_grpo_{args.part}.json").write_text(json.dumps(saved, indent=1))
    print(f"results: {OUT / f'sao_vs_grpo_{args.part}.json'}")


if __name__ == "__main__":
    main()
