"""The network builds run on: a bridge of envfactory's own with no route to the host.

Docker's default bridge routes a build step to the host (the bridge gateway is one of the
host's addresses, and the host's INPUT policy may accept everything) and to every other
container on it. A `RUN` in a pack, an imported suite or a mined repository's `setup.py`
could then reach whatever listens on the host's `0.0.0.0`: Temporal, the API, PostgreSQL.

`ensure_build_network` makes (once per engine) a bridge network `envfactory-build` on the
interface `efbuild0`, with inter-container traffic off, and installs host firewall rules
(iptables, as Docker itself does) that keep its containers to the internet:

- `INPUT -i efbuild0 -j DROP`: nothing from the bridge reaches any of the host's own
  addresses (the gateway, the host's LAN address, other bridges' gateways, every port);
- `DOCKER-USER -i efbuild0 -j ENVFACTORY-BUILD`, a chain that drops every private,
  loopback, link-local (metadata endpoints), shared and multicast destination and each
  subnet the host has an address in (no neighbour on the LAN, no other container
  network), except port 53 of the host's own DNS servers: Docker's resolver answers at
  127.0.0.11 inside the container and forwards from the container's namespace, so those
  queries cross the bridge (checked here: without that exception nothing resolves).
Package registries (PyPI, the Debian mirror, through this site's intercepting proxy) are
public addresses and stay reachable.

The jumps are checked (`iptables -C`) before each is inserted and the chain is rebuilt
only when it differs from what it should hold, so several processes and restarts keep one
copy; the rules live until the host reboots (then the next build installs them again). They need root on the engine's own host: with a remote engine, or without
`iptables`, a networked build is refused with how to fix it, never run on the default
bridge.
"""

from __future__ import annotations

import ipaddress
import json
import shutil
import subprocess
import threading
from pathlib import Path

import docker
import docker.errors

from envfactory.core.errors import SandboxError

from . import labels as L

NETWORK = "envfactory-build"
BRIDGE = "efbuild0"  # the bridge's interface name on the host (at most 15 characters)
CHAIN = "ENVFACTORY-BUILD"  # the filter chain the bridge's forwarded traffic goes through
#: destinations a build step never reaches, besides the host's own subnets
BLOCKED = (
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "224.0.0.0/4",
    "240.0.0.0/4",
)
_HINT = (
    "run envfactory as root on the Docker engine's host (it installs iptables rules that keep "
    "build steps off the host), or build offline: ENVFACTORY_SANDBOX__BUILD_NETWORK=false"
)
_lock = threading.Lock()


def ensure_build_network(client: docker.DockerClient) -> str:
    """The build network's name, created and fenced off from the host if it was not."""
    if not client.api.base_url.startswith("http+docker://"):  # not a local unix socket
        raise SandboxError(
            f"the Docker engine at {client.api.base_url} is not on this host: its build "
            "network cannot be fenced off from here",
            hint="install the rules of sandboxes/build_network.py on the engine's host and "
            "run envfactory there, or build offline: ENVFACTORY_SANDBOX__BUILD_NETWORK=false",
        )
    with _lock:
        _ensure_network(client)
        install_rules()
    return NETWORK


def _ensure_network(client: docker.DockerClient) -> None:
    try:
        client.networks.get(NETWORK)
        return
    except docker.errors.NotFound:
        pass
    options = {
        "com.docker.network.bridge.name": BRIDGE,
        "com.docker.network.bridge.enable_icc": "false",
    }
    mtu = _default_bridge_mtu(client)
    if mtu:  # a user-defined bridge does not inherit the daemon's MTU (1400 here)
        options["com.docker.network.driver.mtu"] = mtu
    try:
        client.networks.create(
            NETWORK, driver="bridge", options=options, labels=L.ownership("build-network")
        )
    except docker.errors.APIError as exc:
        if exc.status_code != 409:  # another process made it meanwhile: fine
            raise SandboxError(f"cannot create the build network {NETWORK}: {exc}") from exc


def _default_bridge_mtu(client: docker.DockerClient) -> str | None:
    try:
        options = client.networks.get("bridge").attrs.get("Options") or {}
    except docker.errors.NotFound:
        return None
    return options.get("com.docker.network.driver.mtu")


def chain_rules() -> list[str]:
    """The `CHAIN` rules in order, as `iptables -S CHAIN` lists them: the host's DNS
    servers answer (Docker's resolver forwards from inside the container's namespace),
    every blocked range and host subnet is dropped, the rest returns to Docker's rules."""
    out = [f"-N {CHAIN}"]
    for server in nameservers():
        for proto in ("udp", "tcp"):
            out.append(f"-A {CHAIN} -d {server}/32 -p {proto} -m {proto} --dport 53 -j RETURN")
    for cidr in (*BLOCKED, *host_subnets()):
        out.append(f"-A {CHAIN} -d {cidr} -j DROP")
    return [*out, f"-A {CHAIN} -j RETURN"]


#: (chain, match) jumps into the rules, checked with `-C` and inserted first in the chain
JUMPS = (
    ("INPUT", ("-i", BRIDGE, "-j", "DROP")),
    ("DOCKER-USER", ("-i", BRIDGE, "-j", CHAIN)),
)


def install_rules() -> None:
    """Make `CHAIN` hold `chain_rules()` (rebuilt only when it differs), then insert each
    jump that is not there yet, first in its chain (before any ACCEPT)."""
    iptables = shutil.which("iptables")
    if iptables is None:
        raise SandboxError("iptables is not installed: builds cannot be fenced off", hint=_HINT)
    wanted = chain_rules()
    if _iptables(iptables, "-S", CHAIN).stdout.splitlines() != wanted:
        _iptables(iptables, "-N", CHAIN)  # fails harmlessly when it exists
        _must(iptables, "-F", CHAIN)
        for rule in wanted[1:]:
            _must(iptables, *rule.split())
    for chain, match in JUMPS:
        if _iptables(iptables, "-C", chain, *match).returncode != 0:
            _must(iptables, "-I", chain, "1", *match)


def _must(binary: str, *args: str) -> None:
    done = _iptables(binary, *args)
    if done.returncode != 0:
        raise SandboxError(
            f"cannot install the build network's rules (`iptables {' '.join(args)}`): "
            f"{done.stderr.strip()}",
            hint=_HINT,
        )


def nameservers(resolv_conf: Path = Path("/etc/resolv.conf")) -> list[str]:
    """The host's IPv4 DNS servers outside the loopback (what Docker's resolver asks)."""
    try:
        lines = resolv_conf.read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "nameserver":
            try:
                addr = ipaddress.ip_address(parts[1])
            except ValueError:
                continue
            if addr.version == 4 and not addr.is_loopback:
                out.append(str(addr))
    return out


def _iptables(binary: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary, "-w", *args], capture_output=True, text=True, timeout=30, check=False
    )


def host_subnets() -> list[str]:
    """The IPv4 subnets the host has an address in (its LAN, Docker's bridges), those in
    `BLOCKED` left out."""
    try:
        done = subprocess.run(
            ["ip", "-j", "-4", "addr", "show"], capture_output=True, text=True, timeout=10
        )
        links = json.loads(done.stdout or "[]")
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        raise SandboxError(
            f"cannot list the host's addresses (`ip -j -4 addr`): {exc}", hint=_HINT
        ) from exc
    blocked = [ipaddress.IPv4Network(c) for c in BLOCKED]
    out: list[str] = []
    for link in links:
        for addr in link.get("addr_info") or []:
            net = ipaddress.IPv4Network(f"{addr['local']}/{addr['prefixlen']}", strict=False)
            if not any(net.subnet_of(b) for b in blocked) and str(net) not in out:
                out.append(str(net))
    return out
