"""A state's changes against another image, for states saved without their `docker diff`.

`docker diff` only compares a container with the image it started from. A state committed
elsewhere (an imported trajectory, an old regression) may arrive without that list, so
the runner computes one: it lists every path on the root filesystem with its *change*
time (``%C@``) in a container of each image and compares. ctime cannot be set from user
space, and files of a shared lower layer report the same inode times in both containers,
so every file the solver wrote (even with a forged mtime) shows up; nothing is hashed.

Invariant: on any failure the answer is None (unknown), never an empty diff; the runner
then fails closed.
"""

from __future__ import annotations

from functools import lru_cache

from envfactory.core.models import PathChange
from sandboxes.protocol import SandboxEngine

# Files Docker bind-mounts into every container: their times differ per container.
_RUNTIME_FILES = {
    "/etc/hosts",
    "/etc/hostname",
    "/etc/resolv.conf",
    "/.dockerenv",
    "/tmp",
    "/tmp/.envfactory-listing",
}
_LIST = (
    "find / -xdev \\( -path /proc -o -path /sys -o -path /dev \\) -prune "
    "-o -printf '%p\\t%C@\\t%y\\n'"
)


def _listing(engine: SandboxEngine, image: str) -> dict[str, tuple[str, str]] | None:
    box = engine.start(image, purpose="verify-diff", network=False)
    try:
        # Through a file, not stdout: a big image's listing exceeds the output cap.
        res = box.exec(["/bin/sh", "-c", _LIST + " > /tmp/.envfactory-listing"], timeout=120)
        text = (
            box.read_file("/tmp/.envfactory-listing").decode("utf-8", "replace") if res.ok else ""
        )
    finally:
        box.remove()
    if not res.ok:
        return None
    out: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[0] not in _RUNTIME_FILES:
            out[parts[0]] = (parts[1], parts[2])
    return out


@lru_cache(maxsize=16)
def _base_listing(
    engine_id: int, engine: SandboxEngine, image: str
) -> dict[str, tuple[str, str]] | None:
    return _listing(engine, image)


def image_diff(engine: SandboxEngine, image: str, base: str) -> tuple[PathChange, ...] | None:
    """Paths added (A), changed (C) or deleted (D) in `image` relative to `base`."""
    before = _base_listing(id(engine), engine, base)
    after = _listing(engine, image)
    if before is None or after is None:
        return None
    changes = [PathChange(path=p, kind="A") for p in after.keys() - before.keys()]
    changes += [PathChange(path=p, kind="D") for p in before.keys() - after.keys()]
    changes += [
        PathChange(path=p, kind="C") for p in after.keys() & before.keys() if after[p] != before[p]
    ]
    return tuple(sorted(changes, key=lambda c: c.path))
