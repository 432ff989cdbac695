"""Harbor's oracle trials on our tasks, for comparison (benchmarks only).

Harbor (PyPI `harbor`, Python >= 3.12, `docker compose`) runs one trial per container:
compose up, the oracle solution, the tests, compose down. `oracle_trials` copies a task,
points its FROM lines at the local images envfactory builds from (no registry here: the
same images envfactory's own build uses), runs one untimed trial (Harbor's image build)
and then `trials` timed ones at `concurrency`, and returns what Harbor reported.

Harbor is found as `--harbor PATH`, else `harbor` on PATH; `docker compose` must work.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sandboxes import DockerEngine
from sandboxes.builds import rewrite_from_lines


@dataclass
class HarborRun:
    task: str
    trials: int
    wall_s: float
    passed: int  # trials with reward 1
    errors: int  # trials Harbor reports as exceptions

    @property
    def per_min(self) -> float:
        return self.trials / self.wall_s * 60 if self.wall_s else 0.0


def find_harbor(explicit: str | None) -> tuple[str | None, str]:
    """The harbor executable, or None and why not."""
    exe = explicit or shutil.which("harbor")
    if exe is None:
        return None, "harbor not installed (pip install harbor in a Python 3.12 venv)"
    compose = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
    if compose.returncode != 0:
        return None, "docker compose is not installed (Harbor needs it)"
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    return exe, f"harbor {version}"


def oracle_trials(
    harbor: str, task: Path, engine: DockerEngine, *, trials: int, concurrency: int
) -> HarborRun:
    with tempfile.TemporaryDirectory(prefix="harbor-bench-") as tmp:
        copy = Path(tmp) / task.name
        shutil.copytree(task, copy)
        dockerfile = copy / "environment" / "Dockerfile"
        text, _ = rewrite_from_lines(dockerfile.read_text(), engine.resolve_from)
        dockerfile.write_text(text)
        _run(harbor, copy, Path(tmp) / "warm-up", 1, 1)  # builds Harbor's image, untimed
        t0 = time.monotonic()
        result = _run(harbor, copy, Path(tmp) / "jobs", trials, concurrency)
        wall = time.monotonic() - t0
    evals = result.get("stats", {}).get("evals", {})
    passed = errors = 0
    for ev in evals.values():
        passed += len(ev.get("reward_stats", {}).get("reward", {}).get("1.0", []))
        errors += int(ev.get("n_errors") or 0)
    return HarborRun(task.name, trials, wall, passed, errors)


def _run(harbor: str, task: Path, jobs: Path, trials: int, concurrency: int) -> dict:
    argv = [
        harbor,
        "run",
        "-p",
        str(task),
        "-a",
        "oracle",
        "-k",
        str(trials),
        "-n",
        str(concurrency),
        "-o",
        str(jobs),
        "-y",
        "-q",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=jobs.parent)
    results = sorted(jobs.glob("*/result.json"))
    if done.returncode != 0 or not results:
        raise RuntimeError(f"harbor run failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(results[-1].read_text())
