"""The API under load (issue 46, item 6), against a real uvicorn process on 127.0.0.1 and
real HTTP clients.

Regressions, as a red team found them:
- 200 concurrent `GET /api/seeds/{id}` by one viewer for a 4.9 MB seed took the API from
  297 MB to 1,878 MB: the detail inlined the description. It now links the description
  and the files, each its own streamed answer, and one token has at most
  `MAX_PER_TOKEN` requests in flight (the next gets 429 with Retry-After);
- a 1 MB `POST /api/seeds` with 60,000 unknown `constraints` keys answered a 9.6 MB error
  after 2.9 s, and four at once made `/api/health` take 8.8 s. The error now lists the
  first problems and counts them, and health answers within 100 ms meanwhile.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from envfactory.core.models import Attachment, ReviewerRole, TaskSeed
from envfactory.core.settings import Settings
from envfactory.store import ArtifactStore, Store
from tests.s3_server import free_port

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
MAX_PER_TOKEN = 4
BIG_DESCRIPTION = 4_900_000
FILE = bytes(range(256)) * 8192  # 2 MiB
HEALTH_BUDGET_S = 0.100
#: a stalled event loop is slow in every round; the other load of a busy machine (a 2-core
#: CI host at load 9 here) delays a single probe now and then: one round must keep the budget
ROUNDS = 3
UNKNOWN_KEYS = 60_000


@dataclass(frozen=True)
class Server:
    port: int
    pid: int
    tokens: dict[str, str]
    big: str  # a seed with a 4.9 MB description and a 2 MiB file
    small: str

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _fill(home: Path) -> tuple[dict[str, str], str, str]:
    settings = Settings(home=home, database_url=None)
    key = ArtifactStore.from_settings(settings).put_bytes(FILE)
    big = TaskSeed(
        id="seed-big",
        title="a seed with a long description",
        description="# notes\n" + "x" * (BIG_DESCRIPTION - 8),
        domain="load",
        attachments=(Attachment(path="data/orders é.bin", key=key, size=len(FILE)),),
        content_hash="1" * 64,
    )
    small = TaskSeed(
        id="seed-small", title="short", description="Rows are dropped.", domain="load",
        content_hash="2" * 64,
    )  # fmt: skip
    with Store.from_settings(settings) as store:
        store.seeds.add(big)
        store.seeds.add(small)
        roles = {"ana": ReviewerRole.REVIEWER, "bo": ReviewerRole.REVIEWER}
        tokens = {who: store.reviewers.add(who, role) for who, role in roles.items()}
        tokens |= {v: store.reviewers.add(v, ReviewerRole.VIEWER) for v in ("vic", "val")}
    return tokens, big.id, small.id


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("load")
    tokens, big, small = _fill(tmp / "home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVFACTORY_")}
    env |= {
        "PYTHONPATH": str(REPO),
        "ENVFACTORY_HOME": str(tmp / "home"),
        "ENVFACTORY_API__MAX_CONCURRENT_PER_TOKEN": str(MAX_PER_TOKEN),
    }
    port, log = free_port(), tmp / "api.log"
    cmd = [sys.executable, "-m", "uvicorn", "tests.api.asgi_from_env:app", "--factory"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*cmd, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
            env=env,
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait(lambda: _up(proc, port, log), 60, log.read_text)
        yield Server(port, proc.pid, tokens, big, small)
    finally:
        proc.terminate()
        proc.wait(30)


def _up(proc: subprocess.Popen[bytes], port: int, log: Path) -> bool:
    assert proc.poll() is None, log.read_text()
    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _wait(ready: Callable[[], bool], seconds: float, why: Callable[[], str]) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline, why()
        time.sleep(0.05)


def test_a_seed_detail_links_its_files_and_a_long_description_instead_of_inlining_them(
    server: Server,
) -> None:
    with httpx.Client(base_url=server.base, headers=server.auth("vic"), timeout=30) as c:
        res = c.get(f"/api/seeds/{server.big}")
        assert res.status_code == 200 and len(res.content) < 4096, len(res.content)
        detail = res.json()
        assert detail["description"] is None and detail["description_chars"] == BIG_DESCRIPTION
        text = c.get(detail["description_url"])
        assert text.headers["content-type"].startswith("text/markdown")
        assert text.text.startswith("# notes\n") and len(text.text) == BIG_DESCRIPTION
        (link,) = detail["attachments"]
        assert (link["path"], link["size"]) == ("data/orders é.bin", len(FILE))
        with c.stream("GET", link["url"]) as download:
            assert download.status_code == 200
            assert "orders%20%C3%A9.bin" in download.headers["content-disposition"]
            assert b"".join(download.iter_bytes()) == FILE
        missing = c.get(f"/api/seeds/{server.big}/files/data/nope.bin")
        assert missing.status_code == 404 and "lists its files" in missing.json()["hint"]
        small = c.get(f"/api/seeds/{server.small}").json()
        assert small["description"] == "Rows are dropped." and small["attachments"] == []
        assert c.get("/api/seeds/seed-none").status_code == 404


def _burst(server: Server, path: str, who: str, calls: int) -> list[int]:
    """`calls` GETs leaving together, each on its own connection; their statuses."""
    barrier = threading.Barrier(calls)
    codes = [0] * calls

    def call(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            conn.connect()
            barrier.wait()
            conn.request("GET", path, headers=server.auth(who))
            res = conn.getresponse()
            res.read()
            codes[i] = res.status
        finally:
            conn.close()

    threads = [threading.Thread(target=call, args=(i,)) for i in range(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return codes


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the API's RSS")
def test_200_concurrent_reads_of_a_large_seed_by_one_viewer_keep_the_api_small(
    server: Server,
) -> None:
    """The red team's burst: 200 at once for the 4.9 MB seed took the API from 297 MB to
    1,878 MB. Now each answer is a few KiB, and past the token's limit a 429."""
    pid = server.pid
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM from here
    before = _status_kb(pid, "VmRSS")
    codes = _burst(server, f"/api/seeds/{server.big}", "vic", 200)
    growth_mb = (_status_kb(pid, "VmHWM") - before) / 1024
    print(f"200 concurrent seed details: {codes.count(200)} answered, {codes.count(429)} 429,"
          f" peak RSS +{growth_mb:.0f} MB")  # fmt: skip
    assert set(codes) <= {200, 429} and codes.count(200) >= MAX_PER_TOKEN
    assert growth_mb < 100


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"/proc/{pid}/status has no {field}")


def _held(server: Server, who: str) -> http.client.HTTPConnection:
    """A request whose body never finishes arriving: it stays in flight until closed."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.putrequest("POST", "/api/seeds")
    for name, value in server.auth(who).items():
        conn.putheader(name, value)
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", "1000")
    conn.endheaders(b'{"title": ')
    return conn


def test_one_token_past_its_concurrency_limit_gets_429_with_retry_after(server: Server) -> None:
    held = [_held(server, "bo") for _ in range(MAX_PER_TOKEN)]
    me = f"{server.base}/api/me"
    try:
        answers: list[httpx.Response] = []

        def refused() -> bool:
            answers.append(httpx.get(me, headers=server.auth("bo"), timeout=10))
            return answers[-1].status_code == 429

        _wait(refused, 10, lambda: f"never refused: {answers[-1].status_code}")
        answer = answers[-1]
        assert answer.headers["retry-after"] == "1"
        assert f"more than {MAX_PER_TOKEN} requests at once" in answer.json()["detail"]
        assert "ENVFACTORY_API__MAX_CONCURRENT_PER_TOKEN" in answer.json()["detail"]
        assert httpx.get(me, headers=server.auth("val"), timeout=10).status_code == 200
        assert httpx.get(f"{server.base}/api/health", timeout=10).status_code == 200
    finally:
        for conn in held:
            conn.close()
    _wait(
        lambda: httpx.get(me, headers=server.auth("bo"), timeout=10).status_code == 200,
        10,
        lambda: "the held requests' slots were not given back",
    )


def _abusive_seed() -> bytes:
    constraints = {f"k{i:05d}": i for i in range(UNKNOWN_KEYS)}  # just under 1 MiB
    seed = {"title": "t", "description": "d", "domain": "x", "constraints": constraints}
    return json.dumps(seed).encode()


def test_an_error_body_lists_the_first_problems_and_counts_them(server: Server) -> None:
    body = _abusive_seed()
    assert 1_000_000 < len(body) <= 1 << 20
    headers = server.auth("ana") | {"Content-Type": "application/json"}
    res = httpx.post(f"{server.base}/api/seeds", content=body, headers=headers, timeout=30)
    assert res.status_code == 422 and len(res.content) < 8192, len(res.content)
    detail = res.json()["detail"]
    assert detail.startswith(f"request body: {UNKNOWN_KEYS:,} problems, the first 20 listed")
    assert detail.count("unknown key") == 20 and f"and {UNKNOWN_KEYS - 20:,} more" in detail
    echoed = {"decision": "x" * 500_000}
    res = httpx.post(
        f"{server.base}/api/reviews/rev-1/decision", json=echoed, headers=headers, timeout=30
    )
    assert res.status_code == 422 and len(res.content) < 4096, len(res.content)
    assert res.json()["count"] == 1 and res.json()["detail"][0]["loc"] == ["body", "decision"]


def _health_while(server: Server, abuse: list[Callable[[], int]]) -> tuple[list[float], list[int]]:
    """Run the abusive calls together while probing /api/health on a kept-alive
    connection; the probes' latencies (those that overlapped the abuse) and the codes."""
    probe = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    probe.request("GET", "/api/health")
    probe.getresponse().read()
    codes: list[int] = []
    threads = [threading.Thread(target=lambda f=f: codes.append(f())) for f in abuse]
    for t in threads:
        t.start()
    latencies = []
    try:
        while any(t.is_alive() for t in threads):
            started = time.perf_counter()
            probe.request("GET", "/api/health")
            assert probe.getresponse().read() == b'{"ok":true}'
            latencies.append(time.perf_counter() - started)
            time.sleep(0.005)
    finally:
        for t in threads:
            t.join()
        probe.close()
    return latencies, codes


def _call(server: Server, method: str, path: str, who: str, body: bytes | None = None) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        headers = server.auth(who) | {"Content-Type": "application/json"}
        conn.request(method, path, body=body, headers=headers)
        res = conn.getresponse()
        res.read()
        return res.status
    finally:
        conn.close()


ABUSE = {  # what the red team sent, four at once: (method, path, who, body), expected status
    "four 1 MB seeds with 60,000 unknown keys": (("POST", "/api/seeds", "ana", True), 422),
    "four reads of a 4.9 MB seed": (("GET", "/api/seeds/seed-big", "vic", False), 200),
    "four downloads of its description": (
        ("GET", "/api/seeds/seed-big/description", "vic", False),
        200,
    ),
}


@pytest.mark.parametrize("abuse", list(ABUSE))
def test_health_answers_within_100_ms_while_four_abusive_requests_run(
    server: Server, abuse: str
) -> None:
    (method, path, who, with_body), expected = ABUSE[abuse]
    body = _abusive_seed() if with_body else None
    calls = [lambda: _call(server, method, path, who, body)] * 4
    _health_while(server, calls)  # warm: the pool's connections and threads, the checker
    slowest: list[float] = []
    for _ in range(ROUNDS):
        latencies, codes = _health_while(server, calls)
        assert codes == [expected] * 4
        assert latencies, "the abusive requests ended before a probe was sent"
        slowest.append(max(latencies))
        print(
            f"{abuse}: {len(latencies)} health probes, slowest {max(latencies) * 1000:.1f} ms,"
            f" median {sorted(latencies)[len(latencies) // 2] * 1000:.1f} ms"
        )
        if slowest[-1] < HEALTH_BUDGET_S:
            break
    assert min(slowest) < HEALTH_BUDGET_S, [f"{s * 1000:.0f} ms" for s in slowest]
