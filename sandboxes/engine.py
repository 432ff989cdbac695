"""`DockerEngine`: base images, environment builds, locked-down sandboxes, gc, the pool.

Invariants:
- a started sandbox is locked down unless the caller asks otherwise: network off, every
  capability dropped and only the profile's added back (`capabilities.py`; "locked" adds
  none), no-new-privileges, Docker's default seccomp, no devices, memory (no swap) / cpu /
  pids limits, an init process that reaps zombies (a `run` container's: the shell marking
  its command's end, pid 1, which nothing inside can kill);
- every sandbox has a disk quota (`Limits.disk_mb`): the engine's storage-opt where its
  driver takes one (learned at the first create), and always the disk watchdog
  (`disk.py`), which stops a sandbox past its quota;
- at most `settings.pool_size` sandboxes from one engine are in use at once; `start`
  waits for a slot (up to `pool_wait_s`) instead of exhausting the machine;
- besides them, at most `settings.standby` containers per kind a caller declared
  (`standby()`) wait started and untouched; `start` hands one out instead of starting
  one, never twice (`standby.py`);
- everything created is labelled (`labels.ownership`); `gc` only ever selects by label;
- a container started with `native_usr` reads /usr/lib and /usr/local through kernel
  overlays of its own image's layers where that view is the image's (`native_usr.py`);
  their writes go to a per-container directory, removed with it and counted by the
  disk watchdog;
- `run` is a sandbox whose own command is the work: attached before its start, read to
  its end under its timeout (then killed) and exec's output cap, never exec'd into, never
  on standby; it is
  `SandboxBroken` (never an exit status) when the container ended before the command;
- settings come in as `SandboxSettings`; nothing here reads the environment.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
from docker.types import LogConfig

from envfactory.core.errors import ConfigError, ImageBuildFailed, SandboxError, raise_as
from envfactory.core.models import BuildResult, ExecResult, Limits, Purpose, ServiceSpec
from envfactory.core.settings import SandboxSettings

from . import base_image as B
from . import builds as BL
from . import capabilities as C
from . import disk as D
from . import execution as X
from . import labels as L
from . import native_usr as NU
from .disk import DiskWatchdog
from .sandbox import DockerSandbox
from .services import ServiceGroup, start_services
from .standby import Kind, Launched, Standby

Log = Callable[[str], None]


@dataclass(frozen=True)
class Substitute:
    """A local image for a public FROM reference; `warning` when the release differs."""

    image: str
    warning: str | None = None


def _collect(
    substitute: Callable[[str], Substitute | None], warnings: list[str]
) -> Callable[[str], str | None]:
    """`substitute` as the plain resolver `rewrite_from_lines` takes, keeping the warnings."""

    def resolve(ref: str) -> str | None:
        sub = substitute(ref)
        if sub and sub.warning and sub.warning not in warnings:
            warnings.append(sub.warning)
        return sub.image if sub else None

    return resolve


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
        self._recipe = recipe
        self.pool_wait_s = pool_wait_s
        self.run_id = run_id
        self._pool = threading.BoundedSemaphore(self.settings.pool_size)
        self._base_cache: dict[str, str] = {}
        self._runtime: str | None = None
        #: does the storage driver take a size? None until the first sandbox is created
        self.storage_opt: bool | None = None
        self._watchdog: DiskWatchdog | None = None
        self._watchdog_lock = threading.Lock()
        #: containers started ahead of demand for the kinds callers declared (`standby()`)
        self.prestarted = Standby(self._launch, self._discard, depth=self.settings.standby)
        scratch = self.settings.scratch_dir or NU.DEFAULT_SCRATCH
        #: the kernel-overlay volumes of verification containers (`native_usr.py`)
        self.native = NU.NativeUsr(scratch, enabled=self.settings.native_usr)
        self._scratch: dict[str, Path] = {}  # container id → its volumes' scratch directory
        self._scratch_lock = threading.Lock()
        self._image_info: dict[str, dict[str, Any]] = {}  # image id → its inspect

    # -- images -------------------------------------------------------------------------

    def ensure_base_image(
        self, flavour: str = "python", *, release: str | None = None, log: Log | None = None
    ) -> str:
        """The base image for a flavour on a Debian release (default: the recipe's suite,
        bookworm); `settings.base_image` wins over the local build."""
        if self.settings.base_image:
            return self.settings.base_image
        key = f"{flavour}@{release or ''}"
        if key not in self._base_cache:
            recipe = self._recipe_for(release)
            self._base_cache[key] = B.ensure_base_image(
                self.client, flavour, recipe=recipe, log=log or (lambda _: None)
            )
        return self._base_cache[key]

    def _recipe_for(self, release: str | None) -> B.BaseRecipe:
        recipe = self._recipe or B.BaseRecipe.from_host()
        if release is None or release == recipe.suite:
            return recipe
        if release not in BL.RELEASES:
            raise ConfigError(
                f"unknown Debian release {release!r}", hint=f"choose one of {sorted(BL.RELEASES)}"
            )
        # The host's mirror serves every release (find_mirror falls back to it).
        return dataclasses.replace(recipe, suite=release)

    def substitute(self, ref: str) -> Substitute | None:
        """The local image standing in for a public FROM reference (None: keep it), with a
        warning when it is not the release the reference names. `from_map` and
        `base_image` are the user's choice: they win and carry no warning."""
        custom = BL.match_map(ref, self.settings.from_map)
        if custom:
            return Substitute(custom)
        standin = BL.match_map(ref, BL.BUILTIN_MAP) if self.settings.map_public_images else None
        if standin is None:
            return None
        image = self.ensure_base_image(standin.flavour, release=standin.release)
        warning = None if self.settings.base_image else standin.warning(ref, image)
        return Substitute(image, warning)

    def resolve_from(self, ref: str) -> str | None:
        """The local image standing in for a public FROM reference, or None to keep it."""
        sub = self.substitute(ref)
        return sub.image if sub else None

    def build(
        self,
        context_tar: bytes,
        *,
        dockerfile: str = "Dockerfile",
        tag: str | None = None,
        on_log: Log | None = None,
    ) -> BuildResult:
        """Build from a tar'd context; cached by content hash (`envfactory/env:<hash>`)."""
        started = time.monotonic()
        ctx = BL.Context.from_tar(context_tar)
        text = ctx.read(dockerfile)
        if text is None:
            raise ImageBuildFailed(
                f"the build context has no {dockerfile}",
                hint="put a Dockerfile at the root of the context or pass dockerfile=",
            )
        warnings: list[str] = []
        rewritten, subs = BL.rewrite_from_lines(text.decode(), _collect(self.substitute, warnings))
        if subs:
            ctx = ctx.replace(dockerfile, rewritten.encode())
        chash = ctx.content_hash(dockerfile)
        env_tag = f"{BL.ENV_REPO}:{chash[:24]}"
        cached = B.image_exists(self.client, env_tag)
        log = f"cached: {env_tag}\n" if cached else ""
        if not cached:
            out = BL.run_build(
                self.client,
                ctx.to_tar(),
                tag=env_tag,
                dockerfile=dockerfile,
                labels=BL.env_labels(chash, self.run_id),
                network=self.settings.build_network,
                timeout_s=self.settings.build_timeout_s,
                on_log=on_log,
            )
            log = out.log
        image = self.client.images.get(env_tag)
        if tag and tag != env_tag:
            repo, _, t = tag.rpartition(":") if ":" in tag.split("/")[-1] else (tag, "", "latest")
            image.tag(repo, t)
        return BuildResult(
            image=BL.id_of(image, env_tag),
            tag=tag or env_tag,
            context_hash=chash,
            cached=cached,
            substitutions=subs,
            warnings=tuple(warnings),
            duration_s=round(time.monotonic() - started, 3),
            log_tail=log[-BL.LOG_TAIL_BYTES :],
        )

    def build_dir(
        self,
        path: Path,
        *,
        dockerfile: str = "Dockerfile",
        tag: str | None = None,
        on_log: Log | None = None,
    ) -> BuildResult:
        path = Path(path)
        if not (path / dockerfile).is_file():
            raise ImageBuildFailed(
                f"{path / dockerfile} does not exist",
                hint="point build_dir at a directory holding a Dockerfile",
            )
        return self.build(tar_dir(path), dockerfile=dockerfile, tag=tag, on_log=on_log)

    def remove_image(self, image: str) -> None:
        with contextlib.suppress(docker.errors.ImageNotFound):
            self.client.images.remove(image, force=True)

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
            return self._run_by_exec(
                image, argv, limits, purpose, run_id, network, services, native_usr, timeout_s
            )
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

    def _run_by_exec(
        self,
        image: str,
        argv: Sequence[str],
        limits: Limits,
        purpose: Purpose,
        run_id: str | None,
        network: bool | None,
        services: Sequence[ServiceSpec],
        native_usr: bool,
        timeout_s: float,
    ) -> tuple[ExecResult, DockerSandbox]:
        """`run` with `own_command` off: a started container, one exec as root in `/`,
        then the container killed (every process ends; its files stay readable)."""
        sb = self.start(
            image,
            limits=limits,
            purpose=purpose,
            run_id=run_id,
            network=network,
            services=services,
            native_usr=native_usr,
        )
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
                group = start_services(self.client, services, run_id=kind.run_id)
                launched = self._launch(dataclasses.replace(kind, join=group.network))
            elif kind.command:
                launched = self._launch(kind)
            else:
                launched = self.prestarted.take(kind) or self._launch(kind)
        except BaseException as exc:
            self._pool.release()
            if group is not None:
                group.remove()
            raise_as(_start_error(kind.image, exc), exc)
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

    def _launch(self, kind: Kind) -> Launched:
        """Create and start a container of `kind` and inspect it (no slot involved): the
        one path every sandbox's container takes, started on demand or on standby."""
        cid, name, usr, stream = self._create_and_start(kind)
        try:
            info = self.client.api.inspect_container(cid)
        except BaseException:
            _hang_up(stream)
            self._discard(cid)
            raise
        return Launched(cid, name, info, {} if usr is None else usr.uppers, stream)

    def _discard(self, container_id: str) -> None:
        try:
            with contextlib.suppress(docker.errors.NotFound):
                self.client.api.remove_container(container_id, force=True, v=True)
        finally:
            self._release_usr(container_id)

    def _release_usr(self, container_id: str) -> None:
        """Remove a removed container's scratch directory, if it had one."""
        with self._scratch_lock:
            scratch = self._scratch.pop(container_id, None)
        if scratch is not None:
            self.native.release(scratch)

    def _adopt(
        self, kind: Kind, launched: Launched, group: ServiceGroup | None = None
    ) -> DockerSandbox:
        """The sandbox around a started container, its slot held: watched for disk from
        now on; removing it removes its services and returns the slot."""
        cid, limits = launched.id, kind.limits
        container = self.client.containers.prepare_model({"Id": cid, "Name": launched.name})
        sb = DockerSandbox(
            self.client,
            container,
            kind.image,
            default_timeout_s=limits.exec_timeout_s,
            output_cap=self.settings.output_cap_bytes,
            run_id=kind.run_id,
            on_remove=lambda: self._released(cid, group),
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
        if self._watchdog is not None:
            self._watchdog.unwatch(container_id)
        try:
            self._release_usr(container_id)
            if group is not None:
                group.remove()
        finally:
            self._pool.release()

    def _disk_watchdog(self) -> DiskWatchdog:
        with self._watchdog_lock:
            if self._watchdog is None:
                self._watchdog = DiskWatchdog(self.client, self.settings.disk_poll_s)
            return self._watchdog

    def _create_and_start(self, kind: Kind) -> tuple[str, str, NU.Planned | None, Any]:
        """Low-level create + start, returning the id, name and overlay volumes: `containers.run`
        adds an inspect of its own. `kind.join`: the services' network, instead of none
        (and besides the default bridge when the sandbox has network). A container whose
        overlay volumes the engine refuses is started again without them, and the image
        keeps the storage driver's view from then on (`NativeUsr.refuse`). A `kind.command`
        container's output is attached before its start (nothing it prints is missed) and
        returned last."""
        native = kind.native_usr and self.runtime() == "runc"
        image = self._inspect_image(kind.image) if native else {}
        name, labels = _named(kind)
        usr = self.native.plan(image, name, labels) if native else None
        if usr is None:
            return self._create_and_start_as(kind, name, labels, None)
        try:
            return self._create_and_start_as(kind, name, labels, usr)
        except docker.errors.NotFound:
            raise
        except docker.errors.APIError as exc:
            self.native.refuse(image, exc)
        name, labels = _named(kind)
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
    ) -> tuple[str, str, NU.Planned | None, Any]:
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
            if kind.join and kind.network:
                api.connect_container_to_network(cid, "bridge")
            if kind.command:
                stream = api.attach_socket(cid, params={"stdout": 1, "stderr": 1, "stream": 1})
            api.start(cid)
        except BaseException:
            _hang_up(stream)
            with contextlib.suppress(docker.errors.APIError):
                api.remove_container(cid, force=True, v=True)
            self._release_usr(cid)
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

    async def abuild(self, context_tar: bytes, **kw: Any) -> BuildResult:
        return await asyncio.to_thread(self.build, context_tar, **kw)

    # -- cleanup ------------------------------------------------------------------------

    def gc(
        self,
        *,
        older_than_s: float = 0,
        run_id: str | None = None,
        include_live: bool = False,
        images: bool = False,
        foreign_ttl_s: float | None = None,
    ) -> list[str]:
        """Remove our orphaned containers (owner process gone; another host's only past
        `foreign_ttl_s`) and, with `images`, our snapshot images; never anything without
        our owner label. Returns what was removed."""
        from .gc import collect

        removed = collect(
            self.client,
            older_than_s=older_than_s,
            run_id=run_id,
            include_live=include_live,
            images=images,
            foreign_ttl_s=foreign_ttl_s,
        )
        live = [n.lstrip("/") for c in self.client.api.containers(all=True) for n in c["Names"]]
        return removed + self.native.sweep(live)


def _named(kind: Kind) -> tuple[str, dict[str, str]]:
    """A new container's name and its ownership labels."""
    name = f"envfactory-{kind.purpose}-{uuid.uuid4().hex[:10]}"
    return name, L.ownership(kind.purpose, kind.run_id, sandbox=name)


def _start_error(image: str, exc: BaseException) -> BaseException:
    """What a failed start raises: a missing image is a configuration error."""
    if isinstance(exc, docker.errors.ImageNotFound):
        return ConfigError(
            f"image {image} does not exist locally",
            hint="build it first (engine.build / ensure_base_image)",
        )
    if isinstance(exc, docker.errors.APIError):
        return SandboxError(f"starting a sandbox from {image} failed: {exc}")
    return exc


def _hang_up(stream: Any) -> None:
    if stream is not None:
        X.hang_up(X.raw_socket(stream), stream)


def _remove_when_started(task: asyncio.Future[DockerSandbox]) -> None:
    if not task.cancelled() and task.exception() is None:
        threading.Thread(target=task.result().remove, daemon=True).start()


def tar_dir(path: Path) -> bytes:
    """A host directory as an uncompressed tar with paths relative to it."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for child in sorted(Path(path).iterdir()):
            tar.add(child, arcname=child.name)
    return buf.getvalue()
