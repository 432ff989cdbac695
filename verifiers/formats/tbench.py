"""Read a Terminal-Bench 1 task directory.

Layout: `task.yaml` (instruction, timeouts, metadata), `Dockerfile` (+ build files beside
it), `solution.sh`, `run-tests.sh`, `tests/`; `docker-compose.yaml` is ignored (one
container). Mapping (docs/task-formats.md):
- build context: the task directory minus task.yaml, the solution, run-tests.sh, tests/
  and compose files, so the image can never contain the solution or the tests;
- verifier files: run-tests.sh plus the files of tests/ beside it, as Terminal-Bench lays
  them out in its test directory; entry `TEST_DIR="$PWD" bash run-tests.sh`;
- `max_agent_timeout_sec` → `Limits.exec_timeout_s`, `max_test_timeout_sec` → the
  verifier timeout; `parser_name` is ignored: the reward is the exit status only.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from envfactory.core import bounded_yaml
from envfactory.core.errors import InvalidTask
from envfactory.core.models import LimitCaps, Limits

from .assemble import Found, assemble
from .files import read_text, store_files, walk_files
from .harbor import COMPOSE_FILES
from .model import BlobWriter, ImportedTask
from .options import EnvfactoryOptions, parse_table
from .steps import split_steps

REQUIRED = {
    "task.yaml": "write task.yaml with at least an `instruction:`",
    "Dockerfile": "put the image's Dockerfile beside task.yaml",
    "solution.sh": "write the reference solution as solution.sh (`# step` blocks)",
    "run-tests.sh": "write run-tests.sh (exit 0 iff the task is solved)",
    "tests": "create the tests/ directory with the files run-tests.sh needs",
}
NOT_BUILD = ("task.yaml", "solution.sh", "solution.yaml", "run-tests.sh", "tests", *COMPOSE_FILES)
ENTRY = "TEST_DIR=/tests bash /tests/run-tests.sh"


class _TaskYaml(BaseModel):
    model_config = ConfigDict(extra="ignore")

    instruction: str | None = None
    descriptions: list[dict[str, Any]] | None = None  # the older form: key/description
    max_agent_timeout_sec: float = Field(default=360.0, gt=0, allow_inf_nan=False)
    max_test_timeout_sec: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    envfactory: dict[str, Any] | None = None


def is_tbench(path: Path) -> bool:
    return (path / "task.yaml").is_file()


def load_tbench(path: Path, artifacts: BlobWriter, caps: LimitCaps | None = None) -> ImportedTask:
    _require(path)
    config = _read_yaml(path / "task.yaml")
    task = parse_table(_TaskYaml, config, where="task.yaml")
    opts = parse_table(EnvfactoryOptions, task.envfactory, where="task.yaml envfactory")
    notes = [
        f"{n} ignored: envfactory runs one container" for n in COMPOSE_FILES if (path / n).exists()
    ]
    found = Found(
        format="terminal-bench",
        name=path.resolve().name,
        instruction=_instruction(task),
        dockerfile_text=(path / "Dockerfile").read_text(errors="replace"),
        build_files=store_files(walk_files(path, exclude=NOT_BUILD), artifacts),
        steps=split_steps(read_text(path / "solution.sh"), where="solution.sh"),
        verifier_files=_verifier_files(path, artifacts),
        entry=ENTRY,
        verifier_timeout_s=math.ceil(task.max_test_timeout_sec),
        limits=Limits(
            exec_timeout_s=opts.exec_timeout_s or math.ceil(task.max_agent_timeout_sec),
            pids=opts.pids or Limits().pids,
        ),
        options=opts,
        notes=notes,
        where="task.yaml",
        test_texts=_texts(path),
        mount_path="/tests",  # Terminal-Bench's $TEST_DIR
    )
    return assemble(found, caps)


def _require(path: Path) -> None:
    missing = [
        name
        for name in REQUIRED
        if not ((path / name).is_dir() if name == "tests" else (path / name).is_file())
    ]
    if "solution.sh" in missing and (path / "solution.yaml").is_file():
        raise InvalidTask(
            f"{path}/solution.yaml: tmux-keystroke solutions are not supported",
            hint="convert it to solution.sh, one `# step` block per command group",
        )
    if missing:
        listed = "; ".join(f"{m} ({REQUIRED[m]})" for m in missing)
        raise InvalidTask(
            f"{path} is not a complete Terminal-Bench task: missing {listed}",
            hint="a Terminal-Bench 1 task has task.yaml, Dockerfile, solution.sh, "
            "run-tests.sh and tests/ (docs/task-formats.md)",
        )


def _read_yaml(file: Path) -> dict[str, Any]:
    try:
        data = bounded_yaml.load(read_text(file))  # no alias bombs, no deep nesting
    except yaml.YAMLError as exc:
        raise InvalidTask(f"{file}: invalid YAML: {exc}", hint="fix the syntax") from None
    if not isinstance(data, dict):
        raise InvalidTask(
            f"{file}: expected a mapping at the top level", hint="start with `instruction: |`"
        )
    return data


def _instruction(task: _TaskYaml) -> str:
    text = task.instruction
    for item in task.descriptions or ():
        if text is None and item.get("key", "base") == "base":
            text = item.get("description")
    if not text or not str(text).strip():
        raise InvalidTask(
            "task.yaml: no instruction", hint="add `instruction: |` with the task's text"
        )
    return str(text).strip()


def _texts(path: Path) -> tuple[tuple[str, str], ...]:
    files = [("run-tests.sh", path / "run-tests.sh"), *walk_files(path / "tests")]
    return tuple(
        (rel, f.read_text(errors="replace")) for rel, f in files if f.stat().st_size <= 1_000_000
    )


def _verifier_files(path: Path, artifacts: BlobWriter) -> tuple[Any, ...]:
    tests = walk_files(path / "tests")
    if any(rel == "run-tests.sh" for rel, _ in tests):
        raise InvalidTask(
            f"{path}/tests/run-tests.sh clashes with {path}/run-tests.sh "
            "(both land in the same verifier directory)",
            hint="rename or remove tests/run-tests.sh",
        )
    return store_files([("run-tests.sh", path / "run-tests.sh"), *tests], artifacts)
