"""A state's changes against the pristine image, computed cheaply.

Where this process can read the sandbox's overlay upper directory (the engine on this
machine), the changes are read from there: every path the sandbox changed, in
milliseconds, with no exec (`Sandbox.local_diff`). Elsewhere (a worker in a container, a
remote engine) they are listed from inside the container, as below.

`docker diff` (and `docker commit`, which diffs too) walks the whole filesystem; on this
engine's fuse-overlayfs that costs 4–7 s (10 s for a commit). Tamper evidence only needs
the places a verifier relies on, so we list those ourselves: every path under the
sensitive roots (PATH directories, interpreter and library trees, /etc, home
directories, verifier locations) plus the direct children of ``/`` and of each workspace
ancestor, each with its *change* time (``%C@``). ctime cannot be set from user space and a
file of a shared image layer reports the same inode time in every container of that
image, so a file the solver wrote, even with a forged mtime, always shows up. Comparing
with the same listing of a pristine container gives A / C / D per path (~0.2 s).

Invariants: callers warm `pristine_listing` *before* they hold a sandbox, so no thread
ever waits for a second sandbox slot while holding one (with a pool of N slots and N
such threads that would deadlock); directories are compared by membership only (their own times change
whenever Docker creates a mount point in them); on any failure the answer is None —
"unknown" — never an empty diff, so callers can fail closed.
"""

from __future__ import annotations

import posixpath
import threading

from envfactory.core.models import EnvironmentSpec, PathChange, Purpose
from sandboxes.protocol import Sandbox, SandboxEngine

Listing = dict[str, tuple[str, str]]  # path → (ctime, type)

_ROOTS = (
    "/usr/local",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib/python3*",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/libexec",
    "/usr/share/perl5",
    "/etc",
    "/root",
    "/home",
    "/tests",
    "/logs",
    "/run",
    "/opt",
    "/srv",
)
# Created or bind-mounted by Docker in every container; their times differ per container.
_RUNTIME = {
    "/etc/hosts",
    "/etc/hostname",
    "/etc/resolv.conf",
    "/.dockerenv",
    "/etc/mtab",
    "/usr/sbin/docker-init",
    "/tmp/.envfactory-listing",
}
_OUT = "/tmp/.envfactory-listing"
_lock = threading.Lock()
_pristine: dict[tuple[str, tuple[str, ...]], Listing] = {}


def _shallow_dirs(spec: EnvironmentSpec) -> list[str]:
    """`/` and every ancestor of a workspace path: where a stray conftest.py would act."""
    dirs = {"/"}
    for ws in spec.workspace_paths:
        d = posixpath.dirname(ws.rstrip("/"))
        while d not in dirs:
            dirs.add(d)
            d = posixpath.dirname(d)
    return sorted(dirs)


def listing_script(spec: EnvironmentSpec) -> str:
    fmt = "-printf '%p\\t%C@\\t%y\\n'"
    shallow = " ".join(f"'{d}'" for d in _shallow_dirs(spec))
    roots = " ".join(_ROOTS)
    return (
        f"{{ find {shallow} -xdev -maxdepth 1 {fmt}; find {roots} -xdev {fmt}; }} "
        f"2>/dev/null > {_OUT}; test -s {_OUT}"
    )


def listing(box: Sandbox, spec: EnvironmentSpec) -> Listing | None:
    """The sensitive paths of a live sandbox with their change times."""
    res = box.exec(["/bin/sh", "-c", listing_script(spec)], timeout=120, user="root")
    if not res.ok:
        return None
    out: Listing = {}
    for line in box.read_file(_OUT).decode("utf-8", "replace").splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[0] not in _RUNTIME:
            out[parts[0]] = (parts[1], parts[2])
    return out


def pristine_listing(engine: SandboxEngine, image: str, spec: EnvironmentSpec) -> Listing | None:
    """`listing` of a fresh container of `image`, cached per (image, workspace layout)."""
    key = (image, tuple(spec.workspace_paths))
    with _lock:
        if key in _pristine:
            return _pristine[key]
    box = engine.start(image, limits=spec.limits, purpose=Purpose.VERIFY_DIFF, network=False)
    try:
        got = listing(box, spec)
    finally:
        box.remove()
    if got is not None:
        with _lock:
            _pristine[key] = got
    return got


def compare(before: Listing, after: Listing) -> tuple[PathChange, ...]:
    changes = [PathChange(path=p, kind="A") for p in after.keys() - before.keys()]
    changes += [PathChange(path=p, kind="D") for p in before.keys() - after.keys()]
    changes += [
        PathChange(path=p, kind="C")
        for p in after.keys() & before.keys()
        if after[p] != before[p] and not (after[p][1] == "d" and before[p][1] == "d")
    ]
    return tuple(sorted(changes, key=lambda c: c.path))


def live_diff(
    engine: SandboxEngine, box: Sandbox, pristine: str, spec: EnvironmentSpec
) -> tuple[PathChange, ...] | None:
    """The changes of a live sandbox against the pristine image (None: unknown): every
    path it changed, read from its overlay upper directory where this process can (ms, and
    exact: a file rewritten with a forged time shows too); else the sensitive paths, by
    comparing listings (~0.2 s of CPU on this engine: benchmarks/sandbox_overhead.py)."""
    local = box.local_diff()  # against the image `box` started from: `pristine`
    if local is not None:
        return tuple(c for c in local if c.path not in _RUNTIME)
    return _listing_diff(engine, box, pristine, spec)


def _listing_diff(
    engine: SandboxEngine, box: Sandbox, pristine: str, spec: EnvironmentSpec
) -> tuple[PathChange, ...] | None:
    """The sensitive changes of `box` against `pristine` by listings (any two images)."""
    before = pristine_listing(engine, pristine, spec)
    after = listing(box, spec) if before is not None else None
    return None if before is None or after is None else compare(before, after)


def image_diff(
    engine: SandboxEngine, image: str, pristine: str, spec: EnvironmentSpec
) -> tuple[PathChange, ...] | None:
    """The sensitive changes of a saved state image against the pristine image."""
    pristine_listing(engine, pristine, spec)  # before holding a sandbox slot (see module doc)
    box = engine.start(image, limits=spec.limits, purpose=Purpose.VERIFY_DIFF, network=False)
    try:  # `box` runs the state's image: its own changes are not the state's
        return _listing_diff(engine, box, pristine, spec)
    finally:
        box.remove()
