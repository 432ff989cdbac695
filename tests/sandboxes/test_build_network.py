"""No build reaches the host (issue 46, item 2), on the real engine with real listeners.

Red-team findings pinned here: a build on Docker's default bridge reached a service bound
to the host's 0.0.0.0 through the bridge gateway, and `ADD http://127.0.0.1:PORT/…` in a
pack built offline was fetched by dockerd from the host's loopback.
"""

from __future__ import annotations

import http.server
import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from envfactory.core.errors import ImageBuildFailed
from sandboxes import DockerEngine
from sandboxes.build_network import BRIDGE, CHAIN, NETWORK, chain_rules, install_rules
from tests.verifiers.gate_tasks import context_tar

pytestmark = pytest.mark.docker

# Tries each (host, port) from inside a build step; prints one JSON line of what answered.
PROBE = """\
import json, socket, struct, sys
targets = json.loads(sys.argv[1])
with open("/proc/net/route") as f:
    for line in f.read().splitlines()[1:]:
        parts = line.split()
        if parts[1] == "00000000":
            gateway = socket.inet_ntoa(struct.pack("<L", int(parts[2], 16)))
out = {}
for host, port in targets:
    host = gateway if host == "GATEWAY" else host
    try:
        socket.create_connection((host, port), timeout=3).close()
        out[f"{host}:{port}"] = "reached"
    except OSError as exc:
        out[f"{host}:{port}"] = type(exc).__name__
print("PROBE " + json.dumps({"gateway": gateway, "results": out}), flush=True)
"""


@dataclass
class Listener:
    port: int
    hits: list[str]


def _listen(host: str) -> tuple[Listener, http.server.ThreadingHTTPServer]:
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"host-secret")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer((host, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return Listener(server.server_address[1], hits), server


@pytest.fixture(scope="module")
def listeners() -> Iterator[dict[str, Listener]]:
    """A service on the host's loopback and one on all its addresses."""
    loop, s1 = _listen("127.0.0.1")
    anywhere, s2 = _listen("0.0.0.0")
    yield {"loopback": loop, "anywhere": anywhere}
    for s in (s1, s2):
        s.shutdown()
        s.server_close()


def _targets(listeners: dict[str, Listener]) -> list[tuple[str, int]]:
    """The loopback listener at the step's own loopback and the gateway; the 0.0.0.0 one
    at the gateway and every address of the host (its LAN, docker0)."""
    loop, anywhere = listeners["loopback"].port, listeners["anywhere"].port
    own = [a for a in _host_addresses() if not a.startswith("127.")]
    return [("127.0.0.1", loop), ("GATEWAY", loop), ("GATEWAY", anywhere)] + [
        (a, anywhere) for a in own
    ]


def _host_addresses() -> list[str]:
    import subprocess

    links = json.loads(subprocess.run(["ip", "-j", "-4", "addr"], capture_output=True).stdout)
    return [a["local"] for link in links for a in link.get("addr_info") or []]


def _probe_result(log: str) -> dict[str, object]:
    line = next(ln for ln in log.splitlines() if ln.startswith("PROBE "))
    return json.loads(line[len("PROBE ") :])  # type: ignore[no-any-return]


def test_a_networked_build_reaches_neither_host_listener_but_still_reaches_pypi(
    docker_engine: DockerEngine, base_image: str, listeners: dict[str, Listener]
) -> None:
    targets = _targets(listeners)
    dockerfile = (
        f"FROM {base_image}\nCOPY probe.py /probe.py\n"
        f"RUN echo {uuid.uuid4().hex} && python3 /probe.py '{json.dumps(targets)}'\n"
        "RUN pip download --no-deps --no-cache-dir -q -d /tmp/wheels six==1.16.0 "
        "&& ls /tmp/wheels\n"
    )
    res = docker_engine.build(
        context_tar({"Dockerfile": dockerfile, "probe.py": PROBE}), network=True
    )
    try:
        probe = _probe_result(res.log_tail)
        results = probe["results"]
        assert isinstance(results, dict) and len(results) >= 4, results  # gateway = own address
        assert "reached" not in results.values(), results
        assert listeners["loopback"].hits == [] and listeners["anywhere"].hits == []
        assert "six-1.16.0-py2.py3-none-any.whl" in res.log_tail  # PyPI, through the proxy
    finally:
        docker_engine.remove_image(res.tag)
    network = docker_engine.client.networks.get(NETWORK)
    assert network.attrs["Options"]["com.docker.network.bridge.name"] == BRIDGE
    assert network.attrs["Options"]["com.docker.network.bridge.enable_icc"] == "false"


def test_on_the_default_bridge_the_same_probe_reaches_the_host(
    docker_engine: DockerEngine, base_image: str, listeners: dict[str, Listener]
) -> None:
    """The control: what the build network prevents is real on the default bridge."""
    port = listeners["anywhere"].port
    out = docker_engine.client.containers.run(
        base_image,
        ["python3", "-c", PROBE, json.dumps([["GATEWAY", port]])],
        network_mode="bridge",
        remove=True,
    ).decode()
    assert "reached" in json.dumps(_probe_result(out)["results"])


def test_the_fence_rules_are_installed_once(docker_engine: DockerEngine) -> None:
    import subprocess

    install_rules()  # again: nothing doubles
    listing = subprocess.run(["iptables", "-w", "-S"], capture_output=True, text=True).stdout
    lines = listing.splitlines()
    for rule in chain_rules():
        assert lines.count(rule) == 1, rule
    assert lines.count(f"-A INPUT -i {BRIDGE} -j DROP") == 1
    assert lines.count(f"-A DOCKER-USER -i {BRIDGE} -j {CHAIN}") == 1


def test_add_of_a_host_url_is_refused_before_the_daemon_fetches_it(
    docker_engine: DockerEngine, base_image: str, listeners: dict[str, Listener]
) -> None:
    port = listeners["loopback"].port
    dockerfile = f"FROM {base_image}\nADD http://127.0.0.1:{port}/secret /secret\n"
    with pytest.raises(ImageBuildFailed) as err:
        docker_engine.build(context_tar({"Dockerfile": dockerfile}), network=False)
    assert "Dockerfile line 2" in err.value.message and "URL" in err.value.message
    assert listeners["loopback"].hits == []


def test_from_and_copy_from_a_private_local_image_are_refused(
    docker_engine: DockerEngine, base_image: str
) -> None:
    private = f"envfactory-test/private:{uuid.uuid4().hex[:8]}"
    docker_engine.client.images.get(base_image).tag(private)
    try:
        for dockerfile, line in (
            (f"FROM {private}\n", 1),
            (f"FROM {base_image}\nCOPY --from={private} /etc/hostname /x\n", 2),
        ):
            with pytest.raises(ImageBuildFailed) as err:
                docker_engine.build(context_tar({"Dockerfile": dockerfile}))
            assert f"Dockerfile line {line}" in err.value.message and private in err.value.message
    finally:
        docker_engine.client.images.remove(private)
