"""Fault on the real stack: two API instances (two uvicorn processes on one PostgreSQL)
deciding the same review item at once.

Issue 15 (state that scales out): with reviewers and decisions in the database, any number
of instances must agree. Each of several items is decided at the same moment by two
reviewers, each through a different instance: exactly one answer is 200 and the other
409, and the item carries the winner's decision, audited once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from envfactory.core.models import ReviewerRole, ReviewState
from envfactory.store import Store
from envfactory.store.migrate import upgrade
from tests.api.conftest import add_item
from tests.pg_cluster import pg_cluster
from tests.s3_server import free_port
from tests.workflows.real_stack import wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
ITEMS = 8


def _instance(url: str, home: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVFACTORY_")}
    env |= {"PYTHONPATH": str(REPO), "ENVFACTORY_DATABASE_URL": url, "ENVFACTORY_HOME": str(home)}
    cmd = [sys.executable, "-m", "uvicorn", "tests.api.asgi_from_env:app", "--factory"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*cmd, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
            env=env,
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        assert proc.poll() is None, log.read_text()
        try:
            return httpx.get(f"{base}/api/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    wait_for(up, 90, log.read_text)
    return proc, base


@pytest.fixture
def cluster_url() -> Iterator[str]:
    with pg_cluster() as cluster:
        upgrade(cluster.url)
        yield cluster.url


def test_two_instances_deciding_the_same_item_at_once_give_one_200_and_one_409(
    cluster_url: str, tmp_path: Path
) -> None:
    with Store.open(cluster_url) as store:
        tokens = {who: store.reviewers.add(who, ReviewerRole.REVIEWER) for who in ("ana", "bo")}
        items = [add_item(store, f"env-{i}").id for i in range(ITEMS)]
    procs = []
    try:
        for name in ("a", "b"):
            procs.append(_instance(cluster_url, tmp_path / name, tmp_path / f"{name}.log"))
        (_, base_a), (_, base_b) = procs
        answers = [_race(item, (base_a, tokens["ana"]), (base_b, tokens["bo"])) for item in items]
    finally:
        for proc, _ in procs:
            proc.terminate()
            proc.wait(30)
    with Store.open(cluster_url) as store:
        for item_id, (ana, bo) in zip(items, answers, strict=True):
            assert sorted((ana, bo)) == [200, 409], (item_id, ana, bo)
            item = store.reviews.get(item_id)
            winner = "ana" if ana == 200 else "bo"
            assert item.state == ReviewState.CONFIRMED and item.reviewer == winner
            assert [a.reviewer for a in store.reviews.audit(item_id)] == [winner]
    wins = sum(a == 200 for a, _ in answers)
    print(f"{ITEMS} races: instance a won {wins}, instance b won {ITEMS - wins}")


def _race(item_id: str, *sides: tuple[str, str]) -> tuple[int, ...]:
    """Both reviewers post their decision at the same moment; their status codes."""
    barrier = threading.Barrier(len(sides))
    codes: list[int] = [0] * len(sides)

    def post(i: int, base: str, token: str) -> None:
        with httpx.Client(base_url=base, timeout=30) as c:
            c.get("/api/health")  # connect before the barrier: the posts leave together
            barrier.wait()
            res = c.post(
                f"/api/reviews/{item_id}/decision",
                json={"decision": "confirm", "comment": "race"},
                headers={"Authorization": f"Bearer {token}"},
            )
            codes[i] = res.status_code

    threads = [
        threading.Thread(target=post, args=(i, base, token))
        for i, (base, token) in enumerate(sides)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tuple(codes)
