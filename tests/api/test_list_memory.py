"""Bounded responses under load: 200 concurrent `GET /api/seeds` from a viewer, against a
real uvicorn process on 127.0.0.1 over a store of 1,000 seeds with 20 kB descriptions.

Regression: the list returned up to 1,000 full seeds per call (descriptions included), and
200 concurrent calls took the API process from 133 MB to 1.75 GB. A page now holds at most
200 summaries built from columns, so the process's peak RSS (VmHWM, reset just before the
burst) stays within RSS_GROWTH_MB = 200 MB of its RSS before it. Measured on a 2-core
machine: +58 to +74 MB (the thread pool's threads and their allocator arenas, SQLite's page
caches, 200 connections); the same burst against whole seeds at limit=200 grew it by
1,239 MB, at limit=1000 by 5.7 GB.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from envfactory.core.models import ReviewerRole, TaskSeed
from envfactory.core.settings import Settings
from envfactory.store import Store
from tests.s3_server import free_port

REPO = Path(__file__).resolve().parents[2]
SEEDS = 1000
DESCRIPTION_CHARS = 20_000
CALLS = 200
#: the bound on peak RSS growth during the burst (measured +58..74 MB; whole seeds: +1,239)
RSS_GROWTH_MB = 200

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path("/proc/self/status").exists(), reason="reads the server's RSS from /proc"
    ),
]


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"/proc/{pid}/status has no {field}")


def _reset_peak(pid: int) -> bool:
    """Start VmHWM afresh at the current RSS (Linux: 5 > clear_refs); False if refused."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _fill(home: Path) -> str:
    """1,000 seeds with long descriptions, and a viewer; the viewer's token."""
    t0 = datetime(2026, 12, 1, tzinfo=UTC)
    with Store.from_settings(Settings(home=home, database_url=None)) as store:
        with store.session() as tx:
            for i in range(SEEDS):
                tx.seeds.add(
                    TaskSeed(
                        id=f"seed-{i:04d}",
                        title=f"seed {i}",
                        description=f"{i} " + "x" * DESCRIPTION_CHARS,
                        domain="load",
                        content_hash=f"{i:064x}",
                        created_at=t0 + timedelta(seconds=i),
                    )
                )
        return store.reviewers.add("vic", ReviewerRole.VIEWER)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, str]]:
    home = tmp_path / "home"
    token = _fill(home)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVFACTORY_")}
    env |= {
        "PYTHONPATH": str(REPO),
        "ENVFACTORY_HOME": str(home),
        # the burst is one token's 200 calls: this test bounds what a list holds, so the
        # per-token limit (429 past 8 in flight, tests/api/test_load.py) is raised past it
        "ENVFACTORY_API__MAX_CONCURRENT_PER_TOKEN": str(CALLS),
    }
    port, log = free_port(), tmp_path / "api.log"
    cmd = [sys.executable, "-m", "uvicorn", "tests.api.asgi_from_env:app", "--factory"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                *cmd,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "warning",
                "--timeout-keep-alive",
                "60",
            ],
            env=env,
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield proc, port, token
    finally:
        proc.terminate()
        proc.wait(30)


def _burst(port: int, token: str, calls: int) -> list[tuple[int, int]]:
    """`calls` list requests leaving together, each on its own keep-alive connection
    (http.client: an httpx client per thread costs more CPU than the server's work);
    (status, items) of each."""
    barrier = threading.Barrier(calls)
    answers: list[tuple[int, int]] = [(0, 0)] * calls

    def call(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            conn.request("GET", "/api/health")
            conn.getresponse().read()  # connected before the barrier
            barrier.wait()
            conn.request(
                "GET", "/api/seeds?limit=200", headers={"Authorization": f"Bearer {token}"}
            )
            res = conn.getresponse()
            answers[i] = (res.status, len(json.loads(res.read()).get("items", [])))
        finally:
            conn.close()

    threads = [threading.Thread(target=call, args=(i,)) for i in range(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers


def test_200_concurrent_seed_lists_keep_the_api_process_peak_rss_bounded(server) -> None:  # type: ignore[no-untyped-def]
    proc, port, token = server
    auth = {"Authorization": f"Bearer {token}"}
    warm = httpx.get(f"http://127.0.0.1:{port}/api/seeds?limit=200", headers=auth, timeout=30)
    assert warm.status_code == 200 and "description" not in warm.json()["items"][0]
    fresh = _reset_peak(proc.pid)
    before = _status_kb(proc.pid, "VmRSS")
    answers = _burst(port, token, CALLS)
    peak = _status_kb(proc.pid, "VmHWM")
    assert answers == [(200, 200)] * CALLS
    growth_mb = (peak - before) / 1024
    print(
        f"{CALLS} concurrent GET /api/seeds?limit=200: RSS {before / 1024:.0f} MB before, "
        f"peak {peak / 1024:.0f} MB (+{growth_mb:.0f} MB; peak reset first: {fresh})"
    )
    assert growth_mb < RSS_GROWTH_MB
