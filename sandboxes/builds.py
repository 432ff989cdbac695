"""Environment image builds from a tar'd context, cached by content, with FROM-mapping.

Invariants:
- the cache key is a hash of the context's *content* (member names, modes, link
  targets, bytes — not mtimes or owners) after FROM-rewriting, so the same files build
  once and a changed base image (new recipe hash in the rewritten FROM) builds again;
- FROM lines naming public images we cannot pull (`python:*`, `ubuntu:*`, `debian:*`
  and the `from_map` setting) are rewritten to local images, and each rewrite is
  reported as "public -> local"; a built-in stand-in is the base of the Debian release
  the reference names (`BUILTIN_MAP`), and where it is not that release (Ubuntu, another
  Python) it says so in a warning; the user's `from_map` wins over the built-in map;
- a build past its timeout is abandoned (the connection closes, the daemon cancels it)
  and reported as `ImageBuildFailed` with the log so far;
- a build's log is read through one `LogTail`: whatever a `RUN` prints, at most its last
  MiB is held (in memory, in `ImageBuildFailed.log`, in `BuildOutput.log`), and the text
  says how many bytes and lines were dropped before it.
"""

from __future__ import annotations

import fnmatch
import hashlib
import io
import json
import re
import socket
import tarfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import docker
import docker.errors
import urllib3.exceptions
from docker.models.images import Image

from envfactory.core.errors import ImageBuildFailed

from . import labels as L
from .build_network import ensure_build_network
from .log_tail import LogTail

ENV_REPO = "envfactory/env"
#: how much of a build's log is stored with its `BuildResult` (`log_tail`)
LOG_TAIL_BYTES = 64 * 1024
T = TypeVar("T")
_FROM_RE = re.compile(r"^(\s*FROM\s+)((?:--\S+\s+)*)(\S+)(.*)$", re.IGNORECASE)
RELEASES = {"bookworm": "Debian 12 (bookworm)", "trixie": "Debian 13 (trixie)"}
PYTHONS = {"bookworm": "3.11", "trixie": "3.13"}  # the python3 each release ships


@dataclass(frozen=True)
class Standin:
    """The local base image that stands in for a public one: a flavour on a Debian release.

    `named` says what the public image has that the stand-in does not (a sentence subject,
    "{ref}" filled in); None when the stand-in is the release the reference names."""

    flavour: str  # a base_image flavour: "minimal" | "python"
    release: str  # a Debian suite in RELEASES
    named: str | None = None

    def describe(self) -> str:
        base = RELEASES[self.release]
        return f"Python {PYTHONS[self.release]} on {base}" if self.flavour == "python" else base

    def warning(self, ref: str, image: str) -> str | None:
        if self.named is None:
            return None
        return (
            f"{ref} -> {image}: {self.named.format(ref=ref)} is built as {self.describe()};"
            " lines that assume the named release (package names, apt sources, versions)"
            " may behave differently"
        )


def _py(release: str, named: str | None = None) -> Standin:
    return Standin("python", release, named)


def _deb(release: str, named: str | None = None) -> Standin:
    return Standin("minimal", release, named)


# Public images we stand in for, first match wins. Debian 13 (trixie) is Debian's stable
# release since 2025-08, so `debian`, `debian:latest` and `debian:stable*` are trixie.
# Ubuntu maps to the Debian release nearest in glibc, gcc and python (24.04 → trixie,
# 22.04 and older → bookworm); python:X.Y to the release that ships X.Y or the nearest.
BUILTIN_MAP: tuple[tuple[str, Standin], ...] = (
    # A Debian suffix names the release too: the Python version wins, the release warns.
    ("python:3.11*trixie", _py("bookworm", "Python 3.11 on Debian 13 (trixie)")),
    ("python:3.13*bookworm", _py("trixie", "Python 3.13 on Debian 12 (bookworm)")),
    ("python:3.11*", _py("bookworm")),
    ("python:3.13*", _py("trixie")),
    ("python:3.12*", _py("trixie", "Python 3.12")),
    ("python:3.10*", _py("bookworm", "Python 3.10")),
    ("python:3.[0-9]", _py("bookworm", "{ref}")),
    ("python:3.[0-9][-.]*", _py("bookworm", "{ref}")),
    ("python:2*", _py("bookworm", "{ref}")),
    ("python:*", _py("trixie", "{ref}")),
    ("python", _py("trixie", "python (the newest Python)")),
    ("debian:12*", _deb("bookworm")),
    ("debian:bookworm*", _deb("bookworm")),
    ("debian:oldstable*", _deb("bookworm")),
    ("debian:13*", _deb("trixie")),
    ("debian:trixie*", _deb("trixie")),
    ("debian:stable*", _deb("trixie")),
    ("debian:latest", _deb("trixie")),
    ("debian", _deb("trixie")),
    ("debian:11*", _deb("bookworm", "Debian 11 (bullseye)")),
    ("debian:bullseye*", _deb("bookworm", "Debian 11 (bullseye)")),
    ("debian:10*", _deb("bookworm", "Debian 10 (buster)")),
    ("debian:buster*", _deb("bookworm", "Debian 10 (buster)")),
    ("debian:*", _deb("trixie", "{ref}")),
    ("ubuntu:24.04*", _deb("trixie", "Ubuntu 24.04 (noble)")),
    ("ubuntu:noble*", _deb("trixie", "Ubuntu 24.04 (noble)")),
    ("ubuntu:22.04*", _deb("bookworm", "Ubuntu 22.04 (jammy)")),
    ("ubuntu:jammy*", _deb("bookworm", "Ubuntu 22.04 (jammy)")),
    ("ubuntu:20.04*", _deb("bookworm", "Ubuntu 20.04 (focal)")),
    ("ubuntu:focal*", _deb("bookworm", "Ubuntu 20.04 (focal)")),
    ("ubuntu:18.04*", _deb("bookworm", "Ubuntu 18.04 (bionic)")),
    ("ubuntu:bionic*", _deb("bookworm", "Ubuntu 18.04 (bionic)")),
    ("ubuntu:*", _deb("trixie", "{ref} (Ubuntu)")),
    ("ubuntu", _deb("trixie", "ubuntu (Ubuntu's latest)")),
)


def normalise_ref(ref: str) -> str:
    """`docker.io/library/python:3.12` → `python:3.12` (how users write FROM lines)."""
    for prefix in ("docker.io/library/", "index.docker.io/library/", "library/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


def rewrite_from_lines(
    dockerfile: str, resolve: Callable[[str], str | None]
) -> tuple[str, tuple[str, ...]]:
    """Rewrite every FROM whose image `resolve` maps; return the text and the substitutions."""
    stages: set[str] = set()
    subs: list[str] = []
    lines = []
    for line in dockerfile.splitlines(keepends=True):
        m = _FROM_RE.match(line.rstrip("\r\n"))
        if not m:
            lines.append(line)
            continue
        head, flags, ref, rest = m.groups()
        alias = re.search(r"\bAS\s+(\S+)", rest, re.IGNORECASE)
        target = None if ref.lower() in stages else resolve(normalise_ref(ref))
        if alias:
            stages.add(alias.group(1).lower())
        if target and target != ref:
            subs.append(f"{ref} -> {target}")
            newline = line[len(line.rstrip("\r\n")) :]
            line = f"{head}{flags}{target}{rest}{newline}"
        lines.append(line)
    return "".join(lines), tuple(subs)


def match_map(ref: str, mapping: dict[str, T] | tuple[tuple[str, T], ...]) -> T | None:
    """The value of the first pattern (exact or fnmatch glob) that matches `ref`."""
    items = mapping.items() if isinstance(mapping, dict) else mapping
    for pattern, value in items:
        if ref == pattern or fnmatch.fnmatchcase(ref, pattern):
            return value
    return None


@dataclass(frozen=True)
class Context:
    """A build context held as tar members in memory."""

    members: tuple[tuple[tarfile.TarInfo, bytes | None], ...]

    @classmethod
    def from_tar(cls, data: bytes) -> Context:
        out = []
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for m in tar.getmembers():
                f = tar.extractfile(m) if m.isfile() else None
                out.append((m, f.read() if f else None))
        return cls(tuple(out))

    def read(self, name: str) -> bytes | None:
        for m, data in self.members:
            if m.name.lstrip("./") == name.lstrip("./"):
                return data
        return None

    def replace(self, name: str, data: bytes) -> Context:
        out: list[tuple[tarfile.TarInfo, bytes | None]] = []
        for m, old in self.members:
            if m.name.lstrip("./") == name.lstrip("./"):
                info = tarfile.TarInfo(m.name)
                info.size, info.mode, info.mtime = len(data), m.mode, m.mtime
                out.append((info, data))
            else:
                out.append((m, old))
        return Context(tuple(out))

    def add(self, name: str, data: bytes, mode: int = 0o644) -> Context:
        """The context with one more regular file (`name` must be new)."""
        info = tarfile.TarInfo(name)
        info.size, info.mode = len(data), mode
        return Context((*self.members, (info, data)))

    def names(self) -> tuple[str, ...]:
        """The regular files' paths, relative to the root."""
        return tuple(m.name.lstrip("./") for m, _ in self.members if m.isfile())

    def content_hash(self, dockerfile: str) -> str:
        h = hashlib.sha256(f"dockerfile={dockerfile}\n".encode())
        for m, data in sorted(self.members, key=lambda md: md[0].name.lstrip("./")):
            name = m.name.lstrip("./") or "."
            h.update(f"{name}\0{m.type!r}\0{m.mode & 0o7777:o}\0{m.linkname}\0".encode())
            h.update(hashlib.sha256(data or b"").digest())
        return h.hexdigest()

    def to_tar(self) -> bytes:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for m, data in self.members:
                tar.addfile(m, io.BytesIO(data) if data is not None else None)
        return buf.getvalue()


@dataclass
class BuildOutput:
    image_id: str
    log: LogTail  # the last MiB of the build's output, and how much was dropped


def run_build(
    client: docker.DockerClient,
    context: bytes,
    *,
    tag: str,
    dockerfile: str,
    labels: dict[str, str],
    network: bool,
    timeout_s: float,
    on_log: Callable[[str], None] | None = None,
) -> BuildOutput:
    """Stream one `docker build`; raise ImageBuildFailed (with the log's tail) on error or
    timeout. Every chunk of output goes to `on_log` as it comes; only a bounded tail stays."""
    log = LogTail()
    expired = threading.Event()
    # One LABEL instruction: the `labels=` parameter costs a build step (a container and a
    # commit, seconds on fuse-overlayfs) per label.
    context = _append_labels(context, dockerfile, labels)
    try:
        stream = client.api.build(
            fileobj=io.BytesIO(context),
            custom_context=True,
            tag=tag,
            dockerfile=dockerfile,
            pull=False,
            rm=True,
            forcerm=True,
            decode=True,
            # A build that may reach registries gets envfactory's own bridge, fenced off
            # from the host and its LAN (`build_network.py`), never the host's network or
            # the default bridge: its steps must not reach Temporal, the API, the database.
            network_mode=ensure_build_network(client) if network else "none",
            timeout=int(timeout_s) + 60,
        )
    except docker.errors.APIError as exc:
        raise ImageBuildFailed(f"build of {tag} failed: {exc}") from exc
    # A watchdog hangs up at the deadline even while a step is silent; the daemon then
    # cancels the build and removes its intermediate container.
    watchdog = threading.Timer(timeout_s, _hang_up, args=(stream, expired))
    watchdog.daemon = True
    watchdog.start()
    try:
        image_id = _pump(stream, tag, log, on_log)
    except (OSError, ValueError, urllib3.exceptions.HTTPError, docker.errors.APIError) as exc:
        if expired.is_set():
            raise _timeout(tag, timeout_s, log) from exc
        raise ImageBuildFailed(f"build of {tag} failed: {exc}", log=log.text()) from exc
    finally:
        watchdog.cancel()
    if expired.is_set():
        raise _timeout(tag, timeout_s, log)
    return BuildOutput(image_id=image_id or id_of(client.images.get(tag), tag), log=log)


def id_of(image: Image, ref: str) -> str:
    """An inspected image's id (docker-py types `Image.id` optional; the engine always
    answers one)."""
    if not image.id:
        raise ImageBuildFailed(f"the engine reports no id for image {ref}")
    return image.id


def _pump(stream: Any, tag: str, log: LogTail, on_log: Callable[[str], None] | None) -> str:
    """Keep the tail of the build's log; return the image id it reports."""
    image_id = ""
    for chunk in stream:
        text = chunk.get("stream") or chunk.get("status") or ""
        if "error" in chunk:
            text = f"ERROR: {chunk['error']}\n"
        if text:
            log.append(text)
            if on_log:
                on_log(text)
        if "error" in chunk:
            raise ImageBuildFailed(
                f"build of {tag} failed: {chunk['error'].strip()}", log=log.text()
            )
        image_id = chunk.get("aux", {}).get("ID", image_id)
    return image_id


def _append_labels(context: bytes, dockerfile: str, labels: dict[str, str]) -> bytes:
    ctx = Context.from_tar(context)
    text = (ctx.read(dockerfile) or b"").decode()
    line = "LABEL " + " ".join(f"{k}={json.dumps(v)}" for k, v in sorted(labels.items()))
    return ctx.replace(dockerfile, (text.rstrip("\n") + "\n" + line + "\n").encode()).to_tar()


def _hang_up(stream: object, expired: threading.Event) -> None:
    """Shut the build's connection down. docker-py keeps the response in the stream
    generator's frame; there is no public handle on it."""
    expired.set()
    frame = getattr(stream, "gi_frame", None)
    response = frame.f_locals.get("response") if frame is not None else None
    try:
        sock = response.raw._fp.fp.raw._sock  # type: ignore[union-attr]
        sock.shutdown(socket.SHUT_RDWR)
    except (AttributeError, OSError):
        if response is not None:
            response.close()


def _timeout(tag: str, timeout_s: float, log: LogTail) -> ImageBuildFailed:
    return ImageBuildFailed(
        f"build of {tag} exceeded its timeout of {timeout_s:.0f}s",
        hint="raise ENVFACTORY_SANDBOX__BUILD_TIMEOUT_S or make the build faster",
        log=log.text(),
    )


def env_labels(context_hash: str, run_id: str | None) -> dict[str, str]:
    return L.ownership("build", run_id, kind="env", context=context_hash[:24])
