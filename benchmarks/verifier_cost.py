"""What one verification costs besides the verifier's own checks, measured on one task.

    python benchmarks/verifier_cost.py [--task benchmarks/tasks/word-count] [--n 8]

Every row runs in fresh containers handed out by the engine's standby (so no row pays a
container start), each measured `--n` times; the rows are interleaved so that load from
other processes hits them alike. Prints p50/p95 of:
- exec `true`: the floor of any exec (Docker's exec round trip);
- the interpreter: `python3 -I -S -c pass`, then with `site`, then `import pytest`;
- pytest collecting the task's tests (`--co`), then running them: the verifier's own
  cost before and after its first test;
- the same pytest run again in a container that already ran it once (what fuse-overlayfs
  page caching per container costs a fresh container);
- the runner's whole verification of the oracle state (`verify_prepared`): its exec
  (staging + entry + reward file) and container-to-reward, with what the runner adds over
  the bare entry; and, for a Harbor-format task, what reading the reward file by a second
  exec costs (the runner did that before it read the file in the verification's own exec).
A benchmark prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from envfactory.core.models import EnvironmentSpec, Purpose, StateKind
from envfactory.core.models.rows import RowId
from envfactory.core.settings import load_settings
from envfactory.store import ArtifactStore
from sandboxes import DockerEngine
from sandboxes.protocol import Sandbox
from verifiers.formats import context_tar, load_task
from verifiers.reward_file import read_reward_file
from verifiers.runner import verifier_tar, verify_prepared
from verifiers.states import ProducedState, produce_chain

ROOT = Path(__file__).resolve().parents[1]
PY = "/usr/local/bin/python3"
TRIVIAL = "runner: its exec, entry only writing the reward"


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def in_fresh(
    engine: DockerEngine,
    image: str,
    spec: EnvironmentSpec,
    vdir: dict[str, bytes],
    argv: list[str],
    *,
    twice: bool = False,
) -> float:
    """Seconds of one exec of `argv` in a fresh container holding the tests at /tests
    (with `twice`, the second of two runs)."""
    box = engine.start(image, limits=spec.limits, purpose=Purpose.VERIFY, network=False)
    try:
        _put_tests(box, vdir)
        if twice:
            box.exec(argv, workdir="/tests")
        t0 = time.perf_counter()
        box.exec(argv, workdir="/tests")
        return time.perf_counter() - t0
    finally:
        box.remove()


def reward_read_s(
    engine: DockerEngine,
    image: str,
    spec: EnvironmentSpec,
    vdir: dict[str, bytes],
    entry: str,
    reward_dir: str,
) -> float:
    """Seconds of reading the reward file by an exec of its own after the entry ran (what
    the runner did for every Harbor-format verification before it read it in the same exec)."""
    box = engine.start(image, limits=spec.limits, purpose=Purpose.VERIFY, network=False)
    try:
        _put_tests(box, vdir)
        box.exec(["sh", "-c", entry], workdir="/tests")
        t0 = time.perf_counter()
        assert read_reward_file(box, reward_dir) is not None
        return time.perf_counter() - t0
    finally:
        box.remove()


def _put_tests(box: Sandbox, vdir: dict[str, bytes]) -> None:
    for name, data in vdir.items():
        box.write_file(f"/tests/{name}", data)
    box.exec(["mkdir", "-p", "/logs/verifier"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", type=Path, default=ROOT / "benchmarks/tasks/word-count")
    ap.add_argument("--n", type=int, default=8)
    args = ap.parse_args()
    settings = load_settings().sandbox.model_copy(update={"pool_size": 2, "standby": 2})
    engine = DockerEngine(settings, run_id=f"bench-cost-{uuid.uuid4().hex[:8]}")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            artifacts = ArtifactStore(Path(tmp) / "a")
            task = load_task(args.task, artifacts)
            spec = task.spec
            image = engine.build(
                context_tar(spec.build, artifacts.get), dockerfile=spec.build.dockerfile
            ).image
            rows = measure(engine, image, task, artifacts, args.n)
    finally:
        engine.close()
        engine.gc(run_id=engine.run_id, include_live=True)
    print(f"task: {args.task.name}   n={args.n} per row   (fresh containers from standby)")
    for name, xs in rows.items():
        print(
            f"  {name:<52} p50 {pct(xs, 0.5) * 1000:7.0f} ms   p95 {pct(xs, 0.95) * 1000:7.0f} ms"
        )
    added = statistics.median(rows[TRIVIAL]) - statistics.median(rows["exec `true`"])
    print(
        f"  what the runner adds to an exec (p50 of the trivial entry minus exec `true`): "
        f"{added * 1000:.0f} ms"
    )
    return 0


def measure(engine: DockerEngine, image: str, task, artifacts: ArtifactStore, n: int):  # type: ignore[no-untyped-def]
    spec, verifier = task.spec, task.verifier
    vfiles = verifier_tar(verifier, artifacts.get)
    vdir = {name: data for name, (data, _) in vfiles.items()}
    tests = sorted(n for n in vdir if n.endswith(".py"))
    pytest = [
        PY,
        "-I",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--noconftest",
        "--rootdir=/tests",
        *tests,
    ]
    run: dict[str, Callable[[], float]] = {
        "exec `true`": lambda: in_fresh(engine, image, spec, vdir, ["true"]),
        "python3 -I -S -c pass": lambda: in_fresh(
            engine, image, spec, vdir, [PY, "-I", "-S", "-c", "pass"]
        ),
        "python3 -I -c pass (with site)": lambda: in_fresh(
            engine, image, spec, vdir, [PY, "-I", "-c", "pass"]
        ),
        "python3 -I -c 'import pytest'": lambda: in_fresh(
            engine, image, spec, vdir, [PY, "-I", "-c", "import pytest"]
        ),
        "pytest --co (start + collection)": lambda: in_fresh(
            engine, image, spec, vdir, [*pytest[:3], "pytest", "--co", *pytest[4:]]
        ),
        "pytest: start, collection and tests": lambda: in_fresh(engine, image, spec, vdir, pytest),
        "pytest again in the same container": lambda: in_fresh(
            engine, image, spec, vdir, pytest, twice=True
        ),
        "pytest: the whole entry (bash test.sh)": lambda: in_fresh(
            engine, image, spec, vdir, ["sh", "-c", verifier.entry]
        ),
    }
    if verifier.reward_dir:
        run["reward file read by a second exec (the runner before)"] = lambda: reward_read_s(
            engine, image, spec, vdir, verifier.entry, verifier.reward_dir or ""
        )
    oracle = oracle_state(engine, image, spec)
    # The runner around an entry that does nothing but write the reward: its own cost.
    trivial = verifier.model_copy(
        update={
            "entry": f"echo 1 > {verifier.reward_dir}/reward.txt" if verifier.reward_dir else "true"
        }
    )
    results: dict[str, list[float]] = defaultdict(list)
    with engine.standby(image, limits=spec.limits, purpose=Purpose.VERIFY, network=False):
        for _ in range(n):
            for name, fn in run.items():
                results[name].append(fn())
            res = verify_prepared(
                engine, oracle.prepared, spec=spec, verifier=verifier, verifier_files=vfiles
            )
            assert res.reward == 1, res
            results["runner: its exec (staging + entry + reward file)"].append(res.command_s)
            results["runner: container to reward"].append(res.duration_s)
            bare = verify_prepared(
                engine, oracle.prepared, spec=spec, verifier=trivial, verifier_files=vfiles
            )
            results[TRIVIAL].append(bare.command_s)
    return results


def oracle_state(engine: DockerEngine, image: str, spec: EnvironmentSpec) -> ProducedState:
    """The reference solution's final state, produced without a diff (benchmarks only)."""
    steps = spec.reference_solution
    (oracle,) = produce_chain(
        engine,
        image,
        spec,
        steps,
        rows=[None] * (len(steps) - 1) + [RowId.oracle()],
        kinds=[StateKind.ORACLE] * len(steps),
        want_diff=False,
    )
    return oracle


if __name__ == "__main__":
    sys.exit(main())
