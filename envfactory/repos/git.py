"""Running git on the host: one helper with a timeout, no prompts and no user config.

Every git command the miner runs goes through `git()`: the environment is reduced to what
git needs (no credential prompt, no global or system config, no pager), so a clone of a
stranger's URL cannot hang on a password prompt and a user's config cannot change what is
mined. A failure raises `GitFailed` with the command and git's last lines.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from envfactory.core.errors import EnvFactoryError

GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ASKPASS": "true",
    "GIT_PAGER": "cat",
    "LC_ALL": "C",
    "GIT_AUTHOR_NAME": "envfactory",
    "GIT_AUTHOR_EMAIL": "envfactory@localhost",
    "GIT_COMMITTER_NAME": "envfactory",
    "GIT_COMMITTER_EMAIL": "envfactory@localhost",
}


class GitFailed(EnvFactoryError):
    """A git command exited non-zero (`stderr`: its last lines)."""

    def __init__(self, args: list[str], stderr: str) -> None:
        tail = " / ".join(stderr.strip().splitlines()[-3:]) or "no message"
        super().__init__(f"git {' '.join(args[:3])} failed: {tail}")
        self.stderr = stderr


def git(
    *args: str, cwd: Path | None = None, timeout: float = 300, input: bytes | None = None
) -> bytes:
    """Run `git ARGS` and return its stdout; `GitFailed` on a non-zero exit or timeout."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.devnull, **GIT_ENV}
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            input=input,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GitFailed(list(args), f"timed out after {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise GitFailed(list(args), proc.stderr.decode(errors="replace"))
    return proc.stdout


def text(*args: str, cwd: Path | None = None, timeout: float = 300) -> str:
    return git(*args, cwd=cwd, timeout=timeout).decode(errors="replace").strip()
