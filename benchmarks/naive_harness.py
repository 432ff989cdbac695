"""The naive harness, for comparison (benchmarks only): the gates' own rows, verified the
way a harness without envfactory's engine would verify them.

Per row and per repeat, one container and a docker CLI call per operation, as in the
issue's baseline: `docker run -d IMAGE sleep infinity`, `docker cp` each workspace path
of the state in (a tar on stdin), `docker cp` the verifier's files to its directory,
`docker exec` its entry, `docker exec cat` the reward file where the task has one (Harbor's
contract), `docker rm -f`. Every row runs `repeats` times (no adaptive repeats, no sharing
of identical states) at the same concurrency as the gates. The rows are a sample of the
gated rows (envfactory's runtime, workspace scope: their state is a set of workspace tars),
spread over the tasks; the rate per row is what compares, not the sample's size.
"""

from __future__ import annotations

import posixpath
import shlex
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from envfactory.core.models import Verifier, VerifyScope
from verifiers.archives import tar_of
from verifiers.gates import GateRun
from verifiers.runner import PreparedState


@dataclass(frozen=True)
class NaiveRow:
    """One gate row as the naive harness gets it: the state's image and workspace tars."""

    name: str
    prepared: PreparedState
    verifier: Verifier
    files: dict[str, tuple[bytes, int]]  # the verifier's files, path → (bytes, mode)
    gate_reward: int  # what the gates' runner got on it (first run)


@dataclass
class NaiveRun:
    rows: int
    verifications: int
    wall_s: float
    agreed: int  # verifications whose reward was the gates' reward on the same row

    def per_min(self, count: int) -> float:
        return count / self.wall_s * 60 if self.wall_s else 0.0


def rows_of(
    run: GateRun, verifier: Verifier, files: dict[str, tuple[bytes, int]]
) -> list[NaiveRow]:
    """The gate's rows a naive harness can verify: envfactory's runtime, workspace scope."""
    return [
        NaiveRow(name, p, verifier, files, int(run.results[name][0].reward))
        for name, p in run.prepared.items()
        if p.semantics == "envfactory"
        and p.scope == VerifyScope.WORKSPACE
        and not p.replay
        and run.results.get(name)
    ]


def sample(rows_by_task: list[list[NaiveRow]], n: int) -> list[NaiveRow]:
    """`n` rows spread evenly over each task's rows (each task gets its share)."""
    picked: list[NaiveRow] = []
    share = max(1, n // max(1, len(rows_by_task)))
    for rows in rows_by_task:
        step = max(1, len(rows) // share)
        picked.extend(rows[::step][:share])
    return picked


def naive_run(rows: list[NaiveRow], *, repeats: int, concurrency: int) -> NaiveRun:
    """Each row `repeats` times, `concurrency` at once; the wall of the whole."""
    jobs = [row for row in rows for _ in range(repeats)]
    t0 = time.monotonic()
    with ThreadPoolExecutor(max(1, concurrency)) as pool:
        rewards = list(pool.map(naive_verify, jobs))
    agreed = sum(r == row.gate_reward for r, row in zip(rewards, jobs, strict=True))
    return NaiveRun(len(rows), len(jobs), time.monotonic() - t0, agreed)


def naive_verify(row: NaiveRow) -> int:
    """One verification, the naive way: its reward (1 or 0)."""
    name = f"envfactory-bench-naive-{uuid.uuid4().hex[:10]}"
    _docker("run", "-d", "--name", name, "--label", "envfactory.owner=bench",
            "--network", "none", "--entrypoint", "sleep", row.prepared.image, "infinity")  # fmt: skip
    try:
        for path, tar in row.prepared.workspace:
            parent = posixpath.dirname(path.rstrip("/")) or "/"
            _docker(
                "exec",
                name,
                "sh",
                "-c",
                f"rm -rf {shlex.quote(path)} && mkdir -p {shlex.quote(parent)}",
            )
            if tar is not None:
                _docker("cp", "-", f"{name}:{parent}", data=tar)
        vdir = row.verifier.mount_path or "/tests"
        _docker("exec", name, "mkdir", "-p", vdir)
        _docker("cp", "-", f"{name}:{vdir}", data=tar_of(row.files))
        if row.verifier.reward_dir:
            _docker("exec", name, "mkdir", "-p", row.verifier.reward_dir)
        res = _docker("exec", "-w", row.verifier.cwd or vdir, name, "sh", "-c", row.verifier.entry)
        if not row.verifier.reward_dir:
            return int(res.returncode == 0)
        out = _docker("exec", name, "cat", posixpath.join(row.verifier.reward_dir, "reward.txt"))
        return int(out.stdout.strip() == b"1")
    finally:
        _docker("rm", "-f", name)


def _docker(*args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["docker", *args], input=data, capture_output=True, timeout=300)
