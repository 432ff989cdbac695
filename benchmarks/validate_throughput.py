"""Throughput of `envfactory validate` on the example tasks, against its floor and a naive baseline.

Prints, from one run:
- tasks/min and checks/min (checks = gate rows; each row is R repeats), and
  verifications/min (fresh verification containers actually run);
- per check: its wall time (its state's production + the mean of its verifications)
  against its floor = bare container cost (`docker run --rm IMAGE true`, measured here)
  + the verifier command's own run time + the time to produce its state;
- the same gates driven naively — per check and repeat one `docker run` / `docker cp` /
  `docker exec` (apply the state's recipe) / `docker cp` (verifier) / `docker exec` /
  `docker rm` sequence through the docker CLI, sequentially — on a sample of checks;
- where the time goes: engine calls by kind (start, exec, put/get archive, remove…).

Usage:
    python benchmarks/validate_throughput.py [--tasks examples/tasks/csv-report ...]
        [--repeats 2] [--concurrency 4] [--naive-sample 12]
"""

from __future__ import annotations

import argparse
import statistics as st
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path

from envfactory.core.settings import load_settings
from envfactory.store import ArtifactStore
from sandboxes import DockerEngine
from verifiers.validate import TaskValidation, validate_task

ROOT = Path(__file__).resolve().parents[1]


class Timed:
    """Wraps an engine (and its sandboxes) and adds up the wall time of every call by name."""

    def __init__(self, inner: object, totals: dict[str, list[float]], lock: threading.Lock) -> None:
        self._inner, self._totals, self._lock = inner, totals, lock

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        attr = getattr(self._inner, name)
        if (
            not callable(attr)
            or name.startswith("_")
            or name in {"build", "ensure_base_image", "gc"}
        ):
            return attr

        def call(*a, **kw):  # type: ignore[no-untyped-def]
            t0 = time.monotonic()
            try:
                out = attr(*a, **kw)
            finally:
                with self._lock:
                    self._totals[name].append(time.monotonic() - t0)
            return Timed(out, self._totals, self._lock) if name == "start" else out

        return call


def bare_container_s(image: str, n: int = 5) -> float:
    """Median of `docker run --rm --network none IMAGE true` (the engine's bare cost)."""
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        subprocess.run(
            ["docker", "run", "--rm", "--network", "none", image, "true"],
            check=True,
            capture_output=True,
        )
        times.append(time.monotonic() - t0)
    return st.median(times)


def exec_overhead_s(engine: DockerEngine, image: str, n: int = 5) -> float:
    """Median wall of exec'ing `true` in a warm sandbox: what an exec adds to a command."""
    with engine.sandbox(image, purpose="bench") as box:
        times = [box.exec(["true"]).duration_s for _ in range(n)]
    return st.median(times)


def naive_check(image: str, recipe: list[list[str]], vdir: Path, entry: str, workdir: str) -> float:
    """One check, one repeat, the naive way: a docker CLI call per operation."""
    t0 = time.monotonic()
    name = f"envfactory-bench-naive-{uuid.uuid4().hex[:8]}"
    run = lambda *a: subprocess.run(["docker", *a], capture_output=True)  # noqa: E731
    run("run", "-d", "--name", name, "--label", "envfactory.owner=bench", "--network", "none",
        "--entrypoint", "sleep", image, "infinity")  # fmt: skip
    try:
        for argv in recipe:
            script = Path(tempfile.mktemp())
            script.write_text(argv[-1])
            run("cp", str(script), f"{name}:/tmp/recipe.sh")
            script.unlink()
            run("exec", "-w", workdir, name, argv[0], "/tmp/recipe.sh")
        run("exec", name, "mkdir", "-p", "/tests")
        run("cp", f"{vdir}/.", f"{name}:/tests")
        run("exec", "-w", "/tests", "-e", "VERIFIER_DIR=/tests", name, "sh", "-c", entry)
    finally:
        run("rm", "-f", name)
    return time.monotonic() - t0


def naive_sample(
    results: list[TaskValidation], artifacts: ArtifactStore, n: int, repeats: int
) -> tuple[int, float]:
    """Run `n` checks (spread over the tasks) naively, `repeats` times each; (runs, seconds)."""
    from verifiers.formats import materialize

    picks = []
    for res in results:
        for name, state in res.run.states.items():
            picks.append((res, name, state))
    step = max(1, len(picks) // max(n, 1))
    picks = picks[::step][:n]
    total, runs = 0.0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (res, _name, state) in enumerate(picks):
            vdir = Path(tmp) / str(i)
            materialize(res.task.verifier.files, artifacts.get, vdir)
            recipe = [list(r.argv) for r in state.recipe]
            for _ in range(repeats):
                total += naive_check(
                    res.image, recipe, vdir, res.task.verifier.entry, res.task.spec.workdir
                )
                runs += 1
    return runs, total


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--tasks", nargs="*", type=Path, default=sorted((ROOT / "examples/tasks").iterdir())
    )
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument(
        "--naive-sample", type=int, default=12, help="checks run the naive way (sequential)"
    )
    args = ap.parse_args()
    tasks = [t for t in args.tasks if t.is_dir()]

    settings = load_settings()
    engine = DockerEngine(
        settings.sandbox.model_copy(update={"pool_size": args.concurrency}),
        run_id=f"bench-{uuid.uuid4().hex[:8]}",
    )
    totals: dict[str, list[float]] = defaultdict(list)
    timed = Timed(engine, totals, threading.Lock())
    results: list[TaskValidation] = []
    with tempfile.TemporaryDirectory() as tmp:
        artifacts = ArtifactStore(Path(tmp) / "artifacts")
        # Build first (cached by content) so the timed part is the gates alone.
        from verifiers.formats import context_tar, load_task

        for t in tasks:
            task = load_task(t, artifacts)
            engine.build(
                context_tar(task.spec.build, artifacts.get), dockerfile=task.spec.build.dockerfile
            )
        first_image = engine.build(
            context_tar(load_task(tasks[0], artifacts).spec.build, artifacts.get)
        ).image
        bare = bare_container_s(first_image)
        exec_over = exec_overhead_s(engine, first_image)
        t0 = time.monotonic()
        for t in tasks:
            res = validate_task(
                timed, t, artifacts, repeats=args.repeats, concurrency=args.concurrency
            )  # type: ignore[arg-type]
            results.append(res)
            print(
                f"  {t.name:28s} {res.report.verdict.value:6s} {len(res.report.checks):3d} checks  {res.run.wall_s:6.1f}s",
                flush=True,
            )
        wall = time.monotonic() - t0
        naive_runs, naive_s = naive_sample(results, artifacts, args.naive_sample, 1)
    engine.gc(run_id=engine.run_id, include_live=True)
    subprocess.run(
        "docker ps -aq --filter label=envfactory.owner=bench | xargs -r docker rm -f",
        shell=True,
        capture_output=True,
    )
    report(results, totals, wall, bare, exec_over, naive_runs, naive_s, args)
    return 0


def report(results, totals, wall, bare, exec_over, naive_runs, naive_s, args) -> None:  # type: ignore[no-untyped-def]
    checks = sum(len(r.report.checks) for r in results)
    verifs = len(totals["start"]) - sum(1 for _ in ())  # every start: productions + verifications
    n_verify = sum(len(v) for r in results for k, v in r.run.results.items())
    walls, floors = [], []
    for r in results:
        for t in r.run.timings:
            if t.shared_with or not t.verify_s:
                continue
            cmd = max(st.mean(t.command_s) - exec_over, 0.0)
            walls.append(t.produce_s + st.mean(t.verify_s))
            floors.append(t.produce_s + bare + cmd)
    ratios = sorted(w / f for w, f in zip(walls, floors, strict=True))
    naive_check_s = naive_s / max(naive_runs, 1) * args.repeats  # one check = R repeats
    ours_per_min = checks / wall * 60
    naive_per_min = 60 / naive_check_s if naive_check_s else float("nan")
    print()
    print(
        f"tasks: {len(results)}   repeats: {args.repeats}   concurrency: {args.concurrency}   wall: {wall:.1f}s"
    )
    print(f"tasks/min: {len(results) / wall * 60:.2f}   checks/min: {ours_per_min:.1f}   "
          f"verifications/min: {n_verify / wall * 60:.1f}   ({checks} checks, {n_verify} verification containers, "
          f"{checks * args.repeats - n_verify} repeats shared between identical states)")  # fmt: skip
    print(
        f"bare container (docker run --rm IMAGE true): {bare:.3f}s   exec overhead: {exec_over:.3f}s"
    )
    if ratios:
        print(f"per-check wall / floor: median {st.median(ratios):.2f}x  p90 {ratios[int(0.9 * (len(ratios) - 1))]:.2f}x  "
              f"max {ratios[-1]:.2f}x  aggregate {sum(walls) / sum(floors):.2f}x  over {len(ratios)} verified checks")  # fmt: skip
        print(f"  mean wall {st.mean(walls):.2f}s  mean floor {st.mean(floors):.2f}s")
    print(f"naive baseline: {naive_runs} check-runs sequential via docker CLI, {naive_s / max(naive_runs, 1):.2f}s each "
          f"-> {naive_per_min:.1f} checks/min at R={args.repeats}   speed-up: {ours_per_min / naive_per_min:.1f}x")  # fmt: skip
    print("where the time goes (engine calls, summed over threads):")
    for name, vals in sorted(totals.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {name:12s} n={len(vals):5d}  total {sum(vals):8.1f}s  mean {st.mean(vals):.3f}s")
    _ = verifs


if __name__ == "__main__":
    sys.exit(main())
