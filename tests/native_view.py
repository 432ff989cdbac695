"""Whether verification containers can get kernel-overlay libraries here (`native_usr.py`).

They cannot where the storage driver is not fuse-overlayfs, this process is not root, the
engine's layer directories are out of reach, or the engine cannot see this process's
scratch directory (a test run in a container that shares the host's Docker socket and
/var/lib/docker but not its own /tmp or /var/lib): the engine then refuses the volumes
and the container falls back to the plain view, which is what production does too.
"""

from __future__ import annotations

import pytest

from envfactory.core.models import Purpose
from sandboxes import DockerEngine
from sandboxes.native_usr import layer_dirs

MOUNTS = "grep -o ' /usr/[a-z]* overlay ' /proc/mounts | sort"


def skip_unless_native(engine: DockerEngine) -> None:
    if engine.client.info().get("Driver") != "fuse-overlayfs":
        pytest.skip("the storage driver is not fuse-overlayfs: nothing to replace")
    if not engine.native.enabled:
        pytest.skip("not root: kernel-overlay volumes are off")
    base = engine.ensure_base_image("python")
    if layer_dirs(engine.client.api.inspect_image(base)["GraphDriver"], "/usr/lib") is None:
        pytest.skip("the engine's layer directories are not readable here")
    with engine.sandbox(base, purpose=Purpose.VERIFY, network=False, native_usr=True) as box:
        mounted = box.exec(["/bin/sh", "-c", MOUNTS]).stdout.strip()
    if not mounted:
        why = engine.native.why_off or engine.native.last_refusal or "no reason recorded"
        pytest.skip(f"the engine would not mount the volumes here: {why}")
