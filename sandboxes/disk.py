"""Disk quota for sandboxes: the engine's storage-opt where it has one, else a watchdog.

`Limits.disk_mb` bounds what a sandbox may write: its container's writable layer plus the
volumes Docker made for it. Two enforcements, chosen once per engine:

- **storage-opt** (overlay2 on xfs with pquota, btrfs, zfs, devicemapper): the engine
  refuses writes past `storage_opt_size` (the quota plus headroom), so a writer gets
  ENOSPC even between two watchdog measurements;
- **watchdog** (every engine, the only one on fuse-overlayfs, which answers
  "--storage-opt is not supported"): one thread per engine measures each sandbox's upper
  directory from the host (a walk summing allocated blocks: sparse files count for what
  they use) and stops the sandbox at the quota — the container is killed and removed at
  once, which frees the disk, and the exec in flight reports `disk_exceeded`.

Why not tmpfs mounts on /tmp and the workspace: they count against the memory limit,
vanish from snapshots (a snapshot is the container's layer) and leave every other path
unbounded. Why not the daemon's `SizeRw`: on fuse-overlayfs it diffs the whole root
filesystem (seconds); it is used only when the upper directory is not readable here
(a remote daemon).

Cost and bound: a walk costs time proportional to the files written (about 1 ms per
thousand here). A sandbox is measured every `disk_poll_s`, never more often than ten
times its own walk time when idle, and sooner when its usage grows: the next measurement
comes before the current write rate could reach the quota. The overshoot past the quota
is therefore at most what the sandbox writes in one short interval (measured: see
docs/verifiers.md, "Disk").
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import docker
import docker.errors
import requests

MIB = 1024 * 1024
OVERLAY_DRIVERS = {"overlay2", "fuse-overlayfs", "overlay"}
MIN_INTERVAL_S = 0.05
IDLE_COST_FACTOR = 20  # an idle sandbox's walks take at most 5% of one core


def storage_opt_size(disk_mb: int) -> str:
    """The storage-opt ceiling: the quota plus headroom, so the watchdog sees the quota
    passed (and reports it) before the engine's hard limit stops the writer."""
    return f"{disk_mb + max(64, disk_mb // 20)}m"


def storage_opt_refused(exc: docker.errors.APIError) -> bool:
    """The engine's answer to a storage-opt its driver does not support."""
    return "storage-opt" in str(exc.explanation or exc).lower()


def usage_bytes(paths: list[str]) -> int:
    """Bytes allocated under `paths` (directories included; symlinks not followed)."""
    total = 0
    stack = list(paths)
    while stack:
        path = stack.pop()
        try:
            entries = os.scandir(path)
        except OSError:
            continue  # removed meanwhile (a file deleted between listing and scanning)
        with entries:
            for entry in entries:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                total += st.st_blocks * 512
                if stat.S_ISDIR(st.st_mode):
                    stack.append(entry.path)
    return total


def local_paths(
    inspect: dict[str, Any], uppers: Mapping[str, str] | None = None
) -> list[str] | None:
    """The host paths holding a container's writes (upper directory and volumes), or None
    when they are not readable from here. `uppers`: volumes that are overlays (mount
    point → the overlay's upper directory, which holds their writes; their source is the
    whole merged view)."""
    graph = inspect.get("GraphDriver") or {}
    upper = (graph.get("Data") or {}).get("UpperDir")
    if graph.get("Name") not in OVERLAY_DRIVERS or not upper or not os.access(upper, os.R_OK):
        return None
    uppers = uppers or {}
    volumes = [
        uppers.get(m.get("Destination", ""), m.get("Source"))
        for m in inspect.get("Mounts") or []
        if m.get("Type") == "volume" and m.get("Source")
    ]
    return [upper, *(v for v in volumes if v and os.access(v, os.R_OK))]


def daemon_size_rw(api: docker.APIClient, container_id: str) -> int:
    """The daemon's `SizeRw` for a container (`inspect` with `size=1`: docker-py's
    `inspect_container` has no size flag). Raises `docker.errors.NotFound` when it is gone."""
    url = f"{api.base_url}/v{api.api_version}/containers/{container_id}/json"
    response = api.get(url, params={"size": 1})
    try:
        response.raise_for_status()
    except requests.exceptions.HTTPError as exc:
        docker.errors.create_api_error_from_http_exception(exc)  # raises NotFound or APIError
    return int(response.json().get("SizeRw") or 0)


@dataclass
class Watched:
    """One sandbox under the watchdog."""

    container_id: str
    quota: int  # bytes
    paths: list[str] | None  # None: ask the daemon (SizeRw)
    on_exceeded: Callable[[int], None]
    due: float = 0.0
    used: int = 0
    measured_at: float = 0.0
    walk_s: float = 0.0

    def next_interval(self, poll_s: float, now: float, used: int) -> float:
        """Idle: every `poll_s` (or ten walks' time). Growing: before the current rate
        could reach the quota, but never sooner than two walks' time."""
        idle = max(poll_s, IDLE_COST_FACTOR * self.walk_s)
        if not self.measured_at or used <= self.used:
            return idle
        rate = (used - self.used) / max(now - self.measured_at, 1e-3)
        eta = (self.quota - used) / rate
        return min(idle, max(eta / 2, 2 * self.walk_s, MIN_INTERVAL_S))


class DiskWatchdog:
    """Measures every watched sandbox and calls its `on_exceeded(used)` at the quota."""

    def __init__(self, client: docker.DockerClient, poll_s: float) -> None:
        self.client = client
        self.poll_s = poll_s
        self._watched: dict[str, Watched] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        #: the last unexpected failure of a measurement (the watchdog keeps going)
        self.last_error: BaseException | None = None

    def watch(
        self,
        inspect: dict[str, Any],
        disk_mb: int,
        on_exceeded: Callable[[int], None],
        uppers: Mapping[str, str] | None = None,
    ) -> None:
        """Watch the container `inspect` describes (the engine's inspect right after start);
        `uppers` as in `local_paths`."""
        container_id = str(inspect["Id"])
        w = Watched(container_id, disk_mb * MIB, local_paths(inspect, uppers), on_exceeded)
        with self._lock:
            self._watched[container_id] = w
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="envfactory-disk-watchdog", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def unwatch(self, container_id: str) -> None:
        with self._lock:
            self._watched.pop(container_id, None)

    def measure(self, w: Watched) -> int:
        """Bytes the sandbox has written (its upper directory and volumes)."""
        if w.paths is not None:
            return usage_bytes(w.paths)
        return daemon_size_rw(self.client.api, w.container_id)

    def _run(self) -> None:
        while True:
            with self._lock:
                due = sorted(self._watched.values(), key=lambda w: w.due)
            now = time.monotonic()
            if not due or due[0].due > now:
                wait = due[0].due - now if due else None
                self._wake.wait(wait)
                self._wake.clear()
                continue
            try:
                self._check(due[0])
            except Exception as exc:  # recorded; one bad sandbox must not end the watchdog
                self.last_error = exc
                due[0].due = time.monotonic() + self.poll_s

    def _check(self, w: Watched) -> None:
        if w.paths is not None and not os.path.isdir(w.paths[0]):
            self.unwatch(w.container_id)  # removed behind its owner's back (gc, janitor)
            return
        t0 = time.monotonic()
        try:
            used = self.measure(w)
        except docker.errors.NotFound:
            self.unwatch(w.container_id)  # removed by its owner or the janitor
            return
        except docker.errors.APIError:
            used = w.used  # the daemon is busy: measure again after the idle interval
        now = time.monotonic()
        w.walk_s = now - t0
        interval = w.next_interval(self.poll_s, now, used)
        w.used, w.measured_at, w.due = used, now, now + interval
        if used >= w.quota:
            self.unwatch(w.container_id)
            with contextlib.suppress(docker.errors.APIError):
                w.on_exceeded(used)
