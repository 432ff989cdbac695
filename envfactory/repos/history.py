"""Reading a commit out of the bare clone: parent, message, changed paths, file contents,
per-file diffs, and the bundle of the history up to the parent (nothing later)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from .git import git, text
from .patches import FilePatch, parse_file_patch


@dataclass(frozen=True)
class CommitInfo:
    commit: str
    parent: str | None  # the first parent; None for a root commit
    message: str
    changed: tuple[tuple[str, str], ...]  # (status letter, path), renames split

    @property
    def subject(self) -> str:
        return self.message.strip().splitlines()[0] if self.message.strip() else ""


def commit_info(bare: Path, commit: str) -> CommitInfo:
    sha = text("rev-parse", "--verify", f"{commit}^{{commit}}", cwd=bare)
    parents = text("rev-list", "--parents", "-n", "1", sha, cwd=bare).split()[1:]
    message = git("log", "-1", "--format=%B", sha, cwd=bare).decode(errors="replace")
    changed: list[tuple[str, str]] = []
    if parents:
        raw = git("diff", "--name-status", "--no-renames", "-z", parents[0], sha, cwd=bare)
        fields = raw.decode(errors="surrogateescape").split("\0")
        changed = [(fields[i], fields[i + 1]) for i in range(0, len(fields) - 1, 2)]
    return CommitInfo(sha, parents[0] if parents else None, message, tuple(changed))


def commits_in_range(bare: Path, rev_range: str | None, limit: int | None) -> list[str]:
    """Commits of `rev_range` (default: HEAD's history), oldest first, at most `limit`
    (the newest `limit`)."""
    args = ["rev-list", "--first-parent", "--reverse", rev_range or "HEAD", "--"]
    shas = text(*args, cwd=bare).split()
    return shas[-limit:] if limit else shas


def file_at(bare: Path, commit: str, path: str) -> bytes:
    return git("show", f"{commit}:{path}", cwd=bare)


def tree_paths(bare: Path, commit: str) -> frozenset[str]:
    raw = git("ls-tree", "-r", "-z", "--name-only", commit, cwd=bare)
    return frozenset(p for p in raw.decode(errors="surrogateescape").split("\0") if p)


def file_patches(bare: Path, parent: str, commit: str, paths: list[str]) -> list[FilePatch]:
    out = []
    for path in paths:
        diff = git("diff", "--binary", "--full-index", "--no-renames", parent, commit, "--",
                   path, cwd=bare)  # fmt: skip
        out.append(parse_file_patch(path, diff.decode()))
    return out


def parent_bundle(bare: Path, parent: str, dest: Path) -> Path:
    """A bundle holding one branch, `main`, at `parent`: only the objects reachable from
    it travel (fetched by id into an empty repository, then bundled)."""
    with tempfile.TemporaryDirectory(prefix="envfactory-parent-") as tmp:
        scratch = Path(tmp) / "p.git"
        git("init", "--quiet", "--bare", str(scratch))
        git("fetch", "--quiet", "--no-tags", str(bare), f"{parent}:refs/heads/main",
            cwd=scratch)  # fmt: skip
        git("bundle", "create", "--quiet", str(dest), "main", cwd=scratch)
    return dest
