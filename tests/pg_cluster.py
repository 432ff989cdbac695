"""A private, throwaway PostgreSQL cluster for fault tests that restart the server.

Started with scripts/start-postgres.sh on a free port and its own data directory, so a
test may stop and restart it (`restart`, with pg_ctl) without disturbing the shared
cluster other tests use. Skips the test when no PostgreSQL binaries are installed.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.s3_server import free_port

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "start-postgres.sh"


def _bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


class PgCluster:
    def __init__(self, data: Path, port: int) -> None:
        self.data, self.port = data, port
        self.env = {**os.environ, "PG_TEST_PORT": str(port), "PG_TEST_DATA": str(data)}
        self.url = ""

    def start(self) -> PgCluster:
        out = subprocess.run(
            ["bash", str(SCRIPT), "--url"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert out.returncode == 0, out.stderr
        self.url = out.stdout.strip()
        return self

    def pg_ctl(self, *args: str, check: bool = True) -> None:
        """Run pg_ctl on this cluster as the postgres OS user (the server refuses root)."""
        pg_ctl = _bin() / "pg_ctl"  # type: ignore[operator]
        cmd = [str(pg_ctl), "-D", str(self.data), *args]
        if os.getuid() == 0:
            cmd = ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(cmd)]
        subprocess.run(cmd, check=check, capture_output=True, timeout=120)

    def stop(self) -> None:
        self.pg_ctl("-m", "fast", "-w", "stop")

    def restart(self) -> None:
        """Stop (fast: every connection is cut) and start again on the same port."""
        self.stop()
        self.start()


@contextmanager
def pg_cluster() -> Iterator[PgCluster]:
    if _bin() is None:
        pytest.skip("no PostgreSQL binaries (scripts/start-postgres.sh installs them)")
    data = Path(f"/tmp/pgfault-{uuid.uuid4().hex[:10]}")  # the postgres user must reach it
    cluster = PgCluster(data, free_port()).start()
    try:
        yield cluster
    finally:
        try:  # the test may have left it stopped: that is no error here
            cluster.pg_ctl("-m", "immediate", "-w", "stop", check=False)
        finally:
            shutil.rmtree(data, ignore_errors=True)
            Path(f"{data}.log").unlink(missing_ok=True)
