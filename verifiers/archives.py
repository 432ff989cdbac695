"""Tar helpers for moving files into and out of verification containers.

Invariant: a workspace tar taken from a solver's state is re-packed before it enters a
verification container, keeping only regular files, directories and symlinks whose names
stay under the workspace's own top directory. Docker builds that tar from the real
filesystem, so this is defence in depth against odd names, device nodes and hard links
that point outside the workspace.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
from collections.abc import Mapping, Sequence

from envfactory.core.errors import InvalidInput

#: A workspace bigger than this is refused rather than copied around for every check.
MAX_WORKSPACE_BYTES = 512 * 1024 * 1024


def tar_of(files: Mapping[str, tuple[bytes, int]]) -> bytes:
    """A tar of {relative path: (bytes, mode)}; parent directories are implied."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, (data, mode) in sorted(files.items()):
            info = tarfile.TarInfo(name.lstrip("/"))
            info.size = len(data)
            info.mode = mode
            info.mtime = 0
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def combine(
    files: Sequence[tuple[str, bytes, int]],
    trees: Sequence[tuple[str, bytes]],
    *,
    dirs: Sequence[tuple[str, int]] = (),
) -> bytes:
    """One tar: `dirs` (name, mode), `files` (name, bytes, mode) and every member of each
    tree tar re-rooted under its prefix (hard-link targets too)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as out:
        for name, mode in dirs:
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, mode
            out.addfile(info)
        for name, data, mode in files:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            out.addfile(info, io.BytesIO(data))
        for prefix, raw in trees:
            with tarfile.open(fileobj=io.BytesIO(raw), mode="r:*") as src:
                for m in src:
                    member = src.extractfile(m) if m.isreg() else None
                    m.name = f"{prefix}/{m.name}"
                    if m.islnk():
                        m.linkname = f"{prefix}/{m.linkname}"
                    out.addfile(m, member)
    return buf.getvalue()


def _safe_name(name: str, root_name: str) -> bool:
    if name.startswith("/") or ".." in name.split("/"):
        return False
    norm = posixpath.normpath(name)
    return norm == root_name or norm.startswith(root_name + "/")


#: A member of a tar read into memory: its header and, for a regular file, its bytes.
Member = tuple[tarfile.TarInfo, bytes | None]


def members(raw: bytes) -> list[Member]:
    """Every member of a tar, in its order, with the regular files' bytes."""
    if len(raw) > MAX_WORKSPACE_BYTES:
        raise InvalidInput(
            f"workspace archive of {len(raw)} bytes exceeds {MAX_WORKSPACE_BYTES}",
            hint="declare a narrower workspace_paths in the environment spec",
        )
    out: list[Member] = []
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:*") as src:
        for m in src:
            f = src.extractfile(m) if m.isreg() else None
            out.append((m, f.read() if f else None))
    return out


def sanitize(raw: bytes, *, root_name: str) -> bytes:
    """Re-pack a tar from `get_archive`, dropping anything that could escape `root_name`."""
    return repack(members(raw), root_name=root_name)


def repack(items: Sequence[Member], *, root_name: str) -> bytes:
    """The canonical tar of `items` under `root_name`: only regular files, directories and
    links that stay under it, in name order, names encoded by this writer. Two copies of
    the same tree pack to the same bytes whatever their directory order or the names they
    were read under (`regroup`)."""
    kept = [
        (m, data)
        for m, data in items
        if _safe_name(m.name, root_name)
        and not (m.islnk() and not _safe_name(m.linkname, root_name))
        and (m.isreg() or m.isdir() or m.issym() or m.islnk())
    ]
    kept.sort(key=lambda mb: (mb[0].islnk(), mb[0].name))  # hard links after their targets
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as dst:
        for m, data in kept:
            # The name records follow the name (a long one gets its record back here).
            m.pax_headers = {k: v for k, v in m.pax_headers.items() if k not in _NAME_RECORDS}
            dst.addfile(m, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


_NAME_RECORDS = ("path", "linkpath")


def regroup(items: Sequence[Member], depth: int) -> dict[str, list[Member]]:
    """The members `depth` directories below the tar's top, grouped by those directories
    ("top/a/b/x" → group "a/b", member "x" for depth 2; a hard link's target likewise);
    members not that deep are left out. The members are renamed in place."""
    groups: dict[str, list[Member]] = {}
    for m, data in items:
        parts = m.name.split("/")
        if len(parts) < depth + 2:
            continue
        key, head = "/".join(parts[1 : depth + 1]), "/".join(parts[: depth + 1]) + "/"
        m.name = "/".join(parts[depth + 1 :])
        if m.islnk():
            if not m.linkname.startswith(head):
                continue  # a hard link to another group's file: not this tree's
            m.linkname = m.linkname[len(head) :]
        groups.setdefault(key, []).append((m, data))
    return groups


def read_members(raw: bytes) -> dict[str, bytes]:
    """{name: content} of the regular files in a tar (tests and probes)."""
    out = {}
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:*") as tf:
        for m in tf:
            if m.isreg():
                f = tf.extractfile(m)
                out[m.name] = f.read() if f else b""
    return out
