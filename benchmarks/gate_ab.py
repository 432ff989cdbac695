"""Gate seconds per task of two checkouts, side by side in one run (A B, B A, A B, …).

    python benchmarks/gate_ab.py --a ../before --b . [--tasks DIR ...] [--rounds 4]
        [--repeats 3] [--concurrency 2]

Each round gates every task once with each checkout, in a fresh process whose
PYTHONPATH is that checkout (its gates, runner and engine; the same venv, Docker and
base images), the order alternating round by round so that load from anything else hits
both alike. A task's figure is `run_gates`' wall (`GateRun.wall_s`: after the build and
the verification layer, which both share from the engine's cache). Prints each task's
seconds per checkout (median over rounds), the seconds per task of each, and B/A: per
round and their median. Always exits 0: a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: run in a checkout's own process: gate each task once, print {task: gate seconds}
CHILD = """
import json, sys, tempfile, uuid
from pathlib import Path
from envfactory.core.settings import load_settings
from envfactory.store import ArtifactStore
from sandboxes import DockerEngine
from verifiers.validate import validate_task

repeats, concurrency, paths = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
settings = load_settings().sandbox.model_copy(update={"pool_size": concurrency})
engine = DockerEngine(settings, run_id=f"gate-ab-{uuid.uuid4().hex[:8]}")
out = {}
try:
    with tempfile.TemporaryDirectory() as tmp:
        artifacts = ArtifactStore(Path(tmp) / "artifacts")
        for p in paths:
            res = validate_task(engine, Path(p), artifacts, repeats=repeats, concurrency=concurrency)
            out[Path(p).name] = [res.run.wall_s, res.report.verdict.value]
finally:
    engine.gc(run_id=engine.run_id, include_live=True)
print(json.dumps(out))
"""


def gate(checkout: Path, tasks: list[Path], repeats: int, concurrency: int) -> dict[str, list]:
    env = os.environ | {"PYTHONPATH": str(checkout.resolve())}
    argv = [sys.executable, "-c", CHILD, str(repeats), str(concurrency), *map(str, tasks)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{checkout}: the gate run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--a", type=Path, required=True, help="the checkout measured first (before)")
    ap.add_argument("--b", type=Path, required=True, help="the other checkout (after)")
    default = sorted(p for p in (ROOT / "benchmarks/tasks").iterdir() if p.is_dir())
    ap.add_argument("--tasks", nargs="*", type=Path, default=default)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=2)
    args = ap.parse_args()
    runs: dict[str, list[dict[str, list]]] = {"A": [], "B": []}
    for r in range(args.rounds):
        order = [("A", args.a), ("B", args.b)] if r % 2 == 0 else [("B", args.b), ("A", args.a)]
        for label, checkout in order:
            runs[label].append(gate(checkout, args.tasks, args.repeats, args.concurrency))
            print(f"round {r + 1} {label}: {runs[label][-1]}", file=sys.stderr, flush=True)
    report(args, runs)
    return 0


def report(args: argparse.Namespace, runs: dict[str, list[dict[str, list]]]) -> None:
    names = [t.name for t in args.tasks]
    print(
        f"A = {args.a}   B = {args.b}   rounds {args.rounds}, repeats {args.repeats}, "
        f"concurrency {args.concurrency}"
    )
    print(f"  {'task':24s} {'A s (median)':>14s} {'B s (median)':>14s} {'B/A':>7s}  verdicts A / B")
    for n in names:
        a = statistics.median(run[n][0] for run in runs["A"])
        b = statistics.median(run[n][0] for run in runs["B"])
        verdicts = f"{sorted({run[n][1] for run in runs['A']})} / {sorted({run[n][1] for run in runs['B']})}"
        print(f"  {n:24s} {a:14.1f} {b:14.1f} {b / a:7.3f}  {verdicts}")
    per_round = [
        sum(rb[n][0] for n in names) / sum(ra[n][0] for n in names)
        for ra, rb in zip(runs["A"], runs["B"], strict=True)
    ]
    a_task = statistics.median(sum(r[n][0] for n in names) / len(names) for r in runs["A"])
    b_task = statistics.median(sum(r[n][0] for n in names) / len(names) for r in runs["B"])
    print(f"  seconds per task: A {a_task:.1f}, B {b_task:.1f}")
    print(
        f"  B/A per round: {', '.join(f'{x:.3f}' for x in per_round)}; median {statistics.median(per_round):.3f}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
