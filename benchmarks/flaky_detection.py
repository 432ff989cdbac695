"""Flaky verifiers caught by the gates: adaptive repeats against R runs of every row.

    python -m benchmarks.flaky_detection [--runs 4] [--repeats 3] [--concurrency 4]
        [--battery full|states]

The corpus (`benchmarks/tasks-flaky/`): one small task (count and sum four numbers, two
reference steps, a wrong-total partial solution) under five verifiers — a sound one, the
control, and four flaky the way real verifiers are: random spot checks, the wall clock,
set order (per-run string hashing) and machine load. Each flaky one checks the count in
every run but the total only in some, so in those runs it accepts `prefix-1` and
`partial:wrong-total` (both expect 0) and the probe rows on them that leave the count as
it is; the oracle and the no-op never show it.

Each verifier is gated `--runs` times per mode, the modes interleaved so that load hits
both alike: adaptive repeats (`GateInput`'s default: the oracle and the no-op R times,
unsolved states once when probes resample them, probe rows once, any row R times when
unexpected) and R everywhere (`adaptive_repeats=False`: every row R times from the start,
the gates' first behaviour). `--battery full` (the default) gates with the whole battery
as a task gets it (probes, traced probes, oracle-derived states); `--battery states`
with the state rows only (no probes: then the unsolved states run R times in both modes).
A gate run detects the verifier when its verdict is not `passed`. Prints, per verifier
and mode: detection rate, mean verifications and seconds per gate run. A benchmark
prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics as st
import sys
import tempfile
import uuid
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

from envfactory.core.models import GateVerdict
from envfactory.core.settings import load_settings
from envfactory.store import ArtifactStore
from sandboxes import DockerEngine
from verifiers.battery import gate_input
from verifiers.formats import context_tar, load_task
from verifiers.gates import run_gates_detailed

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "tasks-flaky"
MODES = {"adaptive": True, "R everywhere": False}


@dataclass
class FlakyRow:
    verifier: str
    runs: int = 0
    detected: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    verifications: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    seconds: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))


def flaky_table(
    engine: DockerEngine, *, runs: int, repeats: int, concurrency: int, battery: str = "full"
) -> list[FlakyRow]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        artifacts = ArtifactStore(Path(tmp) / "artifacts")
        for task_dir in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
            task = load_task(task_dir, artifacts)
            image = engine.build(
                context_tar(task.spec.build, artifacts.get), dockerfile=task.spec.build.dockerfile
            ).image
            row = FlakyRow(task_dir.name, runs)
            base, _ = gate_input(
                engine,
                spec=task.spec,
                verifier=task.verifier,
                files=artifacts.get,
                image=image,
                repeats=repeats,
                concurrency=concurrency,
                probes=None if battery == "full" else (),
            )
            for i in range(runs):
                order = list(MODES.items()) if i % 2 == 0 else list(MODES.items())[::-1]
                for mode, adaptive in order:
                    run = run_gates_detailed(replace(base, adaptive_repeats=adaptive))
                    row.detected[mode] += run.report.verdict != GateVerdict.PASSED
                    row.verifications[mode].append(sum(len(v) for v in run.results.values()))
                    row.seconds[mode].append(run.wall_s)
            rows.append(row)
            print(f"  flaky corpus: {task_dir.name} done", file=sys.stderr, flush=True)
    return rows


def print_flaky(rows: list[FlakyRow], repeats: int, battery: str = "full") -> None:
    modes = list(MODES)
    rows_run = "the whole battery" if battery == "full" else "state rows only"
    print(
        f"flaky-verifier detection ({rows_run}, R={repeats}; control = a sound verifier:"
        " a detection there is a false alarm)"
    )
    head = "".join(f" | {m + ': detected':>22} {'verif.':>7} {'s':>6}" for m in modes)
    print(f"  {'verifier':<10}{head}")
    for r in rows:
        cells = "".join(
            f" | {r.detected[m]:>11d}/{r.runs:<3d} {100 * r.detected[m] / max(r.runs, 1):>5.0f}%"
            f" {st.mean(r.verifications[m]):>7.1f} {st.mean(r.seconds[m]):>6.1f}"
            for m in modes
        )
        print(f"  {r.verifier:<10}{cells}")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=4, help="gate runs per verifier and mode")
    ap.add_argument("--battery", choices=("full", "states"), default="full")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=4)
    args = ap.parse_args()
    sandbox = load_settings().sandbox.model_copy(
        update={"pool_size": args.concurrency, "standby": args.concurrency}
    )
    engine = DockerEngine(sandbox, run_id=f"bench-flaky-{uuid.uuid4().hex[:8]}")
    try:
        rows = flaky_table(
            engine,
            runs=args.runs,
            repeats=args.repeats,
            concurrency=args.concurrency,
            battery=args.battery,
        )
    finally:
        engine.close()
        engine.gc(run_id=engine.run_id, include_live=True)
    print_flaky(rows, args.repeats, args.battery)
    return 0


if __name__ == "__main__":
    sys.exit(main())
