"""What Harbor does with `/logs/verifier` before and after its tests (benchmarks only).

One trial of a task whose "solution" plants ``reward.txt`` = 1, ``reward.json`` =
``{"reward": 1}`` and ``status.txt`` = PASS in `/logs/verifier`, and whose tests list the
directory as they find it, then write ``reward.txt`` = 1 and ``reward.json`` =
``{"reward": 0.25}``. Harbor's oracle agent runs the solution, then its verifier the
tests, in the same container. Prints what the tests found and the reward Harbor took:
the facts the ``harbor:`` rows model (docs/task-formats.md, "What Harbor itself does with
the reward directory").

    python benchmarks/harbor_reward_dir.py --harbor /tmp/harbor-venv/bin/harbor

Harbor is found as in `harbor_trials.py`; `docker compose` must work; the task's image
is built from the local base image (no registry here).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from benchmarks.harbor_trials import find_harbor
from envfactory.core.settings import load_settings
from sandboxes import DockerEngine

SOLVE = """#!/bin/bash
mkdir -p /logs/verifier
echo 1 > /logs/verifier/reward.txt
echo '{"reward": 1}' > /logs/verifier/reward.json
echo PASS > /logs/verifier/status.txt
"""
TESTS = """#!/bin/bash
ls -A /logs/verifier > /logs/verifier/seen-at-start.txt
echo 1 > /logs/verifier/reward.txt
echo '{"reward": 0.25}' > /logs/verifier/reward.json
"""
TOML = "[verifier]\ntimeout_sec = 60.0\n[agent]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 512\n"


def write_task(root: Path, base_image: str) -> Path:
    task = root / "plant-reward"
    for sub, name, text in (
        ("environment", "Dockerfile", f"FROM {base_image}\nWORKDIR /app\n"),
        ("solution", "solve.sh", SOLVE),
        ("tests", "test.sh", TESTS),
        ("", "task.toml", 'version = "1.0"\n' + TOML),
        ("", "instruction.md", "Do nothing.\n"),
    ):
        path = task / sub / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755)
    return task


def run(harbor: str, base_image: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="harbor-reward-dir-") as tmp:
        task = write_task(Path(tmp), base_image)
        jobs = Path(tmp) / "jobs"
        argv = [harbor, "run", "-p", str(task), "-a", "oracle", "-o", str(jobs), "-y", "-q"]
        done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp)
        trials = sorted(jobs.glob("*/plant-reward__*/"))
        if done.returncode != 0 or not trials:
            raise RuntimeError(f"harbor run failed ({done.returncode}): {done.stderr[-2000:]}")
        trial = trials[-1]
        result = json.loads((trial / "result.json").read_text())
        return {
            "seen by the tests at start": (trial / "verifier" / "seen-at-start.txt")
            .read_text()
            .split(),
            "rewards": (result.get("verifier_result") or {}).get("rewards"),
            "exception": result.get("exception_info"),
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--harbor", help="the harbor executable (default: harbor on PATH)")
    args = ap.parse_args()
    harbor, why = find_harbor(args.harbor)
    if harbor is None:
        print(why, file=sys.stderr)
        return 2
    engine = DockerEngine(load_settings().sandbox, run_id=f"bench-hrd-{uuid.uuid4().hex[:8]}")
    try:
        base = engine.resolve_from("debian:bookworm-slim") or "debian:bookworm-slim"
        print(why)
        for key, value in run(harbor, base).items():
            print(f"{key}: {value}")
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
