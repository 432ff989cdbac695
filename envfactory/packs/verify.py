"""Check a pack (folder or tar) against its manifest and signature; open it once it passes.

Invariants:
- nothing of a pack is used before every member's hash has been checked;
- the signature (pack.sig over pack.json) is checked before any member is read, and with
  a trust list (`signing.TrustedKeys`) an unsigned or untrusted pack goes no further;
- a tar is read in one pass against its manifest (`archive`): a member pack.json does
  not list is refused at its header, before a byte of it is written; extraction goes
  only into a fresh private folder, and what was extracted is what was hashed;
- a failed check raises one InvalidPack listing every problem, each naming its member.
"""

from __future__ import annotations

import tarfile
from dataclasses import dataclass
from pathlib import Path

from envfactory.core.errors import InvalidPack
from envfactory.core.models import PackManifest

from . import layout
from .archive import compression, read_tar
from .manifest import check_bounds, compare, parse_manifest
from .safety import PackLimits, iter_dir
from .signing import Signer, TrustedKeys, check_signature


@dataclass(frozen=True)
class VerifiedPack:
    """A pack whose members all match its manifest; `root` is a folder holding them."""

    manifest: PackManifest
    root: Path | None  # None when only the tar was checked, nothing extracted
    source: Path
    signer: Signer | None = None  # None: not signed


def is_tar(path: Path) -> bool:
    """A compressed file is taken for a tar (the reader reports what is wrong with it);
    an uncompressed one must start with a tar header."""
    if not path.is_file():
        return False
    try:
        return compression(path) != "none" or tarfile.is_tarfile(path)
    except OSError:
        return False


def _raise_if(problems: list[str], source: Path) -> None:
    if problems:
        listing = "\n  - ".join(problems)
        raise InvalidPack(
            f"{source}: pack failed verification ({len(problems)} problem"
            f"{'s' if len(problems) != 1 else ''}):\n  - {listing}",
            hint="re-export the pack from the store; do not edit a pack by hand",
        )


def _read_tar(
    source: Path, limits: PackLimits, dest: Path | None, trust: TrustedKeys | None
) -> VerifiedPack:
    signers: list[Signer | None] = []

    def accept(manifest: bytes, sig: bytes | None) -> None:
        signers.append(check_signature(manifest, sig, trust, str(source)))

    contents = read_tar(source, limits, dest, accept)
    _raise_if(compare(contents.manifest, contents.found), source)
    return VerifiedPack(contents.manifest, dest, source, signers[0])


def _small_file(path: Path, cap: int) -> bytes | None:
    if not path.is_file() or path.is_symlink():
        return None
    if path.stat().st_size > cap:
        raise InvalidPack(f"{path}: larger than {cap} bytes")
    return path.read_bytes()


def _read_dir(source: Path, limits: PackLimits, trust: TrustedKeys | None) -> VerifiedPack:
    raw = _small_file(source / layout.MANIFEST, limits.max_manifest_bytes)
    sig = _small_file(source / layout.SIGNATURE, limits.max_signature_bytes)
    manifest = parse_manifest(raw, str(source))
    signer = check_signature(raw or b"", sig, trust, str(source))
    check_bounds(manifest, limits, str(source))
    found = {d.path: d for d in iter_dir(source, limits)}
    _raise_if(compare(manifest, found), source)
    return VerifiedPack(manifest, source, source, signer)


def verify_pack(
    path: Path, limits: PackLimits | None = None, trust: TrustedKeys | None = None
) -> VerifiedPack:
    """Check every member of the pack at `path` (a folder or a tar); extract nothing."""
    limits = limits or PackLimits()
    path = Path(path)
    if path.is_dir():
        return _read_dir(path, limits, trust)
    if is_tar(path):
        return _read_tar(path, limits, None, trust)
    raise InvalidPack(f"{path}: neither a pack folder nor a tar archive")


def open_verified(
    path: Path, workdir: Path, limits: PackLimits | None = None, trust: TrustedKeys | None = None
) -> VerifiedPack:
    """Verify a pack and give a folder to read it from: the folder itself, or the tar
    extracted into `workdir` (which must be empty or missing)."""
    limits = limits or PackLimits()
    path = Path(path)
    if path.is_dir():
        return _read_dir(path, limits, trust)
    if not is_tar(path):
        raise InvalidPack(f"{path}: neither a pack folder nor a tar archive")
    workdir.mkdir(parents=True, exist_ok=True)
    if any(workdir.iterdir()):
        raise InvalidPack(f"{workdir}: extraction folder is not empty")
    return _read_tar(path, limits, workdir, trust)
