"""Sandbox overhead against the docker CLI, measured in the same run.

    python benchmarks/sandbox_overhead.py [--n 20] [--image IMAGE]

Prints p50/p95 of start → exec `true` → remove through `DockerEngine`, of `run` → remove
(`true` as the container's own command: how a verification runs), of
`docker run --rm --network none IMAGE true`, their ratio (goal ≤ 1.3×), the machine's
busy CPU seconds per container on each path (/proc/stat: the engine's own processes
count, and on 2 cores CPU is what a gate run is short of), and what `exec`, `snapshot()`
and `restart()` cost. The two loops are interleaved so that load
from other processes on the machine hits both alike. A benchmark prints numbers; it
asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections.abc import Callable

from envfactory.core.models import BuildContext, EnvironmentSpec, Purpose, StateKind, Step
from envfactory.core.settings import SandboxSettings
from sandboxes import DockerEngine
from verifiers import statediff


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


_HZ = os.sysconf("SC_CLK_TCK")


def busy_cpu_s() -> float:
    """CPU seconds the whole machine has spent busy (not idle, not waiting on I/O)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / _HZ


def timed(fn: Callable[[], object], cpu: list[float] | None = None) -> float:
    c, t = busy_cpu_s(), time.perf_counter()
    fn()
    if cpu is not None:
        cpu.append(busy_cpu_s() - c)
    return time.perf_counter() - t


def row(name: str, xs: list[float]) -> str:
    return (
        f"{name:<44} p50 {pct(xs, 0.5) * 1000:8.1f} ms   p95 {pct(xs, 0.95) * 1000:8.1f} ms"
        f"   mean {statistics.fmean(xs) * 1000:8.1f} ms   n={len(xs)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--image", default=None, help="default: the local python base image")
    args = ap.parse_args()
    engine = DockerEngine(SandboxSettings(pool_size=4), run_id="benchmark")
    image = args.image or engine.ensure_base_image("python")
    cli = ["docker", "run", "--rm", "--network", "none", image, "true"]
    # The same lockdown as a sandbox, to separate the cost of the limits from ours.
    locked = [
        "docker",
        "run",
        "--rm",
        "--network",
        "none",
        "--init",
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--memory",
        "1024m",
        "--memory-swap",
        "1024m",
        "--cpus",
        "1",
        "--pids-limit",
        "256",
        image,
        "true",
    ]

    def ours() -> None:
        sb = engine.start(image, purpose=Purpose.BENCHMARK)
        try:
            assert sb.exec(["true"]).exit_code == 0
        finally:
            sb.remove()

    def once() -> None:
        res, sb = engine.run(image, ["true"], purpose=Purpose.BENCHMARK)
        sb.remove()
        assert res.exit_code == 0

    ours(), once(), subprocess.run(cli, check=True)  # warm every path
    ours_t, cli_t, locked_t, once_t = [], [], [], []
    ours_cpu: list[float] = []
    locked_cpu: list[float] = []
    once_cpu: list[float] = []
    for _ in range(args.n):
        ours_t.append(timed(ours, ours_cpu))
        once_t.append(timed(once, once_cpu))
        cli_t.append(timed(lambda: subprocess.run(cli, check=True)))
        locked_t.append(timed(lambda: subprocess.run(locked, check=True), locked_cpu))

    exec_t, diff_t, daemon_diff_t, snap_t, commit_t, restart_t = [], [], [], [], [], []
    listing_t: list[float] = []
    listing_cpu: list[float] = []
    spec = EnvironmentSpec(
        id="bench",
        name="bench",
        instruction="-",
        build=BuildContext(files=()),
        reference_solution=(Step(script="true"),),
    )
    statediff.pristine_listing(engine, image, spec)
    with engine.sandbox(image, purpose=Purpose.BENCHMARK) as sb:
        sb.exec("mkdir -p /workspace && head -c 1000000 /dev/urandom > /workspace/blob")
        for _ in range(max(3, args.n // 4)):
            exec_t.append(timed(lambda: sb.exec(["true"])))
            diff_t.append(timed(sb.diff))
            daemon_diff_t.append(timed(lambda: sb.diff(via_daemon=True)))
            listing_t.append(timed(lambda: statediff.listing(sb, spec), listing_cpu))
            t = time.perf_counter()
            ref = sb.snapshot(StateKind.PROBE, "bench")
            snap_t.append(time.perf_counter() - t)
            engine.remove_image(ref.image)
            t = time.perf_counter()
            ref = sb.snapshot(StateKind.PROBE, "bench", with_diff=False, method="commit")
            commit_t.append(time.perf_counter() - t)
            engine.remove_image(ref.image)
            restart_t.append(timed(sb.restart))

    print(f"image: {image}   runtime: {engine.runtime()}")
    print(row("DockerEngine start -> exec true -> remove", ours_t))
    print(row("docker run --rm --network none IMAGE true", cli_t))
    print(
        f"{'ratio (ours / CLI)':<44} p50 {pct(ours_t, 0.5) / pct(cli_t, 0.5):8.2f} x"
        f"    p95 {pct(ours_t, 0.95) / pct(cli_t, 0.95):8.2f} x    (goal <= 1.3x)"
    )
    print(row("docker run --rm with the sandbox's limits", locked_t))
    print(
        f"{'ratio (ours / CLI with the same limits)':<44} p50 "
        f"{pct(ours_t, 0.5) / pct(locked_t, 0.5):8.2f} x"
    )
    print(
        f"{'busy CPU per container, machine-wide':<44} ours {statistics.fmean(ours_cpu):.3f} s"
        f"   CLI with the same limits {statistics.fmean(locked_cpu):.3f} s"
        f"   ratio {statistics.fmean(ours_cpu) / statistics.fmean(locked_cpu):.2f} x"
    )
    print(row("DockerEngine.run true (own cmd) -> remove", once_t))
    print(
        f"{'busy CPU per container, run vs start + exec':<44} run {statistics.fmean(once_cpu):.3f} s"
        f"   start + exec {statistics.fmean(ours_cpu):.3f} s"
        f"   ratio {statistics.fmean(once_cpu) / statistics.fmean(ours_cpu):.2f} x"
    )
    print(row("exec true in a running sandbox", exec_t))
    print(row("diff() from the overlay upper dir", diff_t))
    print(row("diff(via_daemon=True) (docker diff)", daemon_diff_t))
    print(
        row("state listing (live_diff where no upper dir)", listing_t)
        + f"   CPU {statistics.fmean(listing_cpu):.3f} s"
    )
    print(row("snapshot() (diff + layer load, 1 MB change)", snap_t))
    print(row("snapshot(method='commit') (docker commit)", commit_t))
    print(row("restart() (every process ends, fs kept)", restart_t))


if __name__ == "__main__":
    main()
