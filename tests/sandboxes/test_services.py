"""Services next to a sandbox (`sandboxes/services.py`) on the real Docker engine: reached
by name on a private internal network, fresh for every sandbox, gone with it, and
collected by the janitor when their owner dies."""

from __future__ import annotations

import docker
import pytest

from envfactory.core.errors import SandboxError
from envfactory.core.models import BuildContext, Purpose, ServiceSpec
from sandboxes import DockerEngine
from sandboxes import labels as L

pytestmark = pytest.mark.docker

# a tiny key-value service: PUT stores the body, GET returns it (state lives in memory)
KV = (
    "import http.server as h\n"
    "data = {}\n"
    "class K(h.BaseHTTPRequestHandler):\n"
    "    def do_PUT(self):\n"
    "        data[self.path] = self.rfile.read(int(self.headers['Content-Length']))\n"
    "        self.send_response(204); self.end_headers()\n"
    "    def do_GET(self):\n"
    "        body = data.get(self.path, b'')\n"
    "        self.send_response(200); self.send_header('Content-Length', str(len(body)))\n"
    "        self.end_headers(); self.wfile.write(body)\n"
    "h.ThreadingHTTPServer(('0.0.0.0', 8080), K).serve_forever()\n"
)
READY = "python3 -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:8080/')\""


def kv_service(image: str, **kw: object) -> ServiceSpec:
    fields = {
        "name": "kv",
        "build": BuildContext(files=()),
        "command": ("python3", "-c", KV),
        "ready": READY,
        "ready_timeout_s": 30,
        "memory_mb": 128,
        "image": image,
        **kw,
    }
    return ServiceSpec.model_validate(fields)


def put(box: object, value: str) -> int | None:
    code = (
        "import urllib.request as u; "
        f"u.urlopen(u.Request('http://kv:8080/x', data=b'{value}', method='PUT'), timeout=5)"
    )
    return box.exec(["python3", "-c", code], timeout=30).exit_code  # type: ignore[attr-defined]


def get(box: object) -> str:
    code = "import urllib.request as u; print(u.urlopen('http://kv:8080/x', timeout=5).read().decode())"
    res = box.exec(["python3", "-c", code], timeout=30)  # type: ignore[attr-defined]
    assert res.exit_code == 0, res.stderr
    return str(res.stdout).strip()


def service_objects(client: docker.DockerClient, network: str) -> tuple[list[str], list[str]]:
    """The containers and networks left of one sandbox's services."""
    # The low-level listing: `containers.list` inspects every container on the engine, and
    # one removed meanwhile (another process's) raised NotFound.
    listed = client.api.containers(all=True, filters={"name": network})
    names = [n.lstrip("/") for c in listed for n in c["Names"]]
    containers = [n for n in names if n.startswith(network)]
    networks = [n.name for n in client.networks.list(names=[network])]
    return containers, networks


def network_of(client: docker.DockerClient, box: object) -> str:
    info = client.api.inspect_container(box.id)  # type: ignore[attr-defined]
    (name,) = info["NetworkSettings"]["Networks"]
    return str(name)


def test_the_main_container_reaches_its_service_by_name_and_nothing_outside(
    docker_engine: DockerEngine, base_image: str
) -> None:
    client = docker_engine.client
    with docker_engine.sandbox(
        base_image, purpose=Purpose.TEST, services=[kv_service(base_image)]
    ) as box:
        assert put(box, "hello") == 0
        assert get(box) == "hello"
        net = client.api.inspect_network(network_of(client, box))
        assert net["Internal"] is True  # no route out, nothing published
        assert net["Labels"][L.SANDBOX] == net["Name"] and net["Labels"][L.OWNER] == "envfactory"
        out = box.exec(
            [
                "python3",
                "-c",
                "import socket; socket.create_connection(('deb.debian.org', 80), 3)",
            ],
            timeout=30,
        )
        assert out.exit_code != 0  # the outside is unreachable from the sandbox


def test_every_sandbox_gets_fresh_services_of_its_own(
    docker_engine: DockerEngine, base_image: str
) -> None:
    svc = [kv_service(base_image)]
    with docker_engine.sandbox(base_image, purpose=Purpose.TEST, services=svc) as a:
        assert put(a, "solver-wrote-this") == 0
        with docker_engine.sandbox(base_image, purpose=Purpose.TEST, services=svc) as b:
            assert get(b) == ""  # its own service, started empty
            assert network_of(docker_engine.client, a) != network_of(docker_engine.client, b)


def test_services_and_their_network_go_with_the_sandbox(
    docker_engine: DockerEngine, base_image: str
) -> None:
    client = docker_engine.client
    box = docker_engine.start(base_image, purpose=Purpose.TEST, services=[kv_service(base_image)])
    network = network_of(client, box)
    (cname,), _ = service_objects(client, network)
    labels = client.api.inspect_container(cname)["Config"]["Labels"]
    assert labels[L.SANDBOX] == cname and labels[L.OWNER_PROC] == L.this_process()
    box.remove()
    assert service_objects(client, network) == ([], [])


def test_a_service_never_ready_fails_the_start_and_leaves_nothing(
    docker_engine: DockerEngine, base_image: str
) -> None:
    client = docker_engine.client
    before = {n.name for n in client.networks.list()}
    stuck = kv_service(base_image, ready="false", ready_timeout_s=2)
    with pytest.raises(SandboxError, match="service 'kv' not ready after 2s"):
        docker_engine.start(base_image, purpose=Purpose.TEST, services=[stuck])
    left = {n.name for n in client.networks.list()} - before
    assert not [n for n in left if n.startswith("envfactory-svc-")]
    with docker_engine.sandbox(base_image, purpose=Purpose.TEST):  # the pool slot came back
        pass


def test_the_janitor_removes_the_services_of_a_dead_owner(
    docker_engine: DockerEngine, base_image: str
) -> None:
    client = docker_engine.client
    box = docker_engine.start(base_image, purpose=Purpose.TEST, services=[kv_service(base_image)])
    network = network_of(client, box)
    try:
        removed = docker_engine.gc(include_live=True, run_id=docker_engine.run_id)
        assert f"network:{network}" in removed
        assert service_objects(client, network) == ([], [])
    finally:
        box.remove()
