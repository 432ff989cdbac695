"""Snapshots in a fraction of a second: the overlay upper directory loaded as one layer.

`docker commit` on this engine (fuse-overlayfs, naive diff driver) walks the whole root
filesystem twice: seconds per snapshot, whatever changed. The container's upper
directory *is* the change, so we tar it in Docker's layer format (whiteouts as `.wh.`
entries, opaque directories as `.wh..wh..opq`), describe an image whose layers are the
parent image's plus this one, and `docker load` it. The load only reads the new layer;
the parent's layers are already in the engine's layer store.

Invariants:
- the container is paused while its upper directory is read, as `docker commit` does;
- the image's config is the parent *image's* config plus our labels (not the
  container's runtime overrides), so it starts like the image it came from;
- anything this module does not model exactly (another storage driver, a remote engine,
  kernel overlay redirects, a failed load) returns None and the caller commits instead.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import tarfile
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import docker
import docker.errors

from .overlay_diff import DRIVERS

OPAQUE = ".wh..wh..opq"
INTERNAL = {".wh..opq"}  # fuse-overlayfs's own marker; the layer format uses OPAQUE
TMP_DIR = "/var/tmp"


class Unsupported(Exception):
    """This layout needs `docker commit`."""


def layer_snapshot(
    client: docker.DockerClient,
    container_id: str,
    *,
    repo: str,
    tag: str,
    labels: dict[str, str],
    exclude: frozenset[str],
) -> str | None:
    """The new image id, or None when the caller should fall back to `docker commit`."""
    api = client.api
    info = api.inspect_container(container_id)
    graph = info.get("GraphDriver") or {}
    upper = (graph.get("Data") or {}).get("UpperDir") or ""
    if graph.get("Name") not in DRIVERS or not os.access(upper, os.R_OK):
        return None
    parent = api.inspect_image(info["Image"])
    with tempfile.TemporaryDirectory(prefix="envfactory-snap-", dir=TMP_DIR) as tmp:
        layer_path = Path(tmp) / "layer.tar"
        api.pause(container_id)
        try:
            _write_layer(Path(upper), layer_path, exclude)
        except (Unsupported, OSError):
            return None
        finally:
            api.unpause(container_id)
        config = _config(parent, _sha256_file(layer_path), labels)
        archive = Path(tmp) / "image.tar"
        _write_image(archive, config, layer_path, f"{repo}:{tag}")
        try:
            with archive.open("rb") as f:
                _consume(api.load_image(f))
        except docker.errors.APIError:
            return None
    image_id = "sha256:" + hashlib.sha256(config).hexdigest()
    try:
        api.inspect_image(image_id)  # the proof that the load did what we meant
    except docker.errors.ImageNotFound:
        return None
    return image_id


def _write_layer(upper: Path, out: Path, exclude: frozenset[str]) -> None:
    with tarfile.open(out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirnames, filenames in os.walk(upper):
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, upper)
            if rel_dir != "." and _xattr(dirpath, "trusted.overlay.redirect"):
                raise Unsupported(f"kernel overlay redirect at /{rel_dir}")
            opaque_xattr = _xattr(dirpath, "trusted.overlay.opaque") == b"y"
            if rel_dir != "." and opaque_xattr and OPAQUE not in filenames:
                tar.addfile(_marker(os.path.join(rel_dir, OPAQUE)))
            for name in sorted(dirnames + filenames):
                arc = os.path.normpath(os.path.join(rel_dir, name))
                if name in INTERNAL or "/" + arc in exclude:
                    continue
                _add(tar, os.path.join(dirpath, name), arc)


def _add(tar: tarfile.TarFile, full: str, arc: str) -> None:
    st = os.lstat(full)
    if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # kernel-style whiteout
        head, name = os.path.split(arc)
        tar.addfile(_marker(os.path.join(head, ".wh." + name)))
        return
    info = tar.gettarinfo(full, arcname=arc)
    if info is None:  # a socket: Docker's own export skips those too
        return
    info.uname = info.gname = ""
    if info.isreg():
        with open(full, "rb") as f:
            tar.addfile(info, f)
    else:
        tar.addfile(info)


def _marker(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mode = 0o600
    return info


def _xattr(path: str, key: str) -> bytes | None:
    try:
        return os.getxattr(path, key, follow_symlinks=False)
    except OSError:
        return None


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def _config(parent: dict[str, Any], diff_id: str, labels: dict[str, str]) -> bytes:
    cfg = dict(parent.get("Config") or {})
    cfg["Labels"] = {**(cfg.get("Labels") or {}), **labels}
    created = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    return json.dumps(
        {
            "architecture": parent.get("Architecture", "amd64"),
            "os": parent.get("Os", "linux"),
            "created": created,
            "config": cfg,
            "rootfs": {"type": "layers", "diff_ids": [*parent["RootFS"]["Layers"], diff_id]},
            "history": [{"created": created, "created_by": "envfactory snapshot"}],
        },
        sort_keys=True,
    ).encode()


def _write_image(archive: Path, config: bytes, layer: Path, ref: str) -> None:
    """A `docker save` archive holding only the new layer: the load skips layers the
    engine already has, so the parent's need not be in it."""
    diff_ids = json.loads(config)["rootfs"]["diff_ids"]
    layers = [f"{d.split(':', 1)[1]}/layer.tar" for d in diff_ids]
    cfg_name = hashlib.sha256(config).hexdigest() + ".json"
    manifest = json.dumps([{"Config": cfg_name, "RepoTags": [ref], "Layers": layers}]).encode()
    with tarfile.open(archive, mode="w") as tar:
        for name, data in ((cfg_name, config), ("manifest.json", manifest)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        tar.add(layer, arcname=layers[-1])


def _consume(stream: Any) -> None:
    """load_image answers lazily; read it all and surface an error it reports."""
    for chunk in stream:
        if isinstance(chunk, dict) and ("error" in chunk or "message" in chunk):
            raise docker.errors.APIError(str(chunk.get("error") or chunk.get("message")))
