"""`docker diff` read straight from an overlay container's upper directory.

On this engine (fuse-overlayfs, naive diff driver) `docker diff` walks the whole root
filesystem: seconds to tens of seconds. The upper directory holds exactly what changed,
so when the daemon is local and we can read its storage, walking it gives the same
answer in milliseconds. The rules follow Docker's `archive.changes`:
- a whiteout (char device 0/0, or a `.wh.NAME` file) is a deletion `D`;
- a path that also exists in a lower layer is `C`, otherwise `A`; a directory whose
  size, mode and mtime equal the lower one's is not a change by itself;
- every ancestor of a change (but `/`) is recorded as `C` unless it was added.
Invariant: anything this module does not model exactly (an opaque directory that hid a
lower one, an unknown storage driver, an unreadable directory) returns None, and the
caller asks the daemon instead.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

WH = ".wh."
OPAQUE_MARKERS = {".wh..wh..opq", ".wh..opq"}
DRIVERS = {"overlay2", "fuse-overlayfs"}


class Unsupported(Exception):
    """The layout is outside what this module models; use the daemon's diff."""


def upper_diff(graph_driver: dict[str, Any]) -> list[tuple[str, str]] | None:
    """[(path, kind)] for a container's GraphDriver section, or None to fall back."""
    data = graph_driver.get("Data") or {}
    if graph_driver.get("Name") not in DRIVERS or not data.get("UpperDir"):
        return None
    upper = Path(data["UpperDir"])
    lowers = [Path(p) for p in (data.get("LowerDir") or "").split(":") if p]
    if not upper.is_dir() or not os.access(upper, os.R_OK):
        return None
    try:
        return _walk(upper, lowers)
    except (Unsupported, OSError):
        return None


def is_whiteout(st: os.stat_result) -> bool:
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


def _walk(upper: Path, lowers: list[Path]) -> list[tuple[str, str]]:
    changes: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(upper):
        rel_dir = "/" + os.path.relpath(dirpath, upper).lstrip(".")
        rel_dir = "/" if rel_dir in ("/", "/.") else rel_dir.rstrip("/")
        if _opaque(dirpath, filenames) and rel_dir != "/" and _lower_stat(lowers, rel_dir):
            raise Unsupported(f"opaque directory over a lower one: {rel_dir}")
        for name in dirnames + filenames:
            if name in OPAQUE_MARKERS:
                continue
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            if name.startswith(WH):
                _record(changes, _join(rel_dir, name[len(WH) :]), "D")
            elif is_whiteout(st):
                _record(changes, _join(rel_dir, name), "D")
            else:
                path = _join(rel_dir, name)
                lower = _lower_stat(lowers, path)
                if lower is None:
                    _record(changes, path, "A")
                elif not (stat.S_ISDIR(st.st_mode) and _same_dir(st, lower)):
                    _record(changes, path, "C")
    return sorted(changes.items())


def _record(changes: dict[str, str], path: str, kind: str) -> None:
    changes[path] = kind
    parent = os.path.dirname(path)
    while parent not in ("/", "") and parent not in changes:
        changes[parent] = "C"
        parent = os.path.dirname(parent)


def _same_dir(a: os.stat_result, b: os.stat_result) -> bool:
    return stat.S_ISDIR(b.st_mode) and (a.st_size, a.st_mode, int(a.st_mtime)) == (
        b.st_size,
        b.st_mode,
        int(b.st_mtime),
    )


def _join(rel_dir: str, name: str) -> str:
    return f"/{name}" if rel_dir == "/" else f"{rel_dir}/{name}"


def _lower_stat(lowers: list[Path], path: str) -> os.stat_result | None:
    """The stat of `path` in the merged lower layers (top first), honouring whiteouts."""
    parts = path.strip("/").split("/")
    for layer in lowers:
        # A whiteout of the path or of any ancestor in this layer hides everything below.
        for i in range(1, len(parts) + 1):
            head, name = "/".join(parts[: i - 1]), parts[i - 1]
            base = layer / head if head else layer
            if (base / (WH + name)).exists() or _whiteout_at(base / name):
                return None
        try:
            return os.lstat(layer / path.strip("/"))
        except FileNotFoundError:
            for i in range(1, len(parts)):
                anc = layer / "/".join(parts[:i])
                if anc.is_dir() and _opaque(str(anc), os.listdir(anc)):
                    return None  # an opaque ancestor hides deeper layers
            continue
    return None


def _opaque(dirpath: str, names: list[str]) -> bool:
    """fuse-overlayfs marks opaque directories with files, kernel overlay with an xattr."""
    if OPAQUE_MARKERS & set(names):
        return True
    try:
        return os.getxattr(dirpath, "trusted.overlay.opaque", follow_symlinks=False) == b"y"
    except OSError:
        return False


def _whiteout_at(p: Path) -> bool:
    try:
        return is_whiteout(os.lstat(p))
    except FileNotFoundError:
        return False
