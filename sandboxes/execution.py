"""Exec with a hard timeout and an output cap, over Docker's hijacked exec socket.

docker-py has no exec timeout, so three layers make a deadline real:
1. the command runs under `timeout -s KILL -k 2 SECS` inside the container (its own
   process group, so children die with it);
2. the client reads the multiplexed stream with short socket timeouts and its own
   deadline; past `SECS + grace` it kills the exec's processes (found by a marker in
   their environment) and, if the stream is still open, the caller's backstop kills
   the container;
3. output past the cap is not read: the exec's processes are killed and `truncated` is set.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import socket
import struct
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

KILL_GRACE_S = 2  # `timeout -k`: SIGKILL again this long after the first one
CLIENT_GRACE_S = 4.0  # how long past the in-container deadline the client waits
MARKER_ENV = "ENVFACTORY_EXEC_ID"
#: what `timeout` (the wrapper) says when it cannot fork the command: the command never ran
WRAPPER_FORK_FAILED = re.compile(r"timeout: fork system call failed: [^\n]*")


# A string runs under bash where the image has it (ours do), else under sh (alpine, a
# user's registry image); `exec` keeps it one process.
SHELL = 'if command -v bash >/dev/null 2>&1; then exec bash -c "$0"; else exec sh -c "$0"; fi'


def wrap_command(cmd: str | Sequence[str], timeout_s: float) -> list[str]:
    """The argv docker runs: `timeout` around the shell running `cmd` (or the argv)."""
    argv = ["sh", "-c", SHELL, cmd] if isinstance(cmd, str) else list(cmd)
    secs = f"{max(timeout_s, 0.1):.3f}"
    return ["timeout", "-s", "KILL", "-k", str(KILL_GRACE_S), secs, *argv]


def end_mark() -> str:
    """A mark of one run's own: what `marking_end` prints once its command ended. Processes
    inside can read it (/proc/1/cmdline) and print it, but not kill the shell that prints
    the real one (pid 1 of its container): only a kill from outside loses it."""
    return f"envfactory-command-ended-{uuid.uuid4().hex}"


def marking_end(argv: Sequence[str], mark: str) -> list[str]:
    """`argv` run as the child of a shell that prints `mark` on stderr, on a line of its
    own, once the command has ended, whatever its status (kept as the shell's own): a
    stream without the mark ended because the command's container was killed under it."""
    trap = 'trap \'printf "\\n%s\\n" "$0" >&2\' EXIT; "$@"'
    return ["/bin/sh", "-c", trap, mark, *argv]


def split_end_mark(stderr: bytearray, mark: str) -> tuple[bytearray, bool]:
    """stderr without the mark's line, and whether the mark was there."""
    line = f"\n{mark}\n".encode()
    at = stderr.rfind(line)
    if at < 0:
        return stderr, False
    return stderr[:at] + stderr[at + len(line) :], True


def kill_marked_command(marker: str) -> list[str]:
    """Kill every process whose environment carries `marker` (run as the same user)."""
    script = (
        "for p in /proc/[0-9]*; do "
        f"if grep -qz {shlex.quote(MARKER_ENV + '=' + marker)} $p/environ 2>/dev/null; "
        "then kill -9 ${p#/proc/} 2>/dev/null; fi; done; true"
    )
    return ["sh", "-c", script]


@dataclass
class StreamOutcome:
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    deadline_hit: bool = False  # the client deadline passed before the stream ended
    eof: bool = False


def raw_socket(sock: object) -> socket.socket:
    """docker-py hands back a SocketIO for unix sockets; we need recv/settimeout."""
    inner = getattr(sock, "_sock", sock)
    if not hasattr(inner, "recv"):
        raise TypeError(f"unsupported exec socket type {type(sock)!r}")
    return inner  # type: ignore[return-value]


def hang_up(sock: socket.socket, handle: object) -> None:
    """Drop the connection now. `close()` alone is deferred while docker-py's response
    objects still reference the socket, and a daemon stuck writing an unread exec's
    output blocks every later exec in that container."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
    close = getattr(handle, "close", None)
    if close is not None:
        with contextlib.suppress(OSError):
            close()


def read_stream(sock: socket.socket, *, deadline: float, cap: int) -> StreamOutcome:
    """Demultiplex Docker's 8-byte-header frames until EOF, the deadline or the cap."""
    out = StreamOutcome()
    buf = bytearray()
    total = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            out.deadline_hit = True
            return out
        sock.settimeout(min(left, 0.5))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            out.eof = True
            return out
        buf += chunk
        while len(buf) >= 8:
            stream_id, size = buf[0], struct.unpack(">I", bytes(buf[4:8]))[0]
            if len(buf) < 8 + size:
                break
            payload = bytes(buf[8 : 8 + size])
            del buf[: 8 + size]
            room = cap - total
            if size > room:
                payload = payload[: max(room, 0)]
                out.truncated = True
            total += len(payload)
            (out.stderr if stream_id == 2 else out.stdout).extend(payload)
            if out.truncated:
                return out


def exec_env(env: Mapping[str, str] | None, marker: str) -> dict[str, str]:
    merged = dict(env or {})
    merged[MARKER_ENV] = marker
    return merged


def elapsed_since(start: float) -> float:
    return round(time.monotonic() - start, 4)
