"""Build contexts: from a builder sandbox's directory to artifact-store entries and back.

Invariants: only regular files travel (a symlink, device or hard link in a context is an
error naming the member); paths are relative POSIX paths without `..`; the tar we build
is deterministic (sorted, mtime 0, uid/gid 0), so equal contexts hash equally and the
engine's build cache hits.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
from dataclasses import dataclass

from envfactory.core.models import BuildContext, FileEntry

from .recording import ArtifactSink

MAX_CONTEXT_BYTES = 64 * 1024 * 1024


class ContextProblem(ValueError):
    """The build context cannot be used; the message says which member and why."""


@dataclass(frozen=True)
class ContextFile:
    path: str
    data: bytes
    mode: int = 0o644


def files_from_archive(tar_bytes: bytes) -> list[ContextFile]:
    """Regular files of a `get_archive` tar, with the top directory stripped."""
    out: list[ContextFile] = []
    total = 0
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
        for m in tar.getmembers():
            parts = m.name.split("/", 1)
            rel = posixpath.normpath(parts[1]) if len(parts) == 2 else ""
            if m.isdir() or rel in ("", "."):
                continue
            if not m.isfile():
                raise ContextProblem(
                    f"{rel}: only regular files may be in the build context "
                    "(no symlinks, links or devices)"
                )
            if rel.startswith(".."):
                raise ContextProblem(f"{m.name}: path escapes the context directory")
            total += m.size
            if total > MAX_CONTEXT_BYTES:
                raise ContextProblem(f"the build context is over {MAX_CONTEXT_BYTES} bytes")
            f = tar.extractfile(m)
            assert f is not None
            out.append(ContextFile(rel, f.read(), 0o755 if m.mode & 0o111 else 0o644))
    return sorted(out, key=lambda c: c.path)


def context_tar(files: list[ContextFile]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for f in sorted(files, key=lambda c: c.path):
            info = tarfile.TarInfo(f.path)
            info.size, info.mode, info.mtime = len(f.data), f.mode, 0
            tar.addfile(info, io.BytesIO(f.data))
    return buf.getvalue()


def store_context(store: ArtifactSink, files: list[ContextFile], dockerfile: str) -> BuildContext:
    entries = tuple(FileEntry(path=f.path, key=store.put_bytes(f.data), mode=f.mode) for f in files)
    return BuildContext(dockerfile=dockerfile, files=entries)


def load_context(store: ArtifactSink, ctx: BuildContext) -> list[ContextFile]:
    return [ContextFile(e.path, store.get(e.key), e.mode) for e in ctx.files]
