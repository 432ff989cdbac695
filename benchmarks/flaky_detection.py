"""Flaky verifiers caught by the gates: adaptive repeats against R runs of every row.

    python -m benchmarks.flaky_detection [--runs 8] [--repeats 3] [--concurrency 4]

The corpus (`benchmarks/tasks-flaky/`): one small task (count and sum four numbers, two
reference steps, a wrong-total partial solution) under five verifiers — a sound one, the
control, and four flaky the way real verifiers are: random spot checks, the wall clock,
set order (per-run string hashing) and machine load. Each flaky one checks the count in
every run but the total only in some, so in those runs it accepts `prefix-1` and
`partial:wrong-total` (both expect 0); the oracle and the no-op never show it.

Each verifier is gated `--runs` times per mode, the modes interleaved so that load hits
both alike, with the state rows only (no probes): adaptive repeats (`GateInput`'s
default: the states R times, probe rows once unless unexpected) and R everywhere
(`adaptive_repeats=False`). With state rows only the two modes run the same rows: the
table shows that detection on these states is what R everywhere gives; what adaptive
repeats save is on the probe rows (see `validate_throughput`). A gate run detects the verifier when its verdict is not
`passed`. Prints, per verifier and mode: detection rate, mean verifications and seconds
per gate run. A benchmark prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics as st
import sys
import tempfile
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from envfactory.core.models import GateVerdict
from envfactory.core.settings import load_settings
from envfactory.store import ArtifactStore
from sandboxes import DockerEngine
from verifiers.formats import context_tar, load_task
from verifiers.gates import GateInput, run_gates_detailed

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
    engine: DockerEngine, *, runs: int, repeats: int, concurrency: int
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
            for i in range(runs):
                order = list(MODES.items()) if i % 2 == 0 else list(MODES.items())[::-1]
                for mode, adaptive in order:
                    inp = GateInput(
                        engine=engine,
                        spec=task.spec,
                        verifier=task.verifier,
                        files=artifacts.get,
                        image=image,
                        repeats=repeats,
                        probes=(),
                        concurrency=concurrency,
                        adaptive_repeats=adaptive,
                    )
                    run = run_gates_detailed(inp)
                    row.detected[mode] += run.report.verdict != GateVerdict.PASSED
                    row.verifications[mode].append(sum(len(v) for v in run.results.values()))
                    row.seconds[mode].append(run.wall_s)
            rows.append(row)
            print(f"  flaky corpus: {task_dir.name} done", file=sys.stderr, flush=True)
    return rows


def print_flaky(rows: list[FlakyRow], repeats: int) -> None:
    modes = list(MODES)
    print(
        f"flaky-verifier detection (state rows only, R={repeats}; control = a sound verifier:"
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
    ap.add_argument("--runs", type=int, default=8, help="gate runs per verifier and mode")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=4)
    args = ap.parse_args()
    sandbox = load_settings().sandbox.model_copy(
        update={"pool_size": args.concurrency, "standby": args.concurrency}
    )
    engine = DockerEngine(sandbox, run_id=f"bench-flaky-{uuid.uuid4().hex[:8]}")
    try:
        rows = flaky_table(
            engine, runs=args.runs, repeats=args.repeats, concurrency=args.concurrency
        )
    finally:
        engine.close()
        engine.gc(run_id=engine.run_id, include_live=True)
    print_flaky(rows, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
