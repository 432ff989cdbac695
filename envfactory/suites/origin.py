"""Provenance of an imported task: the git checkout holding it and the hash of each file.

`git_origin` asks git itself (`rev-parse --show-toplevel`, `remote get-url origin`,
`rev-parse HEAD`); outside a checkout, or with git missing, it answers (None, None)
rather than failing an import. `file_hashes` covers exactly the files the importer reads
(`verifiers.formats.files.walk_files`: junk and `.git` left out, symlinks refused).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from verifiers.formats.files import walk_files

GIT_TIMEOUT_S = 10


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(cwd), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None  # no git here: the task simply has no recorded checkout
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


def git_origin(task_dir: Path) -> tuple[str | None, str | None]:
    """(remote URL of `origin`, HEAD commit) of the checkout holding `task_dir`."""
    top = _git(task_dir, "rev-parse", "--show-toplevel")
    if top is None:
        return None, None
    return _git(Path(top), "remote", "get-url", "origin"), _git(Path(top), "rev-parse", "HEAD")


def file_hashes(task_dir: Path) -> dict[str, str]:
    """{relative POSIX path: sha256 hex} of every file the importer reads."""
    return {
        rel: hashlib.sha256(path.read_bytes()).hexdigest() for rel, path in walk_files(task_dir)
    }
