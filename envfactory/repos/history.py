"""Reading a commit out of the bare clone: parent, message, changed paths, file contents,
per-file diffs, and the bundle of the history up to the parent (nothing later)."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from envfactory.core.errors import InvalidRepository

from .git import GitFailed, git, text
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


def commits_in_range(
    bare: Path, rev_range: str | None, limit: int | None, paths: Sequence[str] = ()
) -> list[str]:
    """Commits of `rev_range` (default: HEAD's history), oldest first, at most `limit`
    (the newest `limit`); with `paths`, only those that touch one of them."""
    args = ["rev-list", "--first-parent", "--reverse", rev_range or "HEAD", "--", *paths]
    shas = _listed(bare, rev_range or "HEAD", args)
    return shas[-limit:] if limit else shas


def select_commits(
    bare: Path, revisions: Sequence[str], paths: Sequence[str], limit: int | None
) -> list[str]:
    """A seed's `revisions`: none (HEAD's history), one `A..B` range, or a list of
    commits, tags or merge commits (each resolved to its commit, duplicates once)."""
    check_revisions(revisions)
    if len(revisions) <= 1 and all(".." in r for r in revisions):
        return commits_in_range(bare, revisions[0] if revisions else None, limit, paths)
    shas = [_listed(bare, r, ["rev-parse", "--verify", f"{r}^{{commit}}"])[0] for r in revisions]
    if paths:
        touching = {sha for sha in shas if _touches(bare, sha, paths)}
        shas = [sha for sha in shas if sha in touching]
    shas = list(dict.fromkeys(shas))
    return shas[-limit:] if limit else shas


def check_revisions(revisions: Sequence[str]) -> None:
    """`InvalidRepository` for revisions git must never be given: empty, starting with
    `-` (an option), holding a control character, or a range not of the form `A..B`;
    checked before anything is cloned."""
    for r in revisions:
        problem = (
            "is empty" if not r.strip()
            else "starts with '-'" if r.startswith("-")
            else "holds a control character" if any(ord(c) < 32 or ord(c) == 127 for c in r)
            else "is not a range A..B" if r.count("..") > 1 or "..." in r
            else ""
        )  # fmt: skip
        if problem:
            raise InvalidRepository(
                f"revisions {r!r}: {problem}", hint="name commits, tags or one A..B range"
            )


def _touches(bare: Path, sha: str, paths: Sequence[str]) -> bool:
    return bool(text("rev-list", "-n", "1", sha, "--", *paths, cwd=bare))


def _listed(bare: Path, revision: str, args: list[str]) -> list[str]:
    try:
        return text(*args, cwd=bare).split()
    except GitFailed as exc:
        raise InvalidRepository(
            f"revisions {revision!r}: not in the repository ({exc.message})",
            hint="name commits, tags or an A..B range that the repository has",
        ) from exc


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
    """A bundle holding one branch, `main`, at `parent`, and the tags that point at the
    parent or its ancestors (with their tag objects): only the objects reachable from
    those travel (fetched by id into an empty repository, then bundled). A tag on a later
    commit, or on anything but a commit, stays behind."""
    with tempfile.TemporaryDirectory(prefix="envfactory-parent-") as tmp:
        scratch = Path(tmp) / "p.git"
        git("init", "--quiet", "--bare", str(scratch))
        tags = [f"+{ref}:{ref}" for ref in past_tags(bare, parent)]
        git("fetch", "--quiet", "--no-tags", str(bare), f"{parent}:refs/heads/main", *tags,
            cwd=scratch)  # fmt: skip
        git("bundle", "create", "--quiet", str(dest), "--all", cwd=scratch)
    return dest


def past_tags(bare: Path, parent: str) -> list[str]:
    """The tag refs whose commit is `parent` or one of its ancestors."""
    listed = text("for-each-ref", "--format=%(refname)%00%(*objecttype)%(objecttype)%00"
                  "%(*objectname)%(objectname)", "refs/tags", cwd=bare)  # fmt: skip
    visible = set(text("rev-list", parent, cwd=bare).split())
    out = []
    for line in listed.splitlines():
        ref, kind, sha = line.split("\0")
        # `%(*x)%(x)`: the peeled value of an annotated tag, followed by the tag's own
        if kind.startswith("commit") and sha[:40] in visible:
            out.append(ref)
    return out


_REVERTS = re.compile(r"^This reverts commit ([0-9a-f]{7,40})", re.M)
_REVERT_SUBJECT = re.compile(r'^Revert "(.+)"\s*$')


def reverted_commit(bare: Path, info: CommitInfo) -> str | None:
    """The commit of the parent's history that `info` reverts ("This reverts commit X",
    or a subject `Revert "S"` where S is the subject of an ancestor), or None."""
    assert info.parent is not None
    for sha in _REVERTS.findall(info.message):
        try:
            full = text("rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}", cwd=bare)
        except GitFailed:
            continue
        if _is_ancestor(bare, full, info.parent):
            return full
    m = _REVERT_SUBJECT.match(info.subject)
    if m:
        log = text("log", "--format=%H %s", "-n", "5000", info.parent, cwd=bare)
        for line in log.splitlines():
            sha, _, subject = line.partition(" ")
            if subject == m.group(1):
                return sha
    return None


def _is_ancestor(bare: Path, commit: str, descendant: str) -> bool:
    try:
        git("merge-base", "--is-ancestor", commit, descendant, cwd=bare)
    except GitFailed:
        return False
    return True
