"""Benchmark: what an episode from a pack costs, phase by phase, on the local Docker engine.

    PYTHONPATH=. python benchmarks/pack_episodes.py examples/tasks/csv-report --episodes 4 --concurrency 2

Exports the task as a pack (build-context images), opens it, then runs episodes that
replay the reference steps, and prints seconds for: export, open (verify + extract),
first image build, and per episode reset / actions / reward, plus episodes per minute
at the given concurrency. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from envfactory.core.models import CheckKind, GateCheck, GateReport, Step

if TYPE_CHECKING:
    from .runtime import PackEnv


class _MemArtifacts:
    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def put_bytes(self, data: bytes) -> str:
        key = hashlib.sha256(data).hexdigest()
        self.blobs[key] = data
        return key

    def get(self, key: str) -> bytes:
        return self.blobs[key]


def _report(env_id: str) -> GateReport:
    # The benchmark measures the runtime, not the gates: a stand-in passing report.
    checks = (
        GateCheck(kind=CheckKind.ORACLE, name="oracle", expected=1, observed=(1,)),
        GateCheck(kind=CheckKind.NOOP, name="no-op", expected=0, observed=(0,)),
    )
    return GateReport(env_id=env_id, verifier_version=1, checks=checks, notes=("benchmark",))


async def _episode(env: PackEnv, steps: Sequence[Step]) -> tuple[float, float, float, int]:
    t0 = time.monotonic()
    ep = await env.areset()
    t1 = time.monotonic()
    for step in steps:
        await ep.aexec(step.script)
    t2 = time.monotonic()
    reward = await ep.areward()
    t3 = time.monotonic()
    await ep.aclose()
    return t1 - t0, t2 - t1, t3 - t2, reward


async def _run_all(
    env: PackEnv, steps: Sequence[Step], n: int, concurrency: int
) -> list[tuple[float, float, float, int]]:
    sem = asyncio.Semaphore(concurrency)

    async def one() -> tuple[float, float, float, int]:
        async with sem:
            return await _episode(env, steps)

    return await asyncio.gather(*(one() for _ in range(n)))


def main() -> None:
    from envfactory.core.settings import SandboxSettings
    from sandboxes import DockerEngine
    from verifiers.formats import load_task

    from . import ExportItem, export_pack
    from .runtime import Pack

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("task", type=Path)
    ap.add_argument("--episodes", type=int, default=4)
    ap.add_argument("--concurrency", type=int, default=2)
    args = ap.parse_args()
    arts = _MemArtifacts()
    task = load_task(args.task, arts)
    engine = DockerEngine(
        SandboxSettings(pool_size=max(2, args.concurrency + 1)), run_id="packs-bench"
    )
    with tempfile.TemporaryDirectory() as tmp:
        t = time.monotonic()
        export_pack(
            [ExportItem(task.spec, task.verifier, _report(task.spec.id))],
            Path(tmp) / "p.tar",
            artifacts=arts,
            created_by="bench",
        )
        print(f"export           {time.monotonic() - t:7.2f} s")
        t = time.monotonic()
        with Pack.open(Path(tmp) / "p.tar", engine=engine) as pack:
            print(f"open (verify)    {time.monotonic() - t:7.2f} s")
            env = pack.environments[0]
            t = time.monotonic()
            env.image()
            print(f"image build      {time.monotonic() - t:7.2f} s (cached after the first run)")
            t = time.monotonic()
            rows = asyncio.run(
                _run_all(env, task.spec.reference_solution, args.episodes, args.concurrency)
            )
            wall = time.monotonic() - t
    engine.gc(run_id="packs-bench", include_live=True, images=True)
    for name, i in (("reset", 0), ("actions", 1), ("reward", 2)):
        vals = [r[i] for r in rows]
        print(f"{name:<16} median {statistics.median(vals):6.2f} s  max {max(vals):6.2f} s")
    print(f"rewards          {[r[3] for r in rows]}")
    print(
        f"throughput       {len(rows) / wall * 60:6.1f} episodes/min at concurrency {args.concurrency}"
    )


if __name__ == "__main__":
    main()
