"""Ownership labels on every container, image and volume we create.

Invariant: `gc` selects containers by `OWNER` and by `SANDBOX` naming the container
itself, so anything we did not create is never touched.
Containers also carry the identity of the process that owns them (`OWNER_PROC`: host,
pid and the pid's start time), which lets `gc` tell an orphan (its owner is gone) from a
sandbox another live process is still using on the same Docker engine.
"""

from __future__ import annotations

import os
import socket
import time

PREFIX = "envfactory"
OWNER = f"{PREFIX}.owner"
OWNER_VALUE = "envfactory"
RUN_ID = f"{PREFIX}.run_id"
PURPOSE = f"{PREFIX}.purpose"
CREATED = f"{PREFIX}.created"
OWNER_PROC = f"{PREFIX}.owner_proc"
# The install (home directory) a sandbox belongs to (`SandboxSettings.home_scope`): gc and
# the janitor of one install never touch another's, even on one engine and one host.
HOME = f"{PREFIX}.home"
KIND = f"{PREFIX}.kind"  # image kind: base, env, state
RECIPE = f"{PREFIX}.recipe"  # base-image recipe hash
STATE_KIND = f"{PREFIX}.state_kind"
STATE_LABEL = f"{PREFIX}.state_label"
ENV_ID = f"{PREFIX}.env_id"
# A container's own name. Containers inherit the labels of their image (and snapshots
# inherit those of the container), so only a label naming the container itself proves
# we created it; anyone's container run from one of our images carries the others.
SANDBOX = f"{PREFIX}.sandbox"

OWNER_FILTER = f"{OWNER}={OWNER_VALUE}"


def _proc_start_ticks(pid: int) -> str:
    """The pid's start time in clock ticks since boot: distinguishes a reused pid."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            stat = f.read()
    except OSError:
        return ""
    # comm (field 2) may contain spaces; fields after the closing paren are plain.
    return stat.rsplit(")", 1)[1].split()[19]


def this_process() -> str:
    """`host:pid:start` of the current process."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_proc_start_ticks(pid)}"


def other_host(owner_proc: str) -> bool:
    """The owner runs on another host: its liveness cannot be checked from here."""
    host = owner_proc.rsplit(":", 2)[0] if owner_proc.count(":") >= 2 else ""
    return bool(host) and host != socket.gethostname()


def process_alive(owner_proc: str) -> bool:
    """True unless we can prove the owning process is gone (a different host: assume alive)."""
    try:
        host, pid_s, start = owner_proc.rsplit(":", 2)
        pid = int(pid_s)
    except ValueError:
        return False  # malformed label: nobody can be using it through us
    if host != socket.gethostname():
        return True
    return _proc_start_ticks(pid) == start and start != ""


def ownership(
    purpose: str, run_id: str | None = None, *, home: str = "", **extra: str
) -> dict[str, str]:
    """Labels for a new object; `extra` keys are prefixed with ``envfactory.``."""
    labels = {
        OWNER: OWNER_VALUE,
        PURPOSE: purpose,
        CREATED: str(int(time.time())),
        OWNER_PROC: this_process(),
        # Always written, empty too: a container inherits its image's labels, and a
        # snapshot made by another install must not make the container look like its.
        HOME: home,
    }
    if run_id:
        labels[RUN_ID] = run_id
    labels.update({f"{PREFIX}.{k}": v for k, v in extra.items()})
    return labels
