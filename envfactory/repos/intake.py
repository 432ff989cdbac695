"""Repository intake: a clone URL, a local path or a file:// URL → one stored snapshot.

    snap = clone_repository("https://host/project.git", artifacts, max_bytes=500 << 20)
    bare = open_snapshot(snap, artifacts, cache_dir)   # a bare clone to mine from

The repository is cloned bare into a scratch directory, checked (it has commits, it is
within the size limit), then bundled (`git bundle --all`: every branch and tag) and the
bundle is put in the content-addressed artifact store in one atomic write. A clone that
fails, or a repository that is too large or malformed, raises `InvalidRepository` naming
the source, and nothing is stored: the scratch directory is removed either way.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Protocol

from envfactory.core.errors import InvalidRepository
from envfactory.core.models.repos import RepoSnapshot

from .git import GitFailed, git, text

REMOTE_SCHEMES = ("http://", "https://", "ssh://", "git://")
_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s]+$")
DEFAULT_MAX_BYTES = 1 << 30


class BundleStore(Protocol):
    def put_file(self, path: Path | str) -> str: ...
    def path(self, key: str) -> Path: ...


def repo_suite(source: str) -> str:
    """The suite a repository's environments are filed under: its directory's name."""
    name = Path(source.rstrip("/")).name.removesuffix(".git")
    return name or "repo"


def normalize_source(source: str) -> str:
    """The source git is given: a remote URL as is, a local path made absolute.
    `InvalidRepository` for anything that is neither."""
    src = source.strip()
    if not src or src != source or any(ord(c) < 32 for c in src):
        raise InvalidRepository(
            f"repository {source!r}: empty, padded or holding control characters",
            hint="give a clone URL, a local path or a file:// URL",
        )
    if src.startswith("-"):
        raise InvalidRepository(f"repository {source!r}: a source may not start with '-'")
    if src.startswith(REMOTE_SCHEMES) or _SCP_LIKE.match(src):
        return src
    path = Path(src.removeprefix("file://")) if src.startswith("file://") else Path(src)
    if "://" in src and not src.startswith("file://"):
        raise InvalidRepository(
            f"repository {source!r}: unsupported URL scheme",
            hint="use http(s)://, ssh://, git://, file:// or a local path",
        )
    if not path.exists():
        raise InvalidRepository(f"repository {source!r}: no such file or directory")
    return str(path.resolve())


def clone_repository(
    source: str,
    artifacts: BundleStore,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout_s: float = 600,
) -> RepoSnapshot:
    """Clone `source` and store it whole (see the module docstring)."""
    src = normalize_source(source)
    with tempfile.TemporaryDirectory(prefix="envfactory-clone-") as tmp:
        bare = Path(tmp) / "repo.git"
        try:
            git("clone", "--bare", "--quiet", "--no-hardlinks", "--", src, str(bare),
                timeout=timeout_s)  # fmt: skip
        except GitFailed as exc:
            raise InvalidRepository(
                f"repository {source!r} could not be cloned: {exc.message}",
                hint="check that the URL or path is a git repository you can read",
            ) from None
        size = _size(bare)
        if size > max_bytes:
            raise InvalidRepository(
                f"repository {source!r} is too large: {size} bytes, the limit is {max_bytes}",
                hint="raise --max-bytes, or mine a smaller repository",
            )
        head = _head(bare, source)
        bundle = Path(tmp) / "repo.bundle"
        git("bundle", "create", "--quiet", str(bundle), "--all", cwd=bare, timeout=timeout_s)
        key = artifacts.put_file(bundle)
    return RepoSnapshot(source=source, head=head, bundle_key=key, size_bytes=size)


def open_snapshot(snapshot: RepoSnapshot, artifacts: BundleStore, cache_dir: Path) -> Path:
    """A bare clone of the stored bundle under `cache_dir` (made once, atomically)."""
    dest = cache_dir / f"{snapshot.bundle_key}.git"
    if dest.exists():
        return dest
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=cache_dir))
    try:
        bundle = str(artifacts.path(snapshot.bundle_key))
        git("clone", "--bare", "--quiet", "--", bundle, str(tmp / "r.git"))
        git("fetch", "--quiet", "--", bundle, "+refs/*:refs/*", cwd=tmp / "r.git")
        try:
            os.rename(tmp / "r.git", dest)
        except OSError:
            if not dest.exists():  # another process won the race otherwise
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _head(bare: Path, source: str) -> str:
    try:
        return text("rev-parse", "--verify", "HEAD^{commit}", cwd=bare)
    except GitFailed:
        raise InvalidRepository(
            f"repository {source!r} has no commits (HEAD names no commit)"
        ) from None


def _size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())
