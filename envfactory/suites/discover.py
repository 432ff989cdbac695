"""Finding task directories under a path a user names.

A directory is a task when `verifiers.formats` would take it for one (Harbor or
Terminal-Bench markers); a task directory is never searched further. Otherwise its
sub-directories are searched, at most `MAX_DEPTH` levels down, skipping hidden and junk
directories (`.git`, `__pycache__`). The order is sorted, so a listing is reproducible.
"""

from __future__ import annotations

from pathlib import Path

from envfactory.core.errors import InvalidTask
from verifiers.formats.files import IGNORED_NAMES
from verifiers.formats.harbor import is_harbor
from verifiers.formats.tbench import is_tbench

#: a suite directory of tasks (1), or a checkout holding a folder of suites/tasks (2)
MAX_DEPTH = 2


def is_task_dir(path: Path) -> bool:
    return path.is_dir() and (is_harbor(path) or is_tbench(path))


def find_tasks(path: Path, max_depth: int = MAX_DEPTH) -> list[Path]:
    """Task directories at or under `path`; `InvalidTask` when there are none."""
    if not path.exists():
        raise InvalidTask(f"{path}: no such file or directory", hint="check the path")
    if not path.is_dir():
        raise InvalidTask(f"{path}: not a directory", hint="name a task or suite directory")
    if is_task_dir(path):
        return [path]
    found = _search(path, max_depth)
    if not found:
        raise InvalidTask(
            f"{path}: no task directories found (searched {max_depth} levels down)",
            hint="a task directory holds task.toml + instruction.md (Harbor) or task.yaml "
            "(Terminal-Bench 1); name it or the suite directory that holds it",
        )
    return found


def _search(path: Path, depth: int) -> list[Path]:
    if depth == 0:
        return []
    found: list[Path] = []
    for child in sorted(path.iterdir()):
        if not child.is_dir() or child.is_symlink() or _skipped(child.name):
            continue
        found += [child] if is_task_dir(child) else _search(child, depth - 1)
    return found


def _skipped(name: str) -> bool:
    return name.startswith(".") or name in IGNORED_NAMES


def suite_name(path: Path) -> str:
    """The default suite of the tasks under `path`: the suite directory's name (for a
    task directory named alone, the directory holding it)."""
    resolved = path.resolve()
    return (resolved.parent if is_task_dir(resolved) else resolved).name or "tasks"
