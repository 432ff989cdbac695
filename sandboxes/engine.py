"""`DockerEngine`: the front door to sandboxes on one Docker engine — the pool, standby, gc.

Images are `images.py`'s (base images, builds cached by content); every sandbox's
container is created, started and adopted by `containers.py`, which keeps the lockdown,
the disk quota and the labels; the engine decides when, how many and of which kind.

Invariants:
- at most `settings.pool_size` sandboxes from one engine are in use at once; `start`
  waits for a slot (up to `pool_wait_s`) instead of exhausting the machine;
- besides them, at most `settings.standby` containers per kind a caller declared
  (`standby()`) wait started and untouched; `start` hands one out instead of starting
  one, never twice (`standby.py`);
- a kind is decided in one place (`_kind`), where an unknown purpose is refused;
- `gc` only ever selects by our labels (`labels.ownership`);
- `run` is a sandbox whose own command is the work: attached before its start, read to
  its end under its timeout (then killed) and exec's output cap, never exec'd into, never
  on standby; it is `SandboxBroken` (never an exit status) when the container ended
  before the command;
- settings come in as `SandboxSettings`; nothing here reads the environment.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import docker
import docker.errors

from envfactory.core.errors import SandboxError, raise_as
from envfactory.core.models import BuildResult, ExecResult, Limits, Purpose, ServiceSpec
from envfactory.core.settings import SandboxSettings

from . import base_image as B
from . import execution as X
from . import native_usr as NU
from .containers import Containers, start_error
from .images import Images, Log, Substitute, tar_dir
from .sandbox import DockerSandbox
from .services import ServiceGroup, start_services
from .standby import Kind, Launched, Standby

__all__ = ["DockerEngine", "Log", "Substitute", "tar_dir"]


class DockerEngine:
    """Implements `sandboxes.protocol.SandboxEngine` on one Docker engine."""

    def __init__(
        self,
        settings: SandboxSettings | None = None,
        *,
        client: docker.DockerClient | None = None,
        recipe: B.BaseRecipe | None = None,
        pool_wait_s: float = 600.0,
        run_id: str | None = None,
    ) -> None:
        self.settings = settings or SandboxSettings()
        self.client = client or docker.from_env(timeout=self.settings.docker_timeout_s)
        self.pool_wait_s = pool_wait_s
        self.run_id = run_id
        self._pool = threading.BoundedSemaphore(self.settings.pool_size)
        #: base images and environment builds (`images.py`)
        self.images = Images(self.client, self.settings, recipe=recipe)
        #: every sandbox's container: created, started, watched for disk (`containers.py`)
        self.containers = Containers(self.client, self.settings)
        #: containers started ahead of demand for the kinds callers declared (`standby()`)
        self.prestarted = Standby(
            self.containers.launch, self.containers.discard, depth=self.settings.standby
        )

    @property
    def storage_opt(self) -> bool | None:
        """Does the storage driver take a size? None until the first sandbox is created."""
        return self.containers.storage_opt

    @property
    def native(self) -> NU.NativeUsr:
        """The kernel-overlay volumes of verification containers (`native_usr.py`)."""
        return self.containers.native

    @native.setter
    def native(self, value: NU.NativeUsr) -> None:
        self.containers.native = value

    def runtime(self) -> str:
        """runc, or runsc (gVisor) when asked for or when `auto` finds it on the engine."""
        return self.containers.runtime()

    # -- images -------------------------------------------------------------------------

    def ensure_base_image(
        self, flavour: str = "python", *, release: str | None = None, log: Log | None = None
    ) -> str:
        """The base image for a flavour on a Debian release (default: the recipe's suite,
        bookworm); `settings.base_image` wins over the local build."""
        return self.images.ensure_base_image(flavour, release=release, log=log)

    def substitute(self, ref: str) -> Substitute | None:
        """The local image standing in for a public FROM reference (None: keep it), with a
        warning when it is not the release the reference names (`Images.substitute`)."""
        return self.images.substitute(ref)

    def resolve_from(self, ref: str) -> str | None:
        """The local image standing in for a public FROM reference, or None to keep it."""
        return self.images.resolve_from(ref)

    def build(
        self,
        context_tar: bytes,
        *,
        dockerfile: str = "Dockerfile",
        tag: str | None = None,
        on_log: Log | None = None,
        network: bool | None = None,
        trusted: bool = False,
    ) -> BuildResult:
        """Build from a tar'd context; cached by content hash (`envfactory/env:<hash>`);
        an untrusted Dockerfile may make the daemon fetch nothing (`Images.build`)."""
        return self.images.build(
            context_tar,
            dockerfile=dockerfile,
            tag=tag,
            on_log=on_log,
            run_id=self.run_id,
            network=network,
            trusted=trusted,
        )

    def build_dir(
        self,
        path: Path,
        *,
        dockerfile: str = "Dockerfile",
        tag: str | None = None,
        on_log: Log | None = None,
    ) -> BuildResult:
        return self.images.build_dir(
            path, dockerfile=dockerfile, tag=tag, on_log=on_log, run_id=self.run_id
        )

    def remove_image(self, image: str) -> None:
        self.images.remove_image(image)

    async def abuild(self, context_tar: bytes, **kw: Any) -> BuildResult:
        return await asyncio.to_thread(self.build, context_tar, **kw)

    # -- sandboxes ----------------------------------------------------------------------

    def start(
        self,
        image: str,
        *,
        limits: Limits | None = None,
        purpose: Purpose = Purpose.EPISODE,
        run_id: str | None = None,
        network: bool | None = None,
        services: Sequence[ServiceSpec] = (),
        native_usr: bool = False,
    ) -> DockerSandbox:
        """A sandbox from `image`; with `services`, fresh service containers on a private
        network of its own, removed with it (`services.py`). `native_usr`: its /usr/lib and
        /usr/local through the kernel's overlayfs where that shows the image's own files
        (`native_usr.py`) — only for containers whose writable layer nothing reads
        afterwards."""
        if not self._pool.acquire(timeout=self.pool_wait_s):
            raise self._pool_exhausted()
        kind = self._kind(image, limits, purpose, run_id, network, native_usr)
        return self._start_in_slot(kind, services)

    def run(
        self,
        image: str,
        argv: Sequence[str],
        *,
        limits: Limits | None = None,
        purpose: Purpose = Purpose.VERIFY,
        run_id: str | None = None,
        network: bool | None = None,
        services: Sequence[ServiceSpec] = (),
        native_usr: bool = False,
        timeout: float | None = None,
    ) -> tuple[ExecResult, DockerSandbox]:
        """Run `argv` once as a fresh container's own command (as root, in `/`, with the
        output cap of `exec`; past `timeout` the container is killed) and read it to its end:
        no exec, which costs a runtime process, a seccomp filter and three engine calls
        (~45 ms of CPU here; benchmarks/sandbox_overhead.py). Returns the result and the
        stopped sandbox: its files stay readable, `remove()` returns the slot. Every
        process has ended when this returns (the container's init exited). A container
        that ended before its command did (killed under it: the runtime, the host) raises
        `SandboxBroken`, never an exit status: a shell around the command prints a mark
        of this run's own when the command has ended (`execution.marking_end`)."""
        limits = limits or Limits()
        timeout_s = float(timeout if timeout is not None else limits.exec_timeout_s)
        if not self.settings.own_command:
            sb = self.start(
                image,
                limits=limits,
                purpose=purpose,
                run_id=run_id,
                network=network,
                services=services,
                native_usr=native_usr,
            )
            return self._exec_once(sb, argv, timeout_s)
        if not self._pool.acquire(timeout=self.pool_wait_s):
            raise self._pool_exhausted()
        end = X.end_mark()
        kind = dataclasses.replace(
            self._kind(image, limits, purpose, run_id, network, native_usr),
            command=tuple(X.marking_end(argv, end)),
        )
        sb = self._start_in_slot(kind, services)
        try:
            return sb.finish(timeout_s, end), sb
        except BaseException:
            sb.remove()
            raise

    def _exec_once(
        self, sb: DockerSandbox, argv: Sequence[str], timeout_s: float
    ) -> tuple[ExecResult, DockerSandbox]:
        """`run` with `own_command` off: in a started sandbox, one exec as root in `/`,
        then the container killed (every process ends; its files stay readable)."""
        try:
            res = sb.exec(list(argv), timeout=timeout_s, workdir="/", user="root")
            if not res.disk_exceeded:
                with contextlib.suppress(docker.errors.APIError):
                    self.client.api.kill(sb.id)
            return res, sb
        except BaseException:
            sb.remove()
            raise

    def _pool_exhausted(self) -> SandboxError:
        return SandboxError(
            f"no sandbox slot free after {self.pool_wait_s:.0f}s (pool_size="
            f"{self.settings.pool_size})",
            hint="raise ENVFACTORY_SANDBOX__POOL_SIZE",
        )

    def _start_in_slot(self, kind: Kind, services: Sequence[ServiceSpec] = ()) -> DockerSandbox:
        """Start holding a pool slot already; the slot goes back on failure or remove().
        A container of this kind waiting on standby is handed out instead of a new one."""
        group: ServiceGroup | None = None
        try:
            if services:
                group = start_services(
                    self.client, services, run_id=kind.run_id, home=self.settings.home_scope
                )
                launched = self.containers.launch(dataclasses.replace(kind, join=group.network))
            elif kind.command:
                launched = self.containers.launch(kind)
            else:
                launched = self.prestarted.take(kind) or self.containers.launch(kind)
        except BaseException as exc:
            self._pool.release()
            if group is not None:
                group.remove()
            raise_as(start_error(kind.image, exc), exc)
        return self._adopt(kind, launched, group)

    def _kind(
        self,
        image: str,
        limits: Limits | None,
        purpose: Purpose,
        run_id: str | None,
        network: bool | None,
        native_usr: bool = False,
    ) -> Kind:
        """What `start` decides a container by, defaults filled in (the standby key); an
        unknown purpose is refused here, never left to miss standby without a word."""
        limits = limits or Limits()
        net = limits.network if network is None else network
        return Kind(
            image,
            limits,
            bool(net),
            Purpose.of(purpose),
            run_id or self.run_id,
            native_usr=native_usr,
        )

    def _adopt(
        self, kind: Kind, launched: Launched, group: ServiceGroup | None = None
    ) -> DockerSandbox:
        """The sandbox around a started container, its slot held: watched for disk from
        now on; removing it removes its services and returns the slot."""
        cid = launched.id
        return self.containers.adopt(kind, launched, lambda: self._released(cid, group))

    def standby(
        self,
        image: str,
        *,
        limits: Limits | None = None,
        purpose: Purpose = Purpose.EPISODE,
        run_id: str | None = None,
        network: bool | None = None,
        native_usr: bool = False,
    ) -> contextlib.AbstractContextManager[None]:
        """While the block runs, keep `settings.standby` containers of this kind started
        ahead of demand; `start` with the same arguments hands one out (`standby.py`)."""
        kind = self._kind(image, limits, purpose, run_id, network, native_usr)
        return self.prestarted.keep(kind)

    def close(self) -> None:
        """Remove every container waiting on standby (sandboxes handed out stay theirs)."""
        self.prestarted.close()

    def _released(self, container_id: str, group: ServiceGroup | None = None) -> None:
        """A sandbox was removed: stop measuring it, remove its services and give its
        pool slot back."""
        self.containers.unwatch(container_id)
        try:
            self.containers.release_usr(container_id)
            if group is not None:
                group.remove()
        finally:
            self._pool.release()

    @contextlib.contextmanager
    def sandbox(self, image: str, **kw: Any) -> Iterator[DockerSandbox]:
        """`with engine.sandbox(image) as sb:` — removed on exit, whatever happens."""
        sb = self.start(image, **kw)
        try:
            yield sb
        finally:
            sb.remove()

    @contextlib.asynccontextmanager
    async def asandbox(self, image: str, **kw: Any) -> AsyncIterator[DockerSandbox]:
        sb = await self.astart(image, **kw)
        try:
            yield sb
        finally:
            # Shielded: a cancelled activity must still remove its container.
            await asyncio.shield(asyncio.to_thread(sb.remove))

    async def astart(
        self,
        image: str,
        *,
        limits: Limits | None = None,
        purpose: Purpose = Purpose.EPISODE,
        run_id: str | None = None,
        network: bool | None = None,
        services: Sequence[ServiceSpec] = (),
    ) -> DockerSandbox:
        """Wait for a slot on the event loop, not in a worker thread: threads parked on
        the pool would starve the `remove()` calls that free it (a deadlock)."""
        deadline = time.monotonic() + self.pool_wait_s
        while not self._pool.acquire(blocking=False):
            if time.monotonic() >= deadline:
                raise self._pool_exhausted()
            await asyncio.sleep(0.05)
        kind = self._kind(image, limits, purpose, run_id, network)
        task = asyncio.ensure_future(asyncio.to_thread(self._start_in_slot, kind, services))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(_remove_when_started)  # nobody will get to remove it
            raise

    # -- cleanup ------------------------------------------------------------------------

    def disk_bound(self) -> str:
        """What bounds a sandbox's disk on this engine, in one line (known once a
        container was created)."""
        opt = self.containers.storage_opt
        if opt is None:
            return "not known yet: no sandbox was started"
        if opt:
            return "hard: the storage driver's size limit (storage-opt)"
        return self.containers.layer_quota.describe()

    def gc(
        self,
        *,
        older_than_s: float = 0,
        run_id: str | None = None,
        include_live: bool = False,
        images: bool = False,
        foreign_ttl_s: float | None = None,
        all_homes: bool = False,
    ) -> list[str]:
        """Remove our orphaned containers (owner process gone; another host's only past
        `foreign_ttl_s`) and, with `images`, our snapshot images; never anything without
        our owner label, and only this install's (`home_scope`) unless `all_homes`.
        Returns what was removed."""
        from .gc import collect

        removed = collect(
            self.client,
            older_than_s=older_than_s,
            run_id=run_id,
            include_live=include_live,
            images=images,
            foreign_ttl_s=foreign_ttl_s,
            home=None if all_homes else self.settings.home_scope,
        )
        live = [n.lstrip("/") for c in self.client.api.containers(all=True) for n in c["Names"]]
        return removed + self.native.sweep(live)


def _remove_when_started(task: asyncio.Future[DockerSandbox]) -> None:
    if not task.cancelled() and task.exception() is None:
        threading.Thread(target=task.result().remove, daemon=True).start()
