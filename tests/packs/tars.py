"""Hand-made pack archives for the safety tests: a manifest listing chosen files, and tars
holding whatever a test needs (links, devices, lies), in the order it gives."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

from envfactory.core.models import PackManifest, PackMember
from envfactory.packs.manifest import pack_id

Entry = tarfile.TarInfo | tuple[str, bytes]


def manifest_bytes(files: dict[str, bytes]) -> bytes:
    """A valid pack.json listing `files` (no environments)."""
    members = tuple(
        PackMember(path=p, sha256=hashlib.sha256(d).hexdigest(), size=len(d))
        for p, d in sorted(files.items())
    )
    return (
        PackManifest(id=pack_id(members), created_by="test", environments=(), members=members)
        .model_dump_json()
        .encode()
    )


def write_tar(path: Path, entries: list[Entry], mode: str = "w") -> Path:
    with tarfile.open(path, mode) as tf:  # type: ignore[call-overload]
        for e in entries:
            if isinstance(e, tarfile.TarInfo):
                tf.addfile(e)
            else:
                info = tarfile.TarInfo(e[0])
                info.size = len(e[1])
                tf.addfile(info, io.BytesIO(e[1]))
    return path


def with_manifest(entries: list[Entry], listed: dict[str, bytes] | None = None) -> list[Entry]:
    """`entries` after a pack.json listing `listed` (default: every plain file entry)."""
    if listed is None:
        listed = {e[0]: e[1] for e in entries if isinstance(e, tuple)}
    return [("pack.json", manifest_bytes(listed)), *entries]
