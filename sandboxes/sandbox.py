"""`DockerSandbox`: one locked-down container, driven through exec.

Invariants: every exec is bounded in time (see `execution`) and in output; an exec that
the sandbox could not run at all raises `SandboxBroken` (see `health`), never an exit
status; past its disk quota the sandbox is gone and says so (`disk_exceeded`); a container
that outlives an exec's client deadline is killed and started again (its filesystem is
kept, every process ends); `remove()` is idempotent and returns the pool slot. Blocking
methods are thread-safe; `a*` twins run them in a worker thread for async callers.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import tarfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import docker
import docker.errors

from envfactory.core.errors import SandboxError, SandboxFileNotFound
from envfactory.core.models import ExecResult, PathChange, StateKind, StateRef

from . import execution as X
from . import health as H
from . import labels as L
from .overlay_diff import upper_diff
from .overlay_snapshot import layer_snapshot

if TYPE_CHECKING:
    from docker.models.containers import Container

_DIFF_KIND = {0: "C", 1: "A", 2: "D"}
STATE_REPO = "envfactory/state"
# Created by the engine, not by anything run in the sandbox (the `--init` binary's mount).
ENGINE_PATHS = frozenset({"/usr/sbin/docker-init"})
#: how long past its timeout a container's own command may run before it is killed
RUN_GRACE_S = 1.0


def engine_user(user: str | None) -> str:
    """The user for an exec as the engine takes it: ``root`` by number, so that a state
    whose /etc/passwd was emptied or rewritten (a probe, a careless solver) can still be
    entered as root (the engine looks names up in the container's passwd file)."""
    return "0" if user == "root" else (user or "")


class DockerSandbox:
    """Implements `sandboxes.protocol.Sandbox` on one Docker container."""

    def __init__(
        self,
        client: docker.DockerClient,
        container: Container,
        image: str,
        *,
        default_timeout_s: float,
        output_cap: int,
        run_id: str | None = None,
        home: str = "",
        on_remove: Callable[[], None] | None = None,
        disk_mb: int | None = None,
        attached: Any = None,
    ) -> None:
        self._client = client
        self._container = container
        self.id: str = container.id or ""
        self.image = image
        self.run_id = run_id
        self.home = home  # the install it belongs to (labels.HOME), passed to its snapshots
        self.default_timeout_s = default_timeout_s
        self.output_cap = output_cap
        self._on_remove = on_remove
        self._removed = False
        self._lock = threading.Lock()
        self.graph_driver: dict[str, Any] | None = None  # fixed for the container's life
        self._oom_seen = 0  # cgroup oom_kill count already attributed to an earlier exec
        self.disk_mb = disk_mb
        #: the output of the container's own command, attached before its start (`finish`)
        self._attached = attached
        self._disk_used: int | None = None  # bytes, once the disk watchdog stopped it

    # -- exec ---------------------------------------------------------------------------

    def exec(
        self,
        cmd: str | Sequence[str],
        *,
        timeout: float | None = None,
        user: str | None = None,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        """Run `cmd` (a string runs under `bash -c`); never raises for a non-zero exit.
        Raises `SandboxBroken` when the sandbox cannot run it at all."""
        self._ensure_usable()
        timeout_s = float(timeout if timeout is not None else self.default_timeout_s)
        marker = uuid.uuid4().hex
        start = time.monotonic()
        exec_id, handle, sock = self._launch(cmd, timeout_s, user, workdir, env, marker)
        deadline = start + timeout_s + X.KILL_GRACE_S + X.CLIENT_GRACE_S
        try:
            out = X.read_stream(sock, deadline=deadline, cap=self.output_cap)
        finally:
            X.hang_up(sock, handle)
        try:
            return self._settle(exec_id, out, marker, user, start, timeout_s)
        except docker.errors.NotFound as exc:  # the container went away under the exec
            if self._disk_used is not None:
                return self._disk_result(out, start)
            raise H.broken(self.id, "container_dead", f"the container is gone: {exc}") from exc

    def _settle(
        self,
        exec_id: str,
        out: X.StreamOutcome,
        marker: str,
        user: str | None,
        start: float,
        timeout_s: float,
    ) -> ExecResult:
        """The exec's result once its stream has ended (or been cut)."""
        if self._disk_used is not None:
            return self._disk_result(out, start)
        if not out.eof:  # truncated or past the deadline: stop the command now
            self._kill_marked(marker, user)
        exit_code = self._wait_exit(exec_id, 3.0)  # the status may lag the stream's end
        if out.truncated:
            exit_code = None  # we killed it: its own status would mislead
        if exit_code is None and out.deadline_hit:
            self._backstop_kill()
        duration = X.elapsed_since(start)
        if self._disk_used is not None:
            return self._disk_result(out, start)
        if exit_code in (125, 126) and not out.truncated:
            broken = H.never_started(self._client, self.id, exec_id, exit_code, out)
            if broken is not None:
                raise broken
        timed_out = out.deadline_hit or (exit_code in (124, 137) and duration >= timeout_s)
        if timed_out and out.eof:  # children that left the process group but kept the marker
            self._kill_marked(marker, user)
        oom = exit_code == 137 and not timed_out and self._oom_happened()
        return _result(out, exit_code, timed_out=timed_out, oom=oom, duration=duration)

    def finish(self, timeout_s: float, end: str) -> ExecResult:
        """The result of the command this container was started with (`DockerEngine.run`),
        read from its output (attached before the start) up to `timeout_s` (and a second's
        grace) and the output cap. Past either, the container is killed: every process
        ends with it (no `timeout` wrapper inside: killing the container ends more). A stream
        that ended without the `end` mark (`execution.marking_end`), in time and uncut:
        the container was killed under its command, `SandboxBroken`."""
        start = time.monotonic()
        stream, self._attached = self._attached, None
        sock = X.raw_socket(stream)
        deadline = start + timeout_s + RUN_GRACE_S
        try:
            out = X.read_stream(sock, deadline=deadline, cap=self.output_cap)
        finally:
            X.hang_up(sock, stream)
        if self._disk_used is not None:
            return self._disk_result(out, start)
        api = self._client.api
        try:
            if not out.eof:  # cut or past the deadline: the command goes with its container
                with contextlib.suppress(docker.errors.APIError):
                    api.kill(self.id)
            status = api.wait(self.id, timeout=30).get("StatusCode")
            oom = status == 137 and not out.deadline_hit and self._killed_for_memory()
        except docker.errors.NotFound as exc:
            if self._disk_used is not None:
                return self._disk_result(out, start)
            raise H.broken(self.id, "container_dead", f"the container is gone: {exc}") from exc
        if self._disk_used is not None:
            return self._disk_result(out, start)
        duration = X.elapsed_since(start)
        exit_code = status if out.eof else None
        timed_out = out.deadline_hit or (exit_code in (124, 137) and duration >= timeout_s)
        out.stderr, ended = X.split_end_mark(out.stderr, end)
        if out.eof and not ended and not timed_out:
            why = f"it ended before its command did (exit {status}{', out of memory' * oom})"
            raise H.broken(self.id, "container_dead", why)
        oom = oom and not timed_out
        return _result(out, exit_code, timed_out=timed_out, oom=oom, duration=duration)

    def _killed_for_memory(self) -> bool:
        state = self._client.api.inspect_container(self.id).get("State") or {}
        return bool(state.get("OOMKilled"))

    def _disk_result(self, out: X.StreamOutcome, start: float) -> ExecResult:
        with self._lock:
            pass  # the watchdog removes the container under the lock: report once it is gone
        return _result(
            out, None, timed_out=False, oom=False, duration=X.elapsed_since(start), disk=True
        )

    def _ensure_usable(self) -> None:
        if self._disk_used is not None:
            used = self._disk_used // (1024 * 1024)
            raise H.broken(
                self.id, "disk_exceeded", f"{used} MiB written, the quota is {self.disk_mb} MiB"
            )

    def stop_for_disk(self, used: int) -> None:
        """The disk watchdog's verdict: stop the sandbox for good and free its disk now.
        Every later call raises `SandboxBroken(reason="disk_exceeded")`; remove() still
        returns the pool slot."""
        with self._lock:  # held while removing: a concurrent remove() waits, then finds it gone
            if self._removed:
                return
            self._disk_used = used
            with contextlib.suppress(docker.errors.APIError):
                self._client.api.remove_container(self.id, force=True, v=True)

    def _launch(
        self,
        cmd: str | Sequence[str],
        timeout_s: float,
        user: str | None,
        workdir: str | None,
        env: Mapping[str, str] | None,
        marker: str,
    ) -> tuple[str, Any, Any]:
        """Create and start the exec; return its id and the hijacked stream."""
        api = self._client.api
        try:
            exec_id = api.exec_create(
                self.id,
                X.wrap_command(cmd, timeout_s),
                stdout=True,
                stderr=True,
                user=engine_user(user),
                workdir=workdir,
                environment=X.exec_env(env, marker),
            )["Id"]
            handle = api.exec_start(exec_id, socket=True)
        except docker.errors.APIError as exc:
            self._ensure_usable()
            if exc.status_code in (404, 409):  # removed, or not running
                raise H.broken(self.id, "container_dead", str(exc.explanation or exc)) from exc
            raise SandboxError(f"exec in sandbox {self.id[:12]} failed: {exc}") from exc
        return exec_id, handle, X.raw_socket(handle)

    def _wait_exit(self, exec_id: str, wait_s: float) -> int | None:
        """The exec's exit code, polling up to `wait_s` for it to be reported."""
        end = time.monotonic() + wait_s
        while True:
            info = self._client.api.exec_inspect(exec_id)
            if not info.get("Running"):
                return info.get("ExitCode")
            if time.monotonic() >= end:
                return None
            time.sleep(0.05)

    def _kill_marked(self, marker: str, user: str | None) -> None:
        """Kill the exec's processes from inside (detached: never block on its output)."""
        api = self._client.api
        try:
            kid = api.exec_create(self.id, X.kill_marked_command(marker), user=engine_user(user))[
                "Id"
            ]
            api.exec_start(kid, detach=True)
            if self._wait_exit(kid, 10.0) is None:
                self._backstop_kill()
        except docker.errors.APIError:
            self._backstop_kill()

    def _backstop_kill(self) -> None:
        """The command escaped every in-container kill: kill the container, start it again."""
        with self._lock:
            if self._disk_used is not None:
                return  # stopped for good by the disk watchdog
            with contextlib.suppress(docker.errors.APIError):
                self._container.kill()  # already stopped: starting it again is what matters
            with contextlib.suppress(docker.errors.APIError, OSError):
                self._client.api.wait(self.id, timeout=10)  # OSError: requests' timeout
            self._container.start()
            self._oom_seen = 0

    def _oom_happened(self) -> bool:
        """Did the kernel OOM-kill something since the last check? (cgroup v1 and v2)"""
        probe = (
            "cat /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events"
            " 2>/dev/null | awk '$1==\"oom_kill\"{print $2}'"
        )
        res = self._client.api.exec_start(
            self._client.api.exec_create(self.id, ["sh", "-c", probe])["Id"]
        )
        text = res.decode(errors="replace").strip() if isinstance(res, bytes) else ""
        if text.isdigit():
            count = int(text)
            seen, self._oom_seen = self._oom_seen, count
            return count > seen
        self._container.reload()
        return bool(self._container.attrs["State"].get("OOMKilled"))

    # -- files --------------------------------------------------------------------------

    def write_file(
        self, path: str, data: bytes | str, mode: int = 0o644, *, uid: int = 0, gid: int = 0
    ) -> None:
        """Write a file (parents created); `uid`/`gid` own it (e.g. for a non-root agent)."""
        raw = data.encode() if isinstance(data, str) else data
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo(_abs(path).lstrip("/"))
            info.size, info.mode, info.mtime = len(raw), mode, int(time.time())
            info.uid, info.gid = uid, gid
            tar.addfile(info, io.BytesIO(raw))
        self.put_archive("/", buf.getvalue())

    def read_file(self, path: str, max_bytes: int | None = None) -> bytes:
        stream = self._get_archive_stream(path)
        data = bytearray()
        limit = None if max_bytes is None else max_bytes + 1024 * 1024  # header room
        for chunk in stream:
            data += chunk
            if limit is not None and len(data) >= limit:
                break
        with tarfile.open(fileobj=io.BytesIO(bytes(data)), mode="r|") as tar:
            member = tar.next()
            if member is None or not member.isfile():
                raise SandboxError(f"{path} in sandbox {self.id[:12]} is not a regular file")
            fobj = tar.extractfile(member)
            assert fobj is not None
            return fobj.read(max_bytes) if max_bytes is not None else fobj.read()

    def put_dir(self, src: Path, dest: str, *, uid: int = 0, gid: int = 0) -> None:
        """Copy a host directory's contents into `dest` (created if missing), owned by
        `uid`/`gid` (never the host's owners)."""
        src = Path(src)
        if not src.is_dir():
            raise SandboxError(f"put_dir: {src} is not a directory on the host")
        buf = io.BytesIO()
        prefix = _abs(dest).strip("/")
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(src, arcname=prefix or ".", filter=lambda m: _owned(m, uid, gid, prefix))
        self.put_archive("/", buf.getvalue())

    def get_archive(self, path: str) -> bytes:
        return b"".join(self._get_archive_stream(path))

    def _get_archive_stream(self, path: str) -> Any:
        self._ensure_usable()
        try:
            stream, _stat = self._client.api.get_archive(self.id, _abs(path))
        except docker.errors.NotFound as exc:
            raise SandboxFileNotFound(f"{path} does not exist in sandbox {self.id[:12]}") from exc
        except docker.errors.APIError as exc:
            self._ensure_usable()  # stopped by the disk watchdog meanwhile: say so
            raise SandboxError(f"reading {path} from sandbox {self.id[:12]}: {exc}") from exc
        return stream

    def put_archive(self, dest: str, tar_bytes: bytes) -> None:
        self._ensure_usable()
        try:
            ok = self._client.api.put_archive(self.id, _abs(dest), tar_bytes)
        except docker.errors.APIError as exc:
            self._ensure_usable()
            raise SandboxError(f"copying into {dest} in sandbox {self.id[:12]}: {exc}") from exc
        if not ok:
            raise SandboxError(f"copying into {dest} in sandbox {self.id[:12]} was refused")

    # -- state --------------------------------------------------------------------------

    def diff(self, *, via_daemon: bool = False) -> list[PathChange]:
        """Paths changed against the image, minus the engine's own mount points.

        Read from the container's overlay upper directory when the daemon is local (ms);
        otherwise, or with `via_daemon`, from `docker diff` (seconds on fuse-overlayfs)."""
        local = None if via_daemon else self.local_diff()
        if local is not None:
            return local
        raw = self._client.api.diff(self.id) or []
        return _changes([(c["Path"], _DIFF_KIND[c["Kind"]]) for c in raw])

    def local_diff(self) -> list[PathChange] | None:
        """`diff()` read from the overlay upper directory (ms), or None where this process
        cannot read it (a remote daemon, a worker in a container, another storage driver)."""
        self._ensure_usable()
        pairs = upper_diff(self._graph_driver())
        return None if pairs is None else _changes(pairs)

    def _graph_driver(self) -> dict[str, Any]:
        if self.graph_driver is None:
            info = self._client.api.inspect_container(self.id)
            self.graph_driver = info.get("GraphDriver") or {}
        return self.graph_driver

    def snapshot(
        self,
        kind: StateKind,
        label: str = "",
        env_id: str | None = None,
        *,
        with_diff: bool = True,
        method: Literal["auto", "layer", "commit"] = "auto",
    ) -> StateRef:
        """Save the filesystem as a labelled image; the sandbox keeps running.

        `layer` loads the overlay upper directory as one new layer (well under a second);
        `commit` is `docker commit` (seconds on fuse-overlayfs); `auto` tries `layer` and
        falls back to `commit`. Both pause the container while they read it."""
        self._ensure_usable()  # a sandbox past its disk quota is gone: nothing to save
        extra = {"kind": "state", "state_kind": str(kind), "state_label": label}
        if env_id:
            extra["env_id"] = env_id
        lab = L.ownership("state", self.run_id, home=self.home, **extra)
        changes = self.diff() if with_diff else []
        tag = f"{kind}-{uuid.uuid4().hex[:12]}"
        image_id = None
        if method != "commit":
            image_id = layer_snapshot(
                self._client, self.id, repo=STATE_REPO, tag=tag, labels=lab, exclude=ENGINE_PATHS
            )
            if image_id is None and method == "layer":
                raise SandboxError(
                    f"layer snapshot of sandbox {self.id[:12]} is not possible here",
                    hint="use method='auto' or 'commit'",
                )
        if image_id is None:
            image_id = self._commit(tag, lab)
        return StateRef(image=image_id, kind=kind, label=label, env_id=env_id, diff=tuple(changes))

    def _commit(self, tag: str, labels: dict[str, str]) -> str:
        try:
            res = self._client.api.commit(
                self.id, repository=STATE_REPO, tag=tag, conf={"Labels": labels}, pause=True
            )
        except docker.errors.APIError as exc:
            raise SandboxError(f"snapshot of sandbox {self.id[:12]} failed: {exc}") from exc
        return str(res["Id"])

    def restart(self) -> None:
        """End every process; keep the filesystem."""
        self._ensure_usable()
        with self._lock:
            try:
                self._container.restart(timeout=1)
            except docker.errors.APIError as exc:
                raise SandboxError(f"restarting sandbox {self.id[:12]} failed: {exc}") from exc
            self._oom_seen = 0

    def remove(self) -> None:
        with self._lock:
            if self._removed:
                return
            self._removed = True
        try:
            self._container.remove(force=True, v=True)
        except docker.errors.NotFound:
            pass  # already gone (gc or a crash): removal is idempotent
        except docker.errors.APIError as exc:
            if exc.status_code == 409 and "already in progress" in str(exc):
                return  # gc is removing it (a process ending on a signal): the same end
            raise SandboxError(f"removing sandbox {self.id[:12]} failed: {exc}") from exc
        finally:
            if self._on_remove:
                self._on_remove()

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    # -- async twins (Temporal activities) -----------------------------------------------

    async def aexec(self, cmd: str | Sequence[str], **kw: Any) -> ExecResult:
        return await asyncio.to_thread(self.exec, cmd, **kw)

    async def awrite_file(
        self, path: str, data: bytes | str, mode: int = 0o644, *, uid: int = 0, gid: int = 0
    ) -> None:
        await asyncio.to_thread(self.write_file, path, data, mode, uid=uid, gid=gid)

    async def aread_file(self, path: str, max_bytes: int | None = None) -> bytes:
        return await asyncio.to_thread(self.read_file, path, max_bytes)

    async def aput_dir(self, src: Path, dest: str, *, uid: int = 0, gid: int = 0) -> None:
        await asyncio.to_thread(self.put_dir, src, dest, uid=uid, gid=gid)

    async def adiff(self) -> list[PathChange]:
        return await asyncio.to_thread(self.diff)

    async def asnapshot(
        self, kind: StateKind, label: str = "", env_id: str | None = None, **kw: Any
    ) -> StateRef:
        return await asyncio.to_thread(self.snapshot, kind, label, env_id, **kw)

    async def arestart(self) -> None:
        await asyncio.to_thread(self.restart)

    async def aremove(self) -> None:
        await asyncio.to_thread(self.remove)


def _changes(pairs: list[tuple[str, str]]) -> list[PathChange]:
    changes = [PathChange(path=p, kind=k) for p, k in pairs]  # type: ignore[arg-type]
    return sorted(_drop_engine_artifacts(changes), key=lambda c: c.path)


def _drop_engine_artifacts(changes: list[PathChange]) -> list[PathChange]:
    """Drop `--init`'s bind-mount point and directories changed only because of it."""
    kept = [c for c in changes if c.path not in ENGINE_PATHS]
    if len(kept) == len(changes):
        return changes

    def artifact_parent(c: PathChange) -> bool:
        return c.kind == "C" and any(p.startswith(c.path + "/") for p in ENGINE_PATHS)

    real = [c.path for c in kept if not artifact_parent(c)]
    return [
        c for c in kept if not artifact_parent(c) or any(p.startswith(c.path + "/") for p in real)
    ]


def _owned(member: tarfile.TarInfo, uid: int, gid: int, top: str) -> tarfile.TarInfo:
    member.uid, member.gid, member.uname, member.gname = uid, gid, "", ""
    if member.name == top and member.isdir():
        member.mode = 0o755  # a host temp dir is 0700; the sandbox's users must enter it
    return member


def _abs(path: str) -> str:
    if not path.startswith("/"):
        raise SandboxError(f"sandbox path {path!r} must be absolute (start with '/')")
    return path


def _result(
    out: X.StreamOutcome,
    exit_code: int | None,
    *,
    timed_out: bool,
    oom: bool,
    duration: float,
    disk: bool = False,
) -> ExecResult:
    return ExecResult(
        exit_code=exit_code,
        stdout=out.stdout.decode("utf-8", "replace"),
        stderr=out.stderr.decode("utf-8", "replace"),
        truncated=out.truncated,
        timed_out=timed_out,
        oom_killed=oom,
        disk_exceeded=disk,
        duration_s=duration,
    )
