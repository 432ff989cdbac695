"""`Containers`: creating, starting and adopting the container of a sandbox `Kind`.

The one path every sandbox's container takes, whether `DockerEngine.start` wants it now
or standby starts it ahead of demand (`standby.py`); slots are the engine's, not this.

Invariants:
- a container is locked down unless its kind asks otherwise: network off, every
  capability dropped and only the profile's added back (`capabilities.py`; "locked" adds
  none), no-new-privileges, Docker's default seccomp, no devices, memory (no swap) / cpu /
  pids limits, an init process that reaps zombies (a `Kind.command` container's: the
  shell marking its command's end, pid 1, which nothing inside can kill);
- every container has a disk quota (`Limits.disk_mb`): the engine's storage-opt where its
  driver takes one (learned at the first create), else a filesystem of the quota's size
  under its writable layer where this host allows it (`layer_quota.py`), and always the
  disk watchdog (`disk.py`), which stops a sandbox past its quota;
- everything created is labelled (`labels.ownership`) and named for its purpose;
- a container with `native_usr` reads /usr/lib and /usr/local through kernel overlays of
  its own image's layers where that view is the image's (`native_usr.py`); their writes
  go to a per-container directory, released with the container and counted by the disk
  watchdog;
- a `Kind.command` container's output is attached before its start (nothing it prints
  is missed), and it never logs;
- a container whose create, start or inspect fails is removed before the error goes on.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import docker.errors
from docker.types import LogConfig

from envfactory.core.errors import ConfigError, SandboxError
from envfactory.core.models import Limits
from envfactory.core.settings import SandboxSettings

from . import capabilities as C
from . import disk as D
from . import execution as X
from . import labels as L
from . import native_usr as NU
from .disk import DiskWatchdog
from .layer_quota import LayerQuota
from .sandbox import DockerSandbox
from .shutdown import refuse_if_stopping
from .standby import Kind, Launched

Started = tuple[str, str, NU.Planned | None, Any]  # id, name, overlay volumes, attached stream


class Containers:
    """The containers of one engine's sandboxes: created, started, watched, discarded."""

    def __init__(self, client: docker.DockerClient, settings: SandboxSettings) -> None:
        self.client = client
        self.settings = settings
        self._runtime: str | None = None
        #: does the storage driver take a size? None until the first container is created
        self.storage_opt: bool | None = None
        self._watchdog: DiskWatchdog | None = None
        self._watchdog_lock = threading.Lock()
        scratch = settings.scratch_dir or NU.DEFAULT_SCRATCH
        #: the kernel-overlay volumes of verification containers (`native_usr.py`)
        self.native = NU.NativeUsr(scratch, enabled=settings.native_usr)
        #: the hard disk bound where the driver takes no size (`layer_quota.py`)
        self.layer_quota = LayerQuota(scratch, enabled=settings.hard_disk_quota)
        self._scratch: dict[str, Path] = {}  # container id → its volumes' scratch directory
        self._scratch_lock = threading.Lock()
        self._image_info: dict[str, dict[str, Any]] = {}  # image id → its inspect

    # -- launching ------------------------------------------------------------------------

    def launch(self, kind: Kind) -> Launched:
        """Create and start a container of `kind` and inspect it (no slot involved): the
        one path every sandbox's container takes, started on demand or on standby. None
        starts once the process is ending (`shutdown.begin`)."""
        refuse_if_stopping()
        cid, name, usr, stream = self._create_and_start(kind)
        try:
            info = self.client.api.inspect_container(cid)
        except BaseException:
            hang_up(stream)
            self.discard(cid)
            raise
        return Launched(cid, name, info, {} if usr is None else usr.uppers, stream)

    def discard(self, container_id: str) -> None:
        """Remove a container that never became a sandbox (or waited on standby)."""
        try:
            with contextlib.suppress(docker.errors.NotFound):
                self.client.api.remove_container(container_id, force=True, v=True)
        finally:
            self.release_usr(container_id)

    def release_usr(self, container_id: str) -> None:
        """Remove a removed container's scratch directory, if it had one."""
        with self._scratch_lock:
            scratch = self._scratch.pop(container_id, None)
        if scratch is not None:
            self.native.release(scratch)

    def adopt(self, kind: Kind, launched: Launched, on_remove: Callable[[], None]) -> DockerSandbox:
        """The sandbox around a started container, watched for disk from now on;
        `on_remove` runs when it is removed."""
        cid, limits = launched.id, kind.limits
        container = self.client.containers.prepare_model({"Id": cid, "Name": launched.name})
        sb = DockerSandbox(
            self.client,
            container,
            kind.image,
            default_timeout_s=limits.exec_timeout_s,
            output_cap=self.settings.output_cap_bytes,
            run_id=kind.run_id,
            home=self.settings.home_scope,
            on_remove=on_remove,
            disk_mb=limits.disk_mb,
            attached=launched.stream,
        )
        sb.graph_driver = launched.info.get("GraphDriver") or {}  # spares diff() an inspect
        try:
            watchdog = self._disk_watchdog()
            watchdog.watch(launched.info, limits.disk_mb, sb.stop_for_disk, launched.uppers)
        except BaseException:
            sb.remove()
            raise
        return sb

    def unwatch(self, container_id: str) -> None:
        """Stop measuring a removed sandbox's disk."""
        if self._watchdog is not None:
            self._watchdog.unwatch(container_id)

    def _disk_watchdog(self) -> DiskWatchdog:
        with self._watchdog_lock:
            if self._watchdog is None:
                self._watchdog = DiskWatchdog(self.client, self.settings.disk_poll_s)
            return self._watchdog

    def runtime(self) -> str:
        """runc, or runsc (gVisor) when asked for or when `auto` finds it on the engine."""
        if self._runtime is None:
            want = self.settings.runtime
            have = (
                set((self.client.info().get("Runtimes") or {}).keys()) if want != "runc" else set()
            )
            if want == "runsc" and "runsc" not in have:
                raise ConfigError(
                    "runtime runsc (gVisor) is not configured on this Docker engine",
                    hint="install runsc and register it, or set runtime to auto/runc",
                )
            self._runtime = "runsc" if want != "runc" and "runsc" in have else "runc"
        return self._runtime

    # -- creating -------------------------------------------------------------------------

    def _create_and_start(self, kind: Kind) -> Started:
        """Low-level create + start, returning the id, name and overlay volumes (docker-py's
        `containers.run` adds an inspect of its own). `kind.join`: the services' network,
        instead of none (and besides the default bridge when the sandbox has network). A
        container whose overlay volumes the engine refuses is started again without them,
        and the image keeps the storage driver's view from then on (`NativeUsr.refuse`). A
        `kind.command` container's output is attached before its start (nothing it prints
        is missed) and returned last."""
        native = kind.native_usr and self.runtime() == "runc"
        image = self._inspect_image(kind.image) if native else {}
        name, labels = named(kind, self.settings.home_scope)
        usr = self.native.plan(image, name, labels) if native else None
        if usr is None:
            return self._create_and_start_as(kind, name, labels, None)
        try:
            return self._create_and_start_as(kind, name, labels, usr)
        except docker.errors.NotFound:
            raise
        except docker.errors.APIError as exc:
            self.native.refuse(image, exc)
        name, labels = named(kind, self.settings.home_scope)
        return self._create_and_start_as(kind, name, labels, None)

    def _inspect_image(self, ref: str) -> dict[str, Any]:
        """An image's inspect; kept for an image id (content-addressed: it never changes),
        which is what gates verify on, so a verification does not ask again."""
        info = self._image_info.get(ref)
        if info is None:
            info = self.client.api.inspect_image(ref)
            if ref.startswith("sha256:"):
                if len(self._image_info) >= 256:
                    self._image_info.clear()
                self._image_info[ref] = info
        return info

    def _create_and_start_as(
        self, kind: Kind, name: str, labels: dict[str, str], usr: NU.Planned | None
    ) -> Started:
        api = self.client.api
        try:
            cid = self._create(kind, name, labels, usr)
        except BaseException:
            if usr is not None:
                self.native.release(usr.scratch)
            raise
        if usr is not None:
            with self._scratch_lock:
                self._scratch[cid] = usr.scratch
        stream = None
        try:
            if self.storage_opt is False:
                self.layer_quota.bound(api.inspect_container(cid), kind.limits.disk_mb)
            if kind.join and kind.network:
                api.connect_container_to_network(cid, "bridge")
            if kind.command:
                stream = api.attach_socket(cid, params={"stdout": 1, "stderr": 1, "stream": 1})
            api.start(cid)
        except BaseException:
            hang_up(stream)
            with contextlib.suppress(docker.errors.APIError):
                api.remove_container(cid, force=True, v=True)
            self.release_usr(cid)
            raise
        return cid, name, usr, stream

    def _create(self, kind: Kind, name: str, labels: dict[str, str], usr: NU.Planned | None) -> str:
        """Create the container; the first create also learns whether the engine's storage
        driver takes a size (`storage_opt`): if it refuses, the disk watchdog alone
        enforces `limits.disk_mb` from then on (`disk.py`)."""
        net, join = kind.network, kind.join
        while True:
            sized = self.storage_opt is not False
            host = self._host_config(kind.limits, net, sized, join, usr, bool(kind.command))
            try:
                cid = self.client.api.create_container(
                    kind.image,
                    command=[],
                    entrypoint=list(kind.command) or ["sleep", "infinity"],
                    user="0" if kind.command else None,
                    working_dir="/" if kind.command else None,
                    name=name,
                    host_config=host,
                    labels=labels,
                    stop_signal="SIGKILL",
                    # No network at all: a private namespace with loopback only, as with
                    # network mode "none", but the engine skips its network hooks (a
                    # process per start: ~40% of a container's start-to-remove CPU here;
                    # benchmarks/sandbox_overhead.py).
                    network_disabled=not net and join is None,
                )["Id"]
            except docker.errors.APIError as exc:
                if not (sized and D.storage_opt_refused(exc)):
                    raise
                self.storage_opt = False
                continue
            if sized:
                self.storage_opt = True
            return str(cid)

    def _host_config(
        self,
        limits: Limits,
        net: bool,
        sized: bool,
        join: str | None = None,
        usr: NU.Planned | None = None,
        attached: bool = False,
    ) -> dict[str, Any]:
        return self.client.api.create_host_config(
            # A command of its own runs under `execution.marking_end`'s shell as pid 1:
            # nothing in the container can kill it (it reaps what it inherits while it
            # waits), so only the engine or the host can end it before its command.
            init=not attached,
            # An attached container's output is read from its stream, never from a log.
            log_config=LogConfig(type="none") if attached else None,
            network_mode=join or ("bridge" if net else "none"),
            cap_drop=["ALL"],
            cap_add=C.cap_add(limits.capabilities),
            security_opt=["no-new-privileges"],
            mem_limit=f"{limits.memory_mb}m",
            memswap_limit=f"{limits.memory_mb}m",
            nano_cpus=int(limits.cpus * 1e9),
            pids_limit=limits.pids,
            runtime=None if self.runtime() == "runc" else self.runtime(),
            storage_opt={"size": D.storage_opt_size(limits.disk_mb)} if sized else None,
            mounts=None if usr is None else list(usr.mounts),
        )


def named(kind: Kind, home: str) -> tuple[str, dict[str, str]]:
    """A new container's name and its ownership labels."""
    name = f"envfactory-{kind.purpose}-{uuid.uuid4().hex[:10]}"
    return name, L.ownership(kind.purpose, kind.run_id, home=home, sandbox=name)


def start_error(image: str, exc: BaseException) -> BaseException:
    """What a failed start raises: a missing image is a configuration error."""
    if isinstance(exc, docker.errors.ImageNotFound):
        return ConfigError(
            f"image {image} does not exist locally",
            hint="build it first (engine.build / ensure_base_image)",
        )
    if isinstance(exc, docker.errors.APIError):
        return SandboxError(f"starting a sandbox from {image} failed: {exc}")
    return exc


def hang_up(stream: Any) -> None:
    """Close an attached output stream (None: nothing was attached)."""
    if stream is not None:
        X.hang_up(X.raw_socket(stream), stream)
