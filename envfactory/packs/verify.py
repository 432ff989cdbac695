"""Check a pack (folder or tar) against its manifest; open it for reading once it passes.

Invariants:
- nothing of a pack is used before every member's hash has been checked;
- a tar is hashed while it is read, in one pass, under the safety rules of `safety`;
  extraction goes only into a fresh private folder, and what was extracted is what was
  hashed (no second read of the archive);
- a failed check raises one InvalidPack listing every problem, each naming its member.
"""

from __future__ import annotations

import tarfile
from dataclasses import dataclass
from pathlib import Path

from envfactory.core.errors import InvalidPack
from envfactory.core.models import PackManifest

from . import layout
from .manifest import compare, parse_manifest
from .safety import FileDigest, PackLimits, iter_dir, iter_tar


@dataclass(frozen=True)
class VerifiedPack:
    """A pack whose members all match its manifest; `root` is a folder holding them."""

    manifest: PackManifest
    root: Path | None  # None when only the tar was checked, nothing extracted
    source: Path


def is_tar(path: Path) -> bool:
    return path.is_file() and tarfile.is_tarfile(path)


def _raise_if(problems: list[str], source: Path) -> None:
    if problems:
        listing = "\n  - ".join(problems)
        raise InvalidPack(
            f"{source}: pack failed verification ({len(problems)} problem"
            f"{'s' if len(problems) != 1 else ''}):\n  - {listing}",
            hint="re-export the pack from the store; do not edit a pack by hand",
        )


def _read_tar(source: Path, limits: PackLimits, dest: Path | None) -> VerifiedPack:
    found: dict[str, FileDigest] = {}
    raw: bytes | None = None
    for digest, content in iter_tar(source, limits, dest):
        found[digest.path] = digest
        if content is not None:
            raw = content
    manifest = parse_manifest(raw, str(source))
    _raise_if(compare(manifest, found), source)
    return VerifiedPack(manifest, dest, source)


def _read_dir(source: Path, limits: PackLimits) -> VerifiedPack:
    found = {d.path: d for d in iter_dir(source, limits)}
    manifest_path = source / layout.MANIFEST
    if layout.MANIFEST in found and found[layout.MANIFEST].size > limits.max_manifest_bytes:
        raise InvalidPack(f"{manifest_path}: larger than {limits.max_manifest_bytes} bytes")
    raw = manifest_path.read_bytes() if layout.MANIFEST in found else None
    manifest = parse_manifest(raw, str(source))
    _raise_if(compare(manifest, found), source)
    return VerifiedPack(manifest, source, source)


def verify_pack(path: Path, limits: PackLimits | None = None) -> VerifiedPack:
    """Check every member of the pack at `path` (a folder or a tar); extract nothing."""
    limits = limits or PackLimits()
    path = Path(path)
    if path.is_dir():
        return _read_dir(path, limits)
    if is_tar(path):
        return _read_tar(path, limits, None)
    raise InvalidPack(f"{path}: neither a pack folder nor a tar archive")


def open_verified(path: Path, workdir: Path, limits: PackLimits | None = None) -> VerifiedPack:
    """Verify a pack and give a folder to read it from: the folder itself, or the tar
    extracted into `workdir` (which must be empty or missing)."""
    limits = limits or PackLimits()
    path = Path(path)
    if path.is_dir():
        return _read_dir(path, limits)
    if not is_tar(path):
        raise InvalidPack(f"{path}: neither a pack folder nor a tar archive")
    workdir.mkdir(parents=True, exist_ok=True)
    if any(workdir.iterdir()):
        raise InvalidPack(f"{workdir}: extraction folder is not empty")
    return _read_tar(path, limits, workdir)
