"""A hard disk bound where the storage driver has none: a size-limited filesystem under
each container's writable layer.

The disk watchdog (`disk.py`) measures and stops a sandbox past its quota, but between
two measurements a writer is unbounded: `fallocate -l 20G` takes 20 GB of host disk in a
fifth of a second. Drivers with `--storage-opt size=` refuse the write instead; overlay
drivers on ext4 (fuse-overlayfs here) have nothing of the kind. So, between create and
start, the container's layer directory (its `diff` upper directory and the `work`
directory beside it, which must share a filesystem) is moved onto a fresh ext4
filesystem in a sparse file of `quota + margin` bytes, loop-mounted over the layer
directory. Every write of the container's root filesystem then lands there, and past
its size `fallocate`, `dd` and sparse writes all get ENOSPC: the host loses at most
`fs_bytes(disk_mb)` to one sandbox, however fast it writes and whether or not its owner
is alive to run a watchdog.

The mount needs nothing to undo it: the backing file is unlinked as soon as it is
mounted (the loop device holds it), and removing the container unmounts its layer
directory (the daemon unmounts what is under a layer before deleting it), which frees
the loop device and the file's blocks. What stays watchdog-only, and is said so
(`LayerQuota.describe`): volumes (the native-/usr overlays' writes), and every sandbox
where the mount is impossible (not root, no loop devices, a remote daemon, the upper
directory not visible from here); the first failure turns the bound off for the engine,
with its reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Any

MIB = 1024 * 1024
OVERLAY_DRIVERS = {"overlay2", "fuse-overlayfs", "overlay"}
TOOLS = ("mkfs.ext4", "mount", "umount")
DOCKER_PID = "/var/run/docker.pid"


def margin_mb(disk_mb: int) -> int:
    """Room above the quota for the filesystem's own metadata (inode tables, directories)
    and for the watchdog to see the quota passed (and say so) before writes are refused."""
    return max(16, disk_mb // 16)


def fs_bytes(disk_mb: int) -> int:
    """The most host disk one sandbox's root filesystem can take."""
    return (disk_mb + margin_mb(disk_mb)) * MIB


def _run(*cmd: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise OSError(f"{' '.join(cmd[:2])} failed: {(done.stderr or done.stdout).strip()}")


def layer_dir(info: dict[str, Any]) -> Path | None:
    """The directory holding a container's upper and work directories, when both are in
    it and visible from here."""
    graph = info.get("GraphDriver") or {}
    data = graph.get("Data") or {}
    upper, work = data.get("UpperDir"), data.get("WorkDir")
    if graph.get("Name") not in OVERLAY_DRIVERS or not upper or not work:
        return None
    parent = Path(upper).parent
    if Path(work).parent != parent or not parent.is_dir():
        return None
    return parent


class LayerQuota:
    """Puts each new container's writable layer on a filesystem of its quota's size."""

    def __init__(self, scratch: Path, *, enabled: bool) -> None:
        # beside the native-/usr scratch, not in it: that folder holds only its own
        self.scratch = scratch.with_name(scratch.name + "-layers")
        self._lock = threading.Lock()
        #: why the bound is not applied (None: it is, or has not been tried yet)
        self.unavailable: str | None = None if enabled else "off (sandbox.hard_disk_quota)"
        if enabled:
            self.unavailable = _precheck()

    @property
    def active(self) -> bool:
        return self.unavailable is None

    def describe(self) -> str:
        """One line for reports: what bounds a sandbox's disk here."""
        if self.active:
            return "hard: each sandbox's root filesystem is a filesystem of its quota's size"
        return f"watchdog only ({self.unavailable}): a fast writer can pass the quota briefly"

    def bound(self, info: dict[str, Any], disk_mb: int) -> bool:
        """Move a created (not yet started) container's layer onto a filesystem of
        `fs_bytes(disk_mb)`. False, with the bound turned off for this engine and the
        reason kept, when it cannot be done here."""
        if not self.active:
            return False
        layer = layer_dir(info)
        if layer is None:
            self._turn_off("the storage driver's layer is not a local overlay directory")
            return False
        try:
            self._mount(layer, fs_bytes(disk_mb))
        except (OSError, subprocess.SubprocessError) as exc:
            self._turn_off(str(exc))
            return False
        return True

    def _turn_off(self, reason: str) -> None:
        with self._lock:
            if self.unavailable is None:
                self.unavailable = reason

    def _mount(self, layer: Path, size: int) -> None:
        self.scratch.mkdir(parents=True, exist_ok=True, mode=0o700)
        name = uuid.uuid4().hex
        image, staging = self.scratch / f"{name}.img", self.scratch / f"{name}.mnt"
        mounted = False
        try:
            with open(image, "wb") as f:
                f.truncate(size)  # sparse: the host pays only for what is written
            # No journal, no reserved blocks: scratch space that lives as long as its box.
            _run("mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal", str(image))
            staging.mkdir(mode=0o700)
            _run("mount", "-o", "loop", str(image), str(staging))
            mounted = True
            (staging / "lost+found").rmdir()
            _copy_layer(layer, staging)
            _run("mount", "--bind", str(staging), str(layer))
        finally:
            if mounted:
                with contextlib.suppress(OSError, subprocess.SubprocessError):
                    _run("umount", str(staging))  # the bind mount (if made) keeps it alive
            with contextlib.suppress(OSError):
                staging.rmdir()
            with contextlib.suppress(OSError):
                image.unlink()  # the loop device holds it until the last unmount


def _copy_layer(layer: Path, dest: Path) -> None:
    """The layer directory as created (diff, work, link, lower), owners and modes kept."""
    for entry in layer.iterdir():
        target = dest / entry.name
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, target, symlinks=True)
        else:
            shutil.copy2(entry, target, follow_symlinks=False)
        st = entry.lstat()
        os.chown(target, st.st_uid, st.st_gid, follow_symlinks=False)
    st = layer.stat()
    os.chmod(dest, st.st_mode & 0o7777)
    os.chown(dest, st.st_uid, st.st_gid)


def _precheck() -> str | None:
    """Why the bound cannot work here, before trying (None: worth a try)."""
    if os.geteuid() != 0:
        return "not root: mounting a filesystem per sandbox needs it"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return f"{', '.join(missing)} not installed"
    if not Path("/dev/loop-control").exists():
        return "no loop devices (/dev/loop-control)"
    return _daemon_namespace()


def _daemon_namespace() -> str | None:
    """A mount made here is seen by the daemon only if both share a mount namespace."""
    try:
        pid = int(Path(DOCKER_PID).read_text().strip())
        theirs = os.readlink(f"/proc/{pid}/ns/mnt")
    except (OSError, ValueError):
        return f"the Docker daemon is not a local process (no readable {DOCKER_PID})"
    if theirs != os.readlink("/proc/self/ns/mnt"):
        return "the Docker daemon runs in another mount namespace"
    return None
