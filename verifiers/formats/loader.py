"""`load_task`: detect a task directory's layout and read it.

Harbor is recognised by `task.toml`, `instruction.md` or `environment/`; Terminal-Bench 1
by `task.yaml`. A directory with markers of both, of neither, or a path that is not a
directory is refused with an error that names what was found and what is expected.
"""

from __future__ import annotations

from pathlib import Path

from envfactory.core.errors import InvalidTask
from envfactory.core.models import LimitCaps, TaskFileLimits

from .files import check_task_files
from .harbor import is_harbor, load_harbor
from .model import BlobWriter, ImportedTask
from .tbench import is_tbench, load_tbench


def load_task(
    path: Path,
    artifacts: BlobWriter,
    caps: LimitCaps | None = None,
    files: TaskFileLimits | None = None,
) -> ImportedTask:
    """Read a Harbor or Terminal-Bench 1 task; its files go into `artifacts` once the
    whole directory is within `files` (`settings.sandbox.task_files`); its limits are
    clamped to `caps` (the operator's ceilings, `settings.sandbox.task_caps`)."""
    path = Path(path)
    if not path.is_dir():
        raise InvalidTask(
            f"{path}: not a directory", hint="pass the task's directory, not a file in it"
        )
    harbor, tbench = is_harbor(path), is_tbench(path)
    if harbor and tbench:
        raise InvalidTask(
            f"{path} mixes a Harbor layout (task.toml/instruction.md/environment/) with a "
            "Terminal-Bench one (task.yaml)",
            hint="keep one layout: remove task.yaml, or task.toml and instruction.md",
        )
    if not (harbor or tbench):
        present = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())[:12]
        raise InvalidTask(
            f"{path}: unknown task layout (found: {', '.join(present) or 'nothing'})",
            hint="a Harbor task needs instruction.md, task.toml, environment/Dockerfile, "
            "solution/solve.sh, tests/test.sh; a Terminal-Bench 1 task needs task.yaml, "
            "Dockerfile, solution.sh, run-tests.sh, tests/",
        )
    check_task_files(path, files or TaskFileLimits())
    return load_harbor(path, artifacts, caps) if harbor else load_tbench(path, artifacts, caps)
