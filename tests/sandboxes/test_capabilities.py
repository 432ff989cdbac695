"""Capability profiles on the real engine: root work runs under "root-work" and fails under
"locked"; what protects the host (mount, mknod, raw sockets) fails under both.

Both sandboxes have the network on, so a failed `apt-get install` under "locked" is the
capability's doing, not the network's. Each root operation uses its own user and paths so
the operations share one sandbox per profile without depending on each other.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from envfactory.core.models import Limits, Purpose
from sandboxes import DockerEngine, DockerSandbox
from sandboxes.capabilities import ROOT_WORK

pytestmark = pytest.mark.docker

# A daemon in the nginx pattern: bind :80 as root, drop to nobody, then serve; the client
# reads the uid the server answers with.
PRIVILEGE_DROPPING_DAEMON = r"""
python3 - <<'EOF' &
import os, socket
s = socket.socket(); s.bind(("127.0.0.1", 80)); s.listen()
os.setgroups([]); os.setgid(65534); os.setuid(65534)
conn, _ = s.accept(); conn.send(str(os.getuid()).encode()); conn.close()
EOF
sleep 1
python3 -c 'import socket; print(socket.create_connection(("127.0.0.1", 80)).recv(16).decode())'
"""

ROOT_OPERATIONS: dict[str, tuple[str, str]] = {
    # name: (script, text its stdout must hold on success)
    "apt-get install with a postinst that adds a user": (
        "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq"
        " --no-install-recommends uuid-runtime >/dev/null && getent passwd uuidd",
        "uuidd:",
    ),
    "groupadd and useradd": ("groupadd g1 && useradd -m -g g1 u1 && id -gn u1", "g1"),
    "adduser": ("adduser --disabled-password --gecos '' u2 >/dev/null && id -un u2", "u2"),
    "chown, chgrp and chmod of another user's file": (
        "useradd u3 && touch /tmp/f3 && chown u3:u3 /tmp/f3 && chmod 600 /tmp/f3"
        " && chgrp root /tmp/f3 && chmod 640 /tmp/f3 && stat -c '%U:%G %a' /tmp/f3",
        "u3:root 640",
    ),
    "a setgid shared directory": (
        "groupadd devs && mkdir /srv/shared && chgrp devs /srv/shared"
        " && chmod 2775 /srv/shared && stat -c %A /srv/shared",
        "drwxrwsr-x",
    ),
    "su from root to a user": ("useradd -m u4 && su -s /bin/sh -c 'id -un' u4", "u4"),
    "runuser to a user": ("useradd u5 && runuser -u u5 -- id -un", "u5"),
    "a daemon that binds port 80 and drops privileges": (PRIVILEGE_DROPPING_DAEMON, "65534"),
    "killing another user's process": (
        "useradd u6 && (runuser -u u6 -- sleep 300 &) && for i in $(seq 100); do"
        " pgrep -u u6 sleep >/dev/null && break; sleep 0.1; done; pkill -KILL -u u6 sleep"
        " && echo killed",
        "killed",
    ),
}

HOST_PROTECTIONS: dict[str, str] = {
    "mount": "mkdir -p /mnt/t && mount -t tmpfs none /mnt/t",
    "mknod": "mknod /tmp/null2 c 1 3",
    "a raw socket": "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, 1)'",
}


def _sandbox(engine: DockerEngine, image: str, profile: str) -> Iterator[DockerSandbox]:
    limits = Limits(capabilities=profile, exec_timeout_s=300)  # type: ignore[arg-type]
    with engine.sandbox(image, limits=limits, purpose=Purpose.TEST, network=True) as sb:
        yield sb


@pytest.fixture(scope="module")
def root_work(docker_engine: DockerEngine, base_image: str) -> Iterator[DockerSandbox]:
    yield from _sandbox(docker_engine, base_image, "root-work")


@pytest.fixture(scope="module")
def locked(docker_engine: DockerEngine, base_image: str) -> Iterator[DockerSandbox]:
    yield from _sandbox(docker_engine, base_image, "locked")


@pytest.mark.slow
@pytest.mark.parametrize("name", ROOT_OPERATIONS)
def test_ordinary_root_work_succeeds_under_root_work(root_work: DockerSandbox, name: str) -> None:
    script, expected = ROOT_OPERATIONS[name]
    out = root_work.exec(script)
    assert out.exit_code == 0, f"{name}: {out.stdout}{out.stderr}"
    assert expected in out.stdout, f"{name}: {out.stdout}{out.stderr}"


@pytest.mark.slow
@pytest.mark.parametrize("name", ROOT_OPERATIONS)
def test_the_same_root_work_fails_under_locked(locked: DockerSandbox, name: str) -> None:
    script, expected = ROOT_OPERATIONS[name]
    out = locked.exec(script)
    assert out.exit_code != 0 or expected not in out.stdout, f"{name} succeeded: {out.stdout}"


@pytest.mark.parametrize("name", HOST_PROTECTIONS)
def test_root_work_still_cannot_mount_mknod_or_open_a_raw_socket(
    root_work: DockerSandbox, name: str
) -> None:
    out = root_work.exec(HOST_PROTECTIONS[name])
    assert out.exit_code != 0, f"{name} succeeded under root-work"
    assert "not permitted" in out.stderr or "permission denied" in out.stderr.lower(), out.stderr


def test_a_setuid_binary_does_not_make_a_user_root_under_root_work(
    root_work: DockerSandbox,
) -> None:
    """no-new-privileges holds: root may drop to a user, a user cannot climb back."""
    out = root_work.exec(
        "useradd u7 && cp /bin/cat /tmp/rootcat && chmod u+s /tmp/rootcat"
        " && runuser -u u7 -- /tmp/rootcat /etc/shadow"
    )
    assert out.exit_code != 0 and "Permission denied" in out.stderr, out.stdout


def test_the_sandbox_gets_exactly_the_profiles_capabilities(
    docker_engine: DockerEngine, root_work: DockerSandbox
) -> None:
    attrs = docker_engine.client.api.inspect_container(root_work.id)["HostConfig"]
    assert attrs["CapDrop"] == ["ALL"] and set(attrs["CapAdd"]) == set(ROOT_WORK)
    assert attrs["SecurityOpt"] == ["no-new-privileges"] and not attrs["Privileged"]
