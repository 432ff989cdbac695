"""Label-based janitor: removes our orphans and never touches anything unlabelled.

Services' private networks are removed by the same rules once their containers are gone.
A container is ours when it carries `envfactory.owner=envfactory` (the Docker query
filters on it, and each hit is checked again here) and `envfactory.sandbox` names the
container itself (labels are inherited from images, so the owner label alone is not proof). It is an orphan when the process
that created it is gone (`envfactory.owner_proc`), so a janitor can run while other
processes on the same engine are using their sandboxes. The owner is `host:pid:start`
(the pid's start time, so a reused pid is not mistaken for the owner); a container owned
by another host is left alone, since its owner cannot be checked from here, unless
`foreign_ttl_s` is given and it is at least that old. `include_live` drops these checks
(an operator's "remove everything of ours"). Snapshot images (`envfactory.kind=state`)
are removed only when asked, because the store may still reference them.
"""

from __future__ import annotations

import contextlib
import time

import docker
import docker.errors

from . import labels as L


def _selected(
    lab: dict[str, str],
    older_than_s: float,
    run_id: str | None,
    home: str | None = None,
    owner_proc: str | None = None,
) -> bool:
    if lab.get(L.OWNER) != L.OWNER_VALUE:
        return False  # defence in depth: never trust the server-side filter alone
    if run_id is not None and lab.get(L.RUN_ID) != run_id:
        return False
    if owner_proc is not None and lab.get(L.OWNER_PROC) != owner_proc:
        return False
    if home is not None and lab.get(L.HOME, "") != home:
        return False  # another install's, on the same engine
    created = float(lab.get(L.CREATED, "0") or 0)
    return time.time() - created >= older_than_s


def _orphaned(lab: dict[str, str], foreign_ttl_s: float | None) -> bool:
    """Its owner is provably gone, or (another host's) it outlived `foreign_ttl_s`."""
    owner = lab.get(L.OWNER_PROC, "")
    if L.other_host(owner):
        return foreign_ttl_s is not None and _selected(lab, foreign_ttl_s, None)
    return not L.process_alive(owner)


def collect(
    client: docker.DockerClient,
    *,
    older_than_s: float = 0,
    run_id: str | None = None,
    include_live: bool = False,
    images: bool = False,
    foreign_ttl_s: float | None = None,
    home: str | None = None,
    owner_proc: str | None = None,
) -> list[str]:
    """Remove what matches; return the removed ids, prefixed with their type. `home`: only
    objects of that install (`labels.HOME`; "" matches those without one); None: any.
    `owner_proc`: only containers and networks that process created (`labels.OWNER_PROC`);
    volumes and images are then left alone (they carry no owner process)."""
    removed: list[str] = []
    # Low-level listings carry labels without a per-object inspect, which would race
    # with other processes removing their own containers meanwhile.
    for c in client.api.containers(all=True, filters={"label": L.OWNER_FILTER}):
        lab = c.get("Labels") or {}
        names = [n.lstrip("/") for n in c.get("Names") or []]
        if lab.get(L.SANDBOX) not in names or not _selected(
            lab, older_than_s, run_id, home, owner_proc
        ):
            continue  # inherited labels: someone ran a container from one of our images
        if not include_live and not _orphaned(lab, foreign_ttl_s):
            continue
        with contextlib.suppress(docker.errors.NotFound):
            client.api.remove_container(c["Id"], force=True, v=True)
            removed.append(f"container:{c['Id']}")
    removed += _collect_networks(
        client, older_than_s, run_id, include_live, foreign_ttl_s, home, owner_proc
    )
    if owner_proc is not None:
        return removed
    volumes = client.api.volumes(filters={"label": L.OWNER_FILTER}).get("Volumes") or []
    for v in volumes:
        if _selected(v.get("Labels") or {}, older_than_s, run_id, home):
            with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                # In use by a live container: the engine refuses, which is right.
                client.api.remove_volume(v["Name"])
                removed.append(f"volume:{v['Name']}")
    if images:
        removed += _collect_state_images(client, older_than_s, run_id, home)
    return removed


def _collect_networks(
    client: docker.DockerClient,
    older_than_s: float,
    run_id: str | None,
    include_live: bool,
    foreign_ttl_s: float | None,
    home: str | None,
    owner_proc: str | None = None,
) -> list[str]:
    """Services' private networks (`services.py`) whose owner is gone, once empty."""
    removed = []
    for n in client.api.networks(filters={"label": L.OWNER_FILTER}):
        lab = n.get("Labels") or {}
        if lab.get(L.SANDBOX) != n.get("Name") or not _selected(
            lab, older_than_s, run_id, home, owner_proc
        ):
            continue
        if not include_live and not _orphaned(lab, foreign_ttl_s):
            continue
        with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
            # APIError: a container is still attached; the next sweep takes it
            client.api.remove_network(n["Id"])
            removed.append(f"network:{n['Name']}")
    return removed


def _collect_state_images(
    client: docker.DockerClient, older_than_s: float, run_id: str | None, home: str | None
) -> list[str]:
    removed = []
    filters = {"label": [L.OWNER_FILTER, f"{L.KIND}=state"]}
    for img in client.api.images(filters=filters):
        if not _selected(img.get("Labels") or {}, older_than_s, run_id, home):
            continue
        with contextlib.suppress(docker.errors.ImageNotFound, docker.errors.APIError):
            # APIError: a container still uses it; it stays until that one is gone.
            client.api.remove_image(img["Id"], force=False)
            removed.append(f"image:{img['Id']}")
    return removed
