"""Capability profiles: which Linux capabilities root keeps inside a sandbox.

`Limits.capabilities` names the profile (docs/verifiers.md, "Capability profiles"):

- ``locked`` drops every capability: root in the sandbox cannot chown, change user,
  install packages or add users.
- ``root-work`` drops every capability and adds back only what ordinary root work needs
  (apt-get install with its dpkg maintainer scripts, groupadd/useradd/adduser, chown /
  chgrp / chmod of other users' files, setgid shared directories, ``su``/``runuser`` to a
  user, a daemon that binds a low port and drops privileges, killing other users'
  processes). Each entry was kept because an experiment on Docker 20.10 failed without it
  (the doc lists which operation).

Invariants: both profiles start from ``cap_drop=["ALL"]``; nothing that reaches past the
container is ever added (SYS_ADMIN, NET_ADMIN, NET_RAW, MKNOD, SYS_PTRACE, SYS_MODULE, …);
the other protections (no-new-privileges, default seccomp, no devices, resource limits)
are the engine's and hold under every profile.
"""

from __future__ import annotations

from typing import get_args

from envfactory.core.models import CapabilityProfile

#: Capability → the ordinary root operation that fails without it (the doc's table).
ROOT_WORK: dict[str, str] = {
    "CHOWN": "chown/chgrp; groupadd/useradd (shadow files); dpkg unpacking; apt logs",
    "DAC_OVERRIDE": "apt-get update (lists owned by _apt); reading other users' 0700 files",
    "FOWNER": "chmod of files root does not own; apt's partial dirs; adduser",
    "FSETID": "chmod g+s on a directory whose group root is not in (shared directories)",
    "SETUID": "su, runuser, sudo -u; apt's _apt download sandbox; daemons dropping root",
    "SETGID": "the same operations' setgroups/setgid half",
    "KILL": "signalling processes of other users (service stop, pkill -u)",
    "NET_BIND_SERVICE": "ports below 1024 where the engine does not lower the threshold",
}

PROFILES: dict[str, tuple[str, ...]] = {
    "locked": (),
    "root-work": tuple(ROOT_WORK),
}
assert set(PROFILES) == set(get_args(CapabilityProfile)), "every profile has a capability set"


def cap_add(profile: CapabilityProfile) -> list[str]:
    """The capabilities added back after dropping ALL, for `profile`."""
    return list(PROFILES[profile])
