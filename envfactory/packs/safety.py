"""Reading untrusted packs safely: member names, links, sizes and counts.

A pack may come from anywhere, so nothing in it is trusted until it has passed here.
Invariants:
- a member name is a relative POSIX path without `..`, NUL, backslashes or a drive; an
  absolute name is refused, never "made relative";
- a pack holds only regular files and folders: a symlink or hardlink that points outside
  the pack is refused as escaping, any other link as not allowed (links let a verified
  member be swapped after the check); devices and FIFOs are refused;
- a name that occurs twice in a tar is refused (the later copy would silently win);
- member count, each member's size and the total size are capped *before* and *while*
  bytes are written (a header can lie about nothing we do not also count);
- extraction writes only below the destination, with exclusive creates, never through
  tarfile.extractall.

Every refusal is an `InvalidPack` that names the member and says what is wrong.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import stat
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from envfactory.core.errors import InvalidPack

_CHUNK = 1 << 20


@dataclass(frozen=True)
class PackLimits:
    """Caps against archive bombs. Images saved with `docker save` are large, hence GiB."""

    max_members: int = 20_000
    max_member_bytes: int = 16 * 2**30
    max_total_bytes: int = 64 * 2**30
    max_manifest_bytes: int = 64 * 2**20  # pack.json is read into memory: cap it on its own


@dataclass(frozen=True)
class FileDigest:
    path: str
    sha256: str
    size: int


def check_member_name(name: str) -> str:
    """The normalised relative POSIX path for `name`, or InvalidPack saying why not."""
    if not name or name in (".", "./"):
        raise InvalidPack(f"pack member {name!r}: empty name")
    if "\x00" in name or "\\" in name:
        raise InvalidPack(f"pack member {name!r}: NUL or backslash in the name")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise InvalidPack(
            f"pack member {name!r}: absolute path",
            hint="pack members must be relative paths inside the pack",
        )
    parts = PurePosixPath(name).parts
    if ".." in parts:
        raise InvalidPack(
            f"pack member {name!r}: path traversal ('..')",
            hint="pack members must stay inside the pack",
        )
    clean = posixpath.normpath(name)
    if clean in (".", ""):
        raise InvalidPack(f"pack member {name!r}: empty name")
    return clean


def _link_escapes(member: str, target: str, *, hard: bool) -> bool:
    if target.startswith("/"):
        return True
    # A symlink's target is relative to its own folder; a hardlink's to the archive root.
    base = "" if hard else posixpath.dirname(member)
    resolved = posixpath.normpath(posixpath.join(base, target))
    return resolved == ".." or resolved.startswith("../")


def refuse_link(member: str, target: str, *, hard: bool) -> InvalidPack:
    kind = "hardlink" if hard else "symlink"
    if _link_escapes(member, target, hard=hard):
        return InvalidPack(
            f"pack member {member!r}: {kind} to {target!r} escapes the pack",
            hint="a pack holds only regular files; rebuild it without links",
        )
    return InvalidPack(
        f"pack member {member!r}: {kind} to {target!r} is not allowed in a pack",
        hint="a pack holds only regular files; rebuild it without links",
    )


class _Budget:
    """Counts members and bytes against the limits; shared by tar and folder readers."""

    def __init__(self, limits: PackLimits) -> None:
        self.limits = limits
        self.members = 0
        self.total = 0

    def member(self, name: str, declared: int) -> None:
        self.members += 1
        if self.members > self.limits.max_members:
            raise InvalidPack(
                f"pack has more than {self.limits.max_members} members (at {name!r})",
                hint="an archive bomb, or raise PackLimits.max_members",
            )
        self.size(name, declared, declared)

    def size(self, name: str, member_bytes: int, add: int) -> None:
        if member_bytes > self.limits.max_member_bytes:
            raise InvalidPack(
                f"pack member {name!r}: {member_bytes} bytes exceeds the "
                f"{self.limits.max_member_bytes}-byte member limit",
                hint="an archive bomb, or raise PackLimits.max_member_bytes",
            )
        self.total += add
        if self.total > self.limits.max_total_bytes:
            raise InvalidPack(
                f"pack exceeds {self.limits.max_total_bytes} bytes in total (at {name!r})",
                hint="an archive bomb, or raise PackLimits.max_total_bytes",
            )


def _copy_hashing(src: IO[bytes], dst: IO[bytes] | None, name: str, declared: int) -> FileDigest:
    h = hashlib.sha256()
    n = 0
    while chunk := src.read(_CHUNK):
        n += len(chunk)
        if n > declared:  # never trust the header alone
            raise InvalidPack(f"pack member {name!r}: more bytes than its header declares")
        h.update(chunk)
        if dst is not None:
            dst.write(chunk)
    return FileDigest(name, h.hexdigest(), n)


def iter_tar(
    tar_path: Path, limits: PackLimits, dest: Path | None = None
) -> Iterator[tuple[FileDigest, bytes | None]]:
    """Walk a tar safely, hashing every regular file; with `dest`, also extract it there.

    Yields (digest, content-if-it-is-pack.json) so a reader gets the manifest in one pass.
    """
    budget = _Budget(limits)
    seen: set[str] = set()
    try:
        tf = tarfile.open(tar_path, "r:*")
    except (tarfile.TarError, OSError) as e:
        raise InvalidPack(f"{tar_path}: not a readable tar archive ({e})") from e
    with tf:
        try:
            for info in tf:
                digest = _tar_member(tf, info, budget, seen, dest)
                if digest is not None:
                    yield digest, _maybe_manifest(digest, dest, tf, info)
        except tarfile.TarError as e:
            raise InvalidPack(f"{tar_path}: corrupt tar archive ({e})") from e


def _tar_member(
    tf: tarfile.TarFile,
    info: tarfile.TarInfo,
    budget: _Budget,
    seen: set[str],
    dest: Path | None,
) -> FileDigest | None:
    name = check_member_name(info.name)
    if info.issym() or info.islnk():
        raise refuse_link(name, info.linkname, hard=info.islnk())
    if not (info.isreg() or info.isdir()):
        raise InvalidPack(f"pack member {name!r}: not a regular file or folder (device or FIFO)")
    if name in seen:
        raise InvalidPack(f"pack member {name!r}: occurs twice in the archive")
    seen.add(name)
    budget.member(name, info.size if info.isreg() else 0)
    if name == "pack.json" and info.size > budget.limits.max_manifest_bytes:
        raise InvalidPack(
            f"pack.json: {info.size} bytes exceeds the {budget.limits.max_manifest_bytes}-byte limit"
        )
    if info.isdir():
        if dest is not None:
            (dest / name).mkdir(parents=True, exist_ok=True)
        return None
    src = tf.extractfile(info)
    assert src is not None  # a regular member always has a file object
    if dest is None:
        return _copy_hashing(src, None, name, info.size)
    target = dest / name
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "xb") as out:
        digest = _copy_hashing(src, out, name, info.size)
    # Keep only the executable bit: no setuid, no world-writable files from an archive.
    target.chmod(0o755 if info.mode & 0o111 else 0o644)
    return digest


def _maybe_manifest(
    digest: FileDigest, dest: Path | None, tf: tarfile.TarFile, info: tarfile.TarInfo
) -> bytes | None:
    if digest.path != "pack.json":
        return None
    if dest is not None:
        return (dest / "pack.json").read_bytes()
    f = tf.extractfile(info)
    assert f is not None
    return f.read()


def iter_dir(root: Path, limits: PackLimits) -> Iterator[FileDigest]:
    """Walk a pack folder safely (no link followed), hashing every regular file."""
    budget = _Budget(limits)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for entry in sorted(dirnames) + sorted(filenames):
            full = Path(dirpath) / entry
            rel = full.relative_to(root).as_posix()
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                raise refuse_link(rel, os.readlink(full), hard=False)
            if stat.S_ISDIR(st.st_mode):
                continue
            if not stat.S_ISREG(st.st_mode):
                raise InvalidPack(f"pack member {rel!r}: not a regular file (device or FIFO)")
            if st.st_nlink > 1:
                raise InvalidPack(
                    f"pack member {rel!r}: hardlink ({st.st_nlink} names share it, possibly "
                    "outside the pack)",
                    hint="copy the pack folder (cp -r, not cp -l) or use the .tar form",
                )
            budget.member(rel, st.st_size)
            with open(full, "rb") as f:
                yield _copy_hashing(f, None, rel, st.st_size)
        dirnames.sort()


def safe_extract(tar_path: Path, dest: Path, limits: PackLimits) -> dict[str, FileDigest]:
    """Extract a pack tar below `dest` (which must be empty) and return every file's digest."""
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise InvalidPack(f"{dest}: extraction folder is not empty")
    return {d.path: d for d, _ in iter_tar(tar_path, limits, dest)}
