"""The image's /usr/lib and /usr/local through the kernel's overlayfs, for containers
that only verify.

Why: on fuse-overlayfs (this engine's storage driver) every file lookup in a container
is a round trip to a user-space daemon whose caches start cold in each new container.
A verifier's interpreter looks up hundreds of files before its first test: importing
pytest costs ~0.3 s of CPU in a fresh container here, about half that when the
directories it reads are kernel overlays of the same layers (`benchmarks/native_usr.py`).

What: for each of `TARGETS`, a volume of Docker's local driver, type overlay, mounted
there: its lower directories are that directory in each image layer (top layer first),
its upper and work directories fresh per container under the engine's scratch
directory (root's, mode 0700: `NativeUsr`), removed with the container. Same names,
contents, modes, owners, sizes and modification times (the upper directory takes the
top layer's, so even the mount point lists the same); writes go to the fresh upper
directory, which the disk watchdog counts (`disk.local_paths`). What differs is what differs between fuse-overlayfs and Docker's
usual overlay2 driver, which is the kernel's overlayfs too, plus what any mount point
changes (an attacker pass listed it; tests/sandboxes/test_native_usr.py):
- directory listing order (the kernel lists the top layer's entries first; fuse-overlayfs
  in hash order): code that takes the first of two same-named entry points or of two
  `.dist-info` directories a later `pip install --ignore-installed` left can pick the
  other one — order-dependent code that already differs between engines;
- link counts (1 for a directory more than one layer holds; a file keeps counting a
  hard-link partner a later layer replaced) and hard links broken on copy-up (writing
  to a lower file through one name leaves the other as it was, as on overlay2);
- the mount point: device and inode numbers, `/proc/mounts`, `os.path.ismount`, the
  mount points' own ctime, atime not updated on reads, `find -xdev` not descending, and
  hard links or renames across it failing with EXDEV (`os.replace` from /tmp into
  /usr/local; `shutil.move`, `mv` and pip copy instead).

When the view would not be the image's, a target keeps the storage driver's view
(`layer_dirs` returns None): a storage driver other than fuse-overlayfs (overlay2
already is the kernel's), a layer this process cannot read (a remote daemon, a worker in
a container), a layer where the target or an ancestor is not a directory, any deletion or
overlay record at, under or over the target (fuse-overlayfs writes deletions as `.wh.`
files, which the kernel's overlayfs does not read), mount options longer than a page, or
not running as root (the upper directory holds what the container's root wrote; only
root removes it).

Where: only containers whose writable layer nothing reads afterwards — workspace-scope
verifications and harbor rows, whose recipe and verifier share the container and whose
reward file lies elsewhere (`verifiers.runner.native_usr`). Tamper evidence and snapshots
read a container's writable layer; a write under a target would not be there.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker.types

from .overlay_diff import OPAQUE_MARKERS, WH, is_whiteout

#: where a verifier's interpreter spends its lookups: Debian's Python and the shared
#: libraries (/usr/lib), pip's and venvs' site-packages (/usr/local). Not /usr itself: the
#: engine's init binary is mounted at /sbin/docker-init, which leads into /usr/sbin.
TARGETS = ("/usr/lib", "/usr/local")
DRIVER = "fuse-overlayfs"
MAX_OPTIONS = 3800  # mount(2) takes one page of options; keep room to spare
#: only root may create it (/var/lib is root's); made mode 0700 (`NativeUsr`)
DEFAULT_SCRATCH = Path("/var/lib/envfactory/scratch")


def layer_dirs(graph_driver: dict[str, Any], target: str) -> tuple[str, ...] | None:
    """`target`'s directory in each of an image's layers that has one, top first, when a
    kernel overlay of them is exactly the image's `target`; else None (module docstring)."""
    data = graph_driver.get("Data") or {}
    if graph_driver.get("Name") != DRIVER or not data.get("UpperDir"):
        return None
    roots = [data["UpperDir"], *(p for p in (data.get("LowerDir") or "").split(":") if p)]
    parts = target.strip("/").split("/")
    found: list[str] = []
    try:
        for root in roots:
            if _hidden(root, parts):
                return None
            path = os.path.join(root, *parts)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            if not stat.S_ISDIR(st.st_mode) or _overlay_record(path, st) or _records_under(path):
                return None
            found.append(path)
    except OSError:
        return None  # a layer this process cannot read
    return tuple(found) or None


def _hidden(root: str, parts: list[str]) -> bool:
    """Whether this layer hides what lower layers hold at `parts`: an ancestor deleted,
    replaced by a non-directory or made opaque (in either record style)."""
    here = root
    for part in parts:
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            return False  # the layer does not reach down here
        if not stat.S_ISDIR(st.st_mode) or _overlay_record(here, st):
            return True
        if {WH + part, *OPAQUE_MARKERS} & set(os.listdir(here)):
            return True
        here = os.path.join(here, part)
    return False


def _records_under(top: str) -> bool:
    """Any deletion or overlay record below `top`: a `.wh.` name, a 0/0 character device,
    an overlay attribute (opaque directory, fuse-overlayfs's stored owner)."""
    stack = [top]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                st = entry.stat(follow_symlinks=False)
                if entry.name.startswith(WH) or _overlay_record(entry.path, st):
                    return True
                if stat.S_ISDIR(st.st_mode):
                    stack.append(entry.path)
    return False


def _overlay_record(path: str, st: os.stat_result) -> bool:
    if is_whiteout(st):
        return True
    if stat.S_ISLNK(st.st_mode):
        return False
    return any("overlay" in name for name in os.listxattr(path, follow_symlinks=False))


@dataclass(frozen=True)
class Planned:
    """One container's overlay volumes: their mounts, the scratch directory they write
    to, and each mount point's upper directory (what the disk watchdog measures)."""

    mounts: tuple[docker.types.Mount, ...]
    scratch: Path
    uppers: dict[str, str]


class NativeUsr:
    """Plans the overlay volumes of an engine's verification containers; knows each
    image's layers and removes scratch directories.

    The scratch root must be a real directory (not a link), owned by this (root) process
    and closed to everyone else (mode 0700): a host user who could reach it could read
    what a verification writes, plant files in a running one, or swap an upper directory
    for a link to anywhere. It is made so when absent; one that is not so turns the
    volumes off (`why_off` says why). The layer cache is keyed by the image's id *and*
    its layer directories: an image removed and loaded again keeps its id, not its
    directories."""

    def __init__(
        self, scratch_root: Path, *, enabled: bool = True, targets: tuple[str, ...] = TARGETS
    ) -> None:
        self.scratch_root = scratch_root
        self.targets = targets
        self.enabled = enabled and hasattr(os, "geteuid") and os.geteuid() == 0
        self._layers: dict[tuple[str, str], dict[str, tuple[str, ...]]] = {}
        self._lock = threading.Lock()
        #: why the volumes are off (None: on, or turned off by settings or not root)
        self.why_off: str | None = None
        #: why the engine last refused an image's volumes (that image has none since)
        self.last_refusal: str | None = None

    def plan(self, image_info: dict[str, Any], name: str, labels: dict[str, str]) -> Planned | None:
        """The volumes for container `name` of the image `image_info` describes (an
        `inspect_image`), their directories made; None: the storage driver's view."""
        if not self.enabled or not self._root_is_private():
            return None
        layers = self._target_layers(image_info)
        if not layers:
            return None
        scratch = self.scratch_root / name
        try:
            return self._make(scratch, layers, labels)
        except OSError as exc:  # a layer gone meanwhile, a full disk: the plain view
            self.release(scratch)
            self.last_refusal = f"{image_info.get('Id', '?')}: {exc}"
            return None

    def _make(
        self, scratch: Path, layers: dict[str, tuple[str, ...]], labels: dict[str, str]
    ) -> Planned:
        scratch.mkdir(mode=0o700)
        mounts, uppers = [], {}
        for target, dirs in layers.items():
            upper, work = (scratch / target.strip("/").replace("/", "-") / d for d in ("u", "w"))
            upper.mkdir(parents=True)
            work.mkdir()
            _copy_attributes(dirs[0], upper)
            options = f"lowerdir={':'.join(dirs)},upperdir={upper},workdir={work}"
            mounts.append(_volume(target, options, labels))
            uppers[target] = str(upper)
        return Planned(tuple(mounts), scratch, uppers)

    def _root_is_private(self) -> bool:
        """Make the scratch root if absent; True iff it is a directory of ours, mode 0700."""
        root = self.scratch_root
        try:
            root.parent.mkdir(parents=True, exist_ok=True)
            root.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            return self._off(f"scratch directory {root}: {exc}")
        try:
            st = os.lstat(root)
        except OSError as exc:
            return self._off(f"scratch directory {root}: {exc}")
        if not stat.S_ISDIR(st.st_mode):
            return self._off(f"scratch directory {root} is not a directory (or is a link)")
        if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
            return self._off(
                f"scratch directory {root} is not private (owner {st.st_uid}, mode "
                f"{stat.S_IMODE(st.st_mode):o}): make it root's, mode 0700, or set "
                "ENVFACTORY_SANDBOX__SCRATCH_DIR"
            )
        if "," in str(root) or ":" in str(root):
            return self._off(f"scratch directory {root}: a comma or colon breaks mount options")
        self.why_off = None
        return True

    def _off(self, why: str) -> bool:
        self.why_off = why
        return False

    def _target_layers(self, image_info: dict[str, Any]) -> dict[str, tuple[str, ...]]:
        graph = image_info.get("GraphDriver") or {}
        key = _cache_key(image_info)
        with self._lock:
            if key in self._layers:
                return self._layers[key]
        room = MAX_OPTIONS - 2 * (len(str(self.scratch_root)) + 80)  # upper, work and keys
        layers = {}
        for target in self.targets:
            dirs = layer_dirs(graph, target)
            if dirs and len(":".join(dirs)) < room and not {",", "="} & set("".join(dirs)):
                layers[target] = dirs
        with self._lock:
            self._layers[key] = layers
        return layers

    def refuse(self, image_info: dict[str, Any], error: BaseException) -> None:
        """The engine would not start a container with this image's volumes: these layers
        keep the storage driver's view from now on."""
        with self._lock:
            self._layers[_cache_key(image_info)] = {}
        self.last_refusal = f"{image_info.get('Id', '?')}: {error}"

    def release(self, scratch: Path) -> None:
        """Remove a scratch directory once its container (and volumes) are gone."""
        shutil.rmtree(scratch, ignore_errors=True)

    def sweep(self, live: Iterable[str], older_than_s: float = 60.0) -> list[str]:
        """Remove the scratch directories of containers that no longer exist (their owner
        died before removing them); younger ones may belong to a container being created.
        Only in a private scratch root, and only directories (never through a link)."""
        if not self.enabled or not os.path.isdir(self.scratch_root) or not self._root_is_private():
            return []
        keep = set(live)
        removed: list[str] = []
        try:
            entries = list(os.scandir(self.scratch_root))
        except OSError:
            return []
        for entry in entries:
            with contextlib.suppress(OSError):
                st = entry.stat(follow_symlinks=False)
                stale = time.time() - st.st_mtime >= older_than_s
                if stat.S_ISDIR(st.st_mode) and entry.name not in keep and stale:
                    self.release(Path(entry.path))
                    removed.append(f"scratch:{entry.name}")
        return removed


def _cache_key(image_info: dict[str, Any]) -> tuple[str, str]:
    """An image's id and its layer directories (a reloaded image keeps only the id)."""
    data = (image_info.get("GraphDriver") or {}).get("Data") or {}
    return str(image_info.get("Id") or ""), f"{data.get('UpperDir')}:{data.get('LowerDir')}"


def _volume(target: str, options: str, labels: dict[str, str]) -> docker.types.Mount:
    """An anonymous volume of the local driver mounting a kernel overlay at `target`,
    removed with its container."""
    return docker.types.Mount(
        target=target,
        source=None,
        type="volume",
        no_copy=True,
        labels=labels,
        driver_config=docker.types.DriverConfig(
            "local", {"type": "overlay", "device": "overlay", "o": options}
        ),
    )


def _copy_attributes(source: str, target: Path) -> None:
    """An overlay's root takes its upper directory's mode, owner and times: make them the
    top layer's, so the mount point itself lists as in the image."""
    st = os.stat(source)
    os.chown(target, st.st_uid, st.st_gid)
    os.chmod(target, stat.S_IMODE(st.st_mode))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
