"""The sandbox interface every upper layer codes against.

The Docker implementation lives beside this file; agents, verifiers and packs take a
`SandboxEngine` as a parameter (dependency injection), never construct one themselves.

Invariants every implementation keeps:
- every exec has a hard timeout that really kills (in-container `timeout -s KILL` plus a
  client-side deadline that kills the container as a backstop);
- output is capped; `ExecResult.truncated` says when it was cut;
- everything created carries our ownership labels, so `gc()` never touches anything else;
- runtime containers are locked down (no network unless asked, caps dropped,
  no-new-privileges, memory / cpu / pids limits).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol, runtime_checkable

from envfactory.core.models import (
    BuildResult,
    ExecResult,
    Limits,
    PathChange,
    Purpose,
    ServiceSpec,
    StateKind,
    StateRef,
)


@runtime_checkable
class Sandbox(Protocol):
    """One running container. Methods are blocking and thread-safe; async callers use
    `asyncio.to_thread` (or the `a*` helpers the implementation offers)."""

    id: str
    image: str

    def exec(
        self,
        cmd: str | Sequence[str],
        *,
        timeout: float | None = None,
        user: str | None = None,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        """Run `cmd` (a string runs under `bash -c`, or `sh -c` where the image has no bash;
        not a login shell, which would reset the PATH an image's ENV set); never raises
        for a non-zero exit."""
        ...

    def write_file(
        self, path: str, data: bytes | str, mode: int = 0o644, *, uid: int = 0, gid: int = 0
    ) -> None:
        """Write a file, creating parents; owned by `uid`/`gid` (root unless given)."""
        ...

    def read_file(self, path: str, max_bytes: int | None = None) -> bytes:
        """The file's bytes (at most `max_bytes`); `SandboxFileNotFound` (a
        FileNotFoundError) when it does not exist."""
        ...

    def put_dir(self, src: Path, dest: str, *, uid: int = 0, gid: int = 0) -> None:
        """Copy a host directory's contents into `dest` (created if missing), owned by
        `uid`/`gid`."""
        ...

    def get_archive(self, path: str) -> bytes:
        """A tar of `path` as Docker's get_archive returns it."""
        ...

    def put_archive(self, dest: str, tar_bytes: bytes) -> None: ...

    def diff(self) -> list[PathChange]:
        """Paths changed against the image the sandbox started from."""
        ...

    def local_diff(self) -> list[PathChange] | None:
        """`diff()` when it is cheap (read where the engine keeps the sandbox's changes),
        else None: the caller falls back to a way of its own."""
        ...

    def snapshot(self, kind: StateKind, label: str = "", env_id: str | None = None) -> StateRef:
        """Save the filesystem as a labelled image (StateRef.diff filled); the sandbox keeps
        running. Start a fresh sandbox from `ref.image` to verify against that state."""
        ...

    def restart(self) -> None:
        """End every process; keep the filesystem."""
        ...

    def remove(self) -> None: ...


class SandboxEngine(Protocol):
    """Creates sandboxes and images on one Docker engine."""

    def ensure_base_image(self, flavour: str = "python") -> str:
        """The base image tag for a flavour, built locally if missing (cached by recipe)."""
        ...

    def build(
        self,
        context_tar: bytes,
        *,
        dockerfile: str = "Dockerfile",
        tag: str | None = None,
        on_log: Callable[[str], None] | None = None,
        network: bool | None = None,
        trusted: bool = False,
    ) -> BuildResult:
        """Build an image from a tar'd build context; cached by the context's content hash.
        `network`: whether its steps may reach registries (the build network, which has
        no route to the host); None: the engine's setting (`build_network`). Unless
        `trusted` (a Dockerfile envfactory wrote), `ADD <url>` is refused and `FROM` /
        `COPY --from=` may name only envfactory's base images and the context's own
        stages (`sandboxes.dockerfile_policy`), each refusal naming the line.

        The caller materialises a `BuildContext` (artifact keys) into the tar: this layer
        does not know the artifact store. The full build log streams to `on_log` (store it
        as an artifact and set `log_key`); only a bounded tail is held (`sandboxes.log_tail`):
        `BuildResult.log_tail` is its last 64 KiB, `log_bytes` / `log_lines` count it all.
        A failed or timed-out build raises `ImageBuildFailed` whose `.log` is its last MiB,
        opened by a note of how much was dropped."""
        ...

    def build_dir(
        self,
        path: Path,
        *,
        dockerfile: str = "Dockerfile",
        tag: str | None = None,
        on_log: Callable[[str], None] | None = None,
    ) -> BuildResult: ...

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
    ) -> Sandbox: ...

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
    ) -> tuple[ExecResult, Sandbox]:
        """Run `argv` once as a fresh sandbox's own command (root, in `/`), bounded in time
        and output as `Sandbox.exec` is, and return its result with the sandbox, stopped:
        every process has ended, its files stay readable until `remove()`."""
        ...

    def standby(
        self,
        image: str,
        *,
        limits: Limits | None = None,
        purpose: Purpose = Purpose.EPISODE,
        run_id: str | None = None,
        network: bool | None = None,
        native_usr: bool = False,
    ) -> AbstractContextManager[None]:
        """While the block runs, keep containers of this kind started ahead of demand:
        `start` with the same arguments hands one out at once — fresh, never handed out
        before, the caller's to remove as usual. Those still waiting are removed when the
        block ends. An engine may do nothing here (`start` then starts on demand)."""
        ...

    def remove_image(self, image: str) -> None: ...

    def gc(
        self,
        *,
        older_than_s: float = 0,
        run_id: str | None = None,
        include_live: bool = False,
        images: bool = False,
        foreign_ttl_s: float | None = None,
    ) -> list[str]:
        """Remove our orphans (labelled, owner process gone); `include_live` also removes
        live ones, `images` also snapshot images, `foreign_ttl_s` also other hosts'
        sandboxes that old. Never touches anything unlabelled."""
        ...
