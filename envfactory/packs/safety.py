"""Reading untrusted packs safely: member names, links, sizes and counts.

A pack may come from anywhere, so nothing in it is trusted until it has passed here
(folders are walked by `iter_dir`; tars are streamed against their manifest by `archive`).
Invariants:
- a member name is a relative POSIX path without `..`, NUL, control characters,
  backslashes or a drive, each part at most 255 bytes and the whole at most 1024 (longer
  names cannot be created on common file systems); an absolute name is refused, never
  "made relative";
- a pack holds only regular files and folders: a symlink or hardlink that points outside
  the pack is refused as escaping, any other link as not allowed (links let a verified
  member be swapped after the check); devices and FIFOs are refused;
- member count, each member's size and the total size are capped; bytes are counted
  while they are read (a header can lie about nothing we do not also count).

Every refusal is an `InvalidPack` that names the member and says what is wrong.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from envfactory.core.errors import InvalidPack

_CHUNK = 1 << 20
MAX_NAME_PART_BYTES = 255  # NAME_MAX on Linux and macOS file systems
MAX_NAME_BYTES = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class PackLimits:
    """Caps against archive bombs. Images saved with `docker save` are large, hence GiB."""

    max_members: int = 20_000
    max_member_bytes: int = 16 * 2**30
    max_total_bytes: int = 64 * 2**30
    max_manifest_bytes: int = 64 * 2**20  # pack.json is read into memory: cap it on its own
    max_signature_bytes: int = 64 * 2**10
    #: a compressed tar may unpack to at most this many times its own size (beyond the
    #: floor): packs compress 2-10x, a stream of zeros 1000x
    max_expansion: int = 100
    expansion_floor_bytes: int = 64 * 2**20


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
        raise InvalidPack(f"pack member {shown(name)}: NUL or backslash in the name")
    if _CONTROL.search(name):
        raise InvalidPack(
            f"pack member {shown(name)}: control character in the name",
            hint="pack members are plain file names",
        )
    _check_name_length(name)
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


def shown(name: str) -> str:
    """A name for a message: quoted, at most about 80 characters."""
    return repr(name if len(name) <= 80 else name[:60] + "…" + name[-16:])


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))


def _check_name_length(name: str) -> None:
    part, total = max(_utf8_len(p) for p in name.split("/")), _utf8_len(name)
    if part > MAX_NAME_PART_BYTES:
        what = f"one part is {part} bytes (at most {MAX_NAME_PART_BYTES})"
    elif total > MAX_NAME_BYTES:
        what = f"{total} bytes (at most {MAX_NAME_BYTES})"
    else:
        return
    raise InvalidPack(
        f"pack member {shown(name)}: name too long, {what}",
        hint="file systems cannot hold such a name; shorten it",
    )


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


def copy_hashing(src: IO[bytes], dst: IO[bytes] | None, name: str, declared: int) -> FileDigest:
    """Hash `src` (copying it to `dst`), refusing more bytes than `declared`."""
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
                yield copy_hashing(f, None, rel, st.st_size)
        dirnames.sort()
