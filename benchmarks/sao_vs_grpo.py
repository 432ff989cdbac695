"""SAO against its ablations and GRPO on a tiny model, CPU only. Prints tables, saves JSON.

Task: ``graded_recall`` (visible difficulty, checked and free turns; the task where a
state-dependent value matters, see ``envfactory/trainer/synthetic.py``).

Part 1, throughput. Every environment step sleeps: each episode draws a log-normal
speed (median ``--latency-ms``, sigma 1.5) and its k-th step takes k times that, so
long trajectories are the slow ones. SAO (single rollout, async buffer), asynchronous
GRPO (groups of G handed over when complete, no batch barrier) and synchronous GRPO
(batches of groups, waits for the slowest) run with the same workers, batch and
steps. Reported: *trained* trajectories per second (what reached an update), the
trainer's idle fraction, mean staleness and trajectories dropped as too stale.
Rollout workers are threads sharing one GIL with the learner; with no latency that
contention, not the algorithm, decides the ranking (workers as processes: not done).

Part 2, ablation (the paper's Table 4 arms we can run): SAO; SAO with a running-mean
baseline instead of the critic; PG with the critic but without DIS; synchronous GRPO.
Each at injected policy lag k (the engine serves weights k versions old), each seed
initialising the model *and* the prompt stream with that seed. Reported: mean reward
over the last third, critic explained variance after warm-up (critic arms), masked
fraction, policy updates. SAO and PG spend ``--warmup`` steps on the critic only.

Run: ``python benchmarks/sao_vs_grpo.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import json
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

TASK = get_task("graded_recall")
OUT = Path(__file__).resolve().parent / "out"
THROUGHPUT_ARMS = {
    "sao": {"algorithm": "sao"},
    "grpo-async": {"algorithm": "grpo", "group_size": 4, "grpo_async": True},
    "grpo-sync": {"algorithm": "grpo", "group_size": 4},
}
ABLATION_ARMS = {
    "sao": {"algorithm": "sao"},
    "mean-baseline": {"algorithm": "mean_baseline"},
    "pg (no DIS)": {"algorithm": "pg"},
    "grpo-sync": {"algorithm": "grpo", "group_size": 4},
}


def _trainer(arm: dict[str, object], env_factory=TASK.make, **kw: object) -> Trainer:  # type: ignore[no-untyped-def]
    options: dict[str, object] = dict(
        lr=3e-3,
        value_lr=3e-3,
        max_turns=TASK.turns,
        max_new_tokens=1,
        **arm,
    )
    options.update(kw)
    config = TrainerConfig(**options)  # type: ignore[arg-type]
    policy = build_tiny_model(TinyModelSpec(vocab_size=TASK.vocab_size), config.seed)
    return Trainer(config, policy, env_factory)


def throughput(steps: int, batch: int, workers: int, latency_ms: float) -> dict[str, dict]:
    results = {}
    for name, arm in THROUGHPUT_ARMS.items():
        trainer = _trainer(
            arm,
            lambda: SlowEnvironment(TASK.make(), latency_ms / 1000.0),
            batch_size=batch,
            rollout_workers=workers,
            max_staleness=4,
            critic_warmup_steps=0,
        )
        started = time.perf_counter()
        history = trainer.run(steps)
        wall = time.perf_counter() - started
        results[name] = {
            "trained_per_s": sum(m.trajectories for m in history) / wall,
            "idle_fraction": history[-1].trainer_idle_fraction,
            "staleness": sum(m.staleness_mean for m in history) / len(history),
            "dropped_stale": history[-1].dropped_stale,
            "wall_s": wall,
        }
        print(f"  throughput run done: {name}", file=sys.stderr, flush=True)
    return results


def _summary(history: list[StepMetrics]) -> dict[str, float | None]:
    tail = history[-max(1, len(history) // 3) :]
    updated = [m for m in history if m.policy_updated]
    evs = [m.explained_variance for m in updated if m.explained_variance is not None]
    return {
        "reward": sum(m.reward_mean for m in tail) / len(tail),
        "ev": sum(evs) / len(evs) if evs else None,
        "mask": sum(m.mask_fraction for m in updated) / max(1, len(updated)),
        "updates": float(len(updated)),
    }


def _mean(rows: list[dict[str, float | None]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key in rows[0]:
        values = [r[key] for r in rows if r[key] is not None]
        out[key] = sum(values) / len(values) if values else None  # type: ignore[arg-type]
    return out


def ablation(steps: int, batch: int, warmup: int, lags: list[int], seeds: int) -> dict:
    results: dict[str, dict[int, dict[str, float | None]]] = {}
    for name, arm in ABLATION_ARMS.items():
        results[name] = {}
        for k in lags:
            rows = []
            for seed in range(seeds):
                trainer = _trainer(
                    arm,
                    batch_size=batch,
                    rollout_workers=1,
                    sync_lag=k,
                    max_staleness=k + 4,
                    critic_warmup_steps=warmup,
                    seed=seed,
                )
                rows.append(_summary(trainer.run(steps)))
            results[name][k] = _mean(rows)
            print(f"  ablation run done: {name} k={k}", file=sys.stderr, flush=True)
    return results


def _fmt(value: float | None, spec: str) -> str:
    return format(value, spec) if value is not None else "-".rjust(len(format(0.0, spec)))


def _print_tables(tp: dict, ab: dict, args: argparse.Namespace) -> None:
    print(
        f"\nthroughput: {args.throughput_steps} steps, batch {args.batch}, {args.workers} "
        f"worker threads, step k of an episode sleeps k x log-normal(median "
        f"{args.latency_ms} ms, sigma 1.5)"
    )
    print(f"{'arm':<12}{'trained/s':>11}{'idle':>7}{'stale':>7}{'dropped':>9}{'wall s':>8}")
    for name, r in tp.items():
        print(
            f"{name:<12}{r['trained_per_s']:>11.1f}{r['idle_fraction']:>7.2f}"
            f"{r['staleness']:>7.2f}{r['dropped_stale']:>9d}{r['wall_s']:>8.1f}"
        )
    print(
        f"\nablation: {args.steps} steps (critic arms: {args.warmup} warm-up), batch "
        f"{args.batch}, {args.seeds} seed(s); reward = mean of the last third"
    )
    print(f"{'arm':<15}{'k':>3}{'reward':>8}{'EV':>7}{'masked':>8}{'updates':>9}")
    for name, by_k in ab.items():
        for k, r in by_k.items():
            print(
                f"{name:<15}{k:>3}{_fmt(r['reward'], '8.3f')}{_fmt(r['ev'], '7.2f')}"
                f"{_fmt(r['mask'], '8.3f')}{_fmt(r['updates'], '9.0f')}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few steps, for a smoke run")
    parser.add_argument("--latency-ms", type=float, default=5.0)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--throughput-steps", type=int, default=12)
    parser.add_argument("--steps", type=int, default=40, help="ablation steps per run")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lags", default="0,2", help="comma-separated policy lags")
    parser.add_argument("--seeds", type=int, default=1, help="seeds to average")
    args = parser.parse_args()
    if args.quick:
        args.throughput_steps, args.steps, args.warmup, args.batch = 2, 4, 1, 8
    limit_cpu_threads(1)
    tp = throughput(args.throughput_steps, args.batch, args.workers, args.latency_ms)
    lags = [int(k) for k in args.lags.split(",")]
    ab = ablation(args.steps, args.batch, args.warmup, lags, args.seeds)
    _print_tables(tp, ab, args)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "sao_vs_grpo.json").write_text(json.dumps({"throughput": tp, "ablation": ab}, indent=1))
    print(f"\nresults: {OUT / 'sao_vs_grpo.json'}")


if __name__ == "__main__":
    main()
