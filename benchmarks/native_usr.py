"""One verification's CPU with the storage driver's /usr and with kernel overlays of it.

    python -m benchmarks.native_usr [--tasks DIR ...] [--runs 30]

For each task (default: the small Harbor tasks in benchmarks/tasks/), its oracle state
is verified `runs` times by an engine with `native_usr` off and `runs` times by one with
it on (`sandboxes/native_usr.py`), interleaved (off, on, on, off, …) so that the
machine's drift hits both alike. Prints, per task and mode, the machine's busy CPU
seconds per verification (median and mean) and wall seconds, and the ratio of the
medians. A benchmark prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics as st
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.sandbox_overhead import busy_cpu_s
from benchmarks.validate_throughput import add_tasks_argument, build_task
from benchmarks.verifier_cost import oracle_state
from envfactory.core.settings import load_settings
from envfactory.store import ArtifactStore
from sandboxes import DockerEngine
from verifiers.battery import gate_input
from verifiers.formats import load_task
from verifiers.runner import verifier_tar, verify_prepared

MODES = (False, True)


def measure(
    engines: dict[bool, DockerEngine], task: Path, artifacts: ArtifactStore, runs: int
) -> dict[bool, list[tuple[float, float]]]:
    """(busy CPU, wall) of each verification of `task`'s oracle, per mode."""
    loaded = load_task(task, artifacts)
    spec, engine = loaded.spec, engines[False]
    image = build_task(engine, task, artifacts)
    inp, _ = gate_input(
        engine, spec=spec, verifier=loaded.verifier, files=artifacts.get, image=image
    )
    prepared = replace(oracle_state(engine, image, spec).prepared, image=inp.verify_image or image)
    vfiles = verifier_tar(loaded.verifier, artifacts.get)
    out: dict[bool, list[tuple[float, float]]] = {m: [] for m in MODES}
    for i in range(runs + 1):  # the first pair warms caches and is not counted
        for mode in MODES if i % 2 else MODES[::-1]:
            cpu, t0 = busy_cpu_s(), time.monotonic()
            res = verify_prepared(
                engines[mode],
                prepared,
                spec=spec,
                verifier=loaded.verifier,
                verifier_files=vfiles,
            )
            if res.reward != 1:
                raise SystemExit(f"{task.name}: the oracle got reward 0 ({mode=}): {res.notes}")
            if i:
                out[mode].append((busy_cpu_s() - cpu, time.monotonic() - t0))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_tasks_argument(ap)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    base = load_settings().sandbox
    engines = {m: DockerEngine(base.model_copy(update={"native_usr": m})) for m in MODES}
    if not engines[True].native.enabled:
        print("kernel-overlay volumes are off here (not root, or turned off): nothing to compare")
    print(
        f"{'task':16s} {'/usr view':16s} {'CPU median':>11s} {'CPU mean':>9s} {'wall median':>12s}"
    )
    try:
        with tempfile.TemporaryDirectory() as tmp:
            artifacts = ArtifactStore(Path(tmp) / "artifacts")
            for task in args.tasks:
                got = measure(engines, task, artifacts, args.runs)
                for mode in MODES:
                    cpu = [c for c, _ in got[mode]]
                    wall = [w for _, w in got[mode]]
                    print(
                        f"{task.name:16s} {'kernel overlay' if mode else 'storage driver':16s} "
                        f"{st.median(cpu):10.3f}s {st.mean(cpu):8.3f}s {st.median(wall):11.3f}s"
                    )
                ratio = st.median(c for c, _ in got[True]) / st.median(c for c, _ in got[False])
                print(f"{task.name:16s} CPU ratio kernel overlay / storage driver: {ratio:.2f}")
    finally:
        for e in engines.values():
            e.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
