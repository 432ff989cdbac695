"""Services next to a sandbox: fresh containers on a private network, gone with it.

A sandbox whose environment declares services (`ServiceSpec`: PostgreSQL, Redis, a web
service) gets a `ServiceGroup`: one internal Docker network (`internal=True`: no route
out, nothing published, nothing outside reaches it) and one container per service on
it, reachable from the main container by the service's name. Invariants:
- every service is started fresh for its sandbox (an episode, a verification, a gate
  state): no state is shared between sandboxes;
- the network and every service container carry the ownership labels of the sandbox's
  process and name themselves (`labels.SANDBOX`), so the janitor removes them as orphans
  when their owner dies; the main container is labelled with the group (`SERVICES`);
- `remove()` is idempotent and removes the containers, then the network;
- a service that is not ready within its `ready_timeout_s` fails the start with its
  log tail, and whatever was started is removed.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import docker
import docker.errors

from envfactory.core.errors import ConfigError, SandboxError
from envfactory.core.models import ServiceSpec

from . import capabilities as C
from . import labels as L
from .shutdown import refuse_if_stopping

READY_POLL_S = 0.5


@dataclass
class ServiceGroup:
    """The network and service containers of one sandbox."""

    client: docker.DockerClient
    network: str  # the network's name (also what the main container joins)
    containers: list[str] = field(default_factory=list)
    _removed: bool = False

    def remove(self) -> None:
        if self._removed:
            return
        self._removed = True
        for cid in self.containers:
            with contextlib.suppress(docker.errors.NotFound):
                self.client.api.remove_container(cid, force=True, v=True)
        with contextlib.suppress(docker.errors.NotFound):
            self.client.api.remove_network(self.network)


def start_services(
    client: docker.DockerClient,
    services: Sequence[ServiceSpec],
    *,
    run_id: str | None,
    home: str = "",
) -> ServiceGroup:
    """A fresh network with every service started on it and ready (none once the process
    is ending: `shutdown.begin`)."""
    refuse_if_stopping()
    name = f"envfactory-svc-{uuid.uuid4().hex[:10]}"
    labels = L.ownership("services", run_id, home=home, sandbox=name)
    client.api.create_network(name, driver="bridge", internal=True, labels=labels)
    group = ServiceGroup(client, name)
    try:
        for svc in services:
            group.containers.append(_start_one(client, svc, name, run_id, home))
        for svc, cid in zip(services, group.containers, strict=True):
            _wait_ready(client, svc, cid)
    except BaseException:
        group.remove()
        raise
    return group


def _start_one(
    client: docker.DockerClient, svc: ServiceSpec, network: str, run_id: str | None, home: str
) -> str:
    if not svc.image:
        raise ConfigError(
            f"service {svc.name!r} has no image",
            hint="build the environment first: its services are built with it",
        )
    api = client.api
    cname = f"{network}-{svc.name}"
    host = api.create_host_config(
        init=True,
        network_mode=network,
        cap_drop=["ALL"],
        cap_add=C.cap_add("root-work"),  # daemons drop to their own user (postgres, redis)
        security_opt=["no-new-privileges"],
        mem_limit=f"{svc.memory_mb}m",
        memswap_limit=f"{svc.memory_mb}m",
        pids_limit=512,
    )
    endpoint = api.create_endpoint_config(aliases=[svc.name])
    # the SDK takes {network: endpoint}; its type stubs say a single endpoint
    netcfg = api.create_networking_config({network: endpoint})  # type: ignore[arg-type]
    kwargs: dict[str, Any] = {"command": list(svc.command)} if svc.command else {}
    try:
        cid = api.create_container(
            svc.image,
            name=cname,
            hostname=svc.name,
            environment=dict(svc.env),
            host_config=host,
            networking_config=netcfg,
            labels=L.ownership("service", run_id, home=home, sandbox=cname, service=svc.name),
            **kwargs,
        )["Id"]
        api.start(cid)
    except docker.errors.APIError as exc:
        raise SandboxError(f"starting service {svc.name!r} failed: {exc}") from exc
    return str(cid)


def _wait_ready(client: docker.DockerClient, svc: ServiceSpec, cid: str) -> None:
    """Run `svc.ready` inside the service until it exits 0 (or the service exits)."""
    deadline = time.monotonic() + svc.ready_timeout_s
    while True:
        state = client.api.inspect_container(cid)["State"]
        if not state.get("Running"):
            raise SandboxError(
                f"service {svc.name!r} exited ({state.get('ExitCode')}) before it was ready:\n"
                + _tail(client, cid)
            )
        if not svc.ready or _ready_once(client, cid, svc.ready):
            return
        if time.monotonic() >= deadline:
            raise SandboxError(
                f"service {svc.name!r} not ready after {svc.ready_timeout_s}s "
                f"(ready: {svc.ready!r}):\n" + _tail(client, cid),
                hint="raise ready_timeout_s, or fix the service's command or ready check",
            )
        time.sleep(READY_POLL_S)


def _ready_once(client: docker.DockerClient, cid: str, check: str) -> bool:
    api = client.api
    exec_id = api.exec_create(cid, ["timeout", "-s", "KILL", "10", "sh", "-c", check])["Id"]
    api.exec_start(exec_id)
    return api.exec_inspect(exec_id).get("ExitCode") == 0


def _tail(client: docker.DockerClient, cid: str) -> str:
    with contextlib.suppress(docker.errors.APIError):
        return str(client.api.logs(cid, tail=20).decode(errors="replace"))
    return ""
