"""Reading a pack tar as one stream, checked against its manifest before a byte is written.

The exporter writes pack.json first, then pack.sig when signed, then the members; the
reader requires that order, so it knows what to expect before it meets any member.
Invariants:
- pack.json (at most `max_manifest_bytes`) is parsed, its bounds checked, and `accept`
  (the signature and trust decision) called before the first member is read; a plain
  tar must be at least as large as what the manifest lists (else it is truncated), a
  compressed one may expand at most `max_expansion` times, and the destination must have
  the room;
- each member is checked at its header: a safe name, a regular file or a folder, seen
  once, listed in pack.json (a folder: holding a listed file), no larger than listed. A
  refusal happens before any of its bytes is written, so extraction writes at most the
  manifest's total, which was bounded before the first write;
- an archive that ends early (inside a member, inside the compressed stream, or before
  its end-of-archive block) is reported as "archive is truncated";
- extraction writes only below `dest`, with exclusive creates, never through
  tarfile.extractall; an OS error while writing names the member.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import shutil
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

from envfactory.core.errors import InvalidPack
from envfactory.core.models import PackManifest, PackMember

from . import layout
from .manifest import check_bounds, folders_of, parse_manifest
from .safety import FileDigest, PackLimits, check_member_name, copy_hashing, refuse_link

#: (pack.json bytes, pack.sig bytes or None) -> raises InvalidPack, or accepts the pack.
Accept = Callable[[bytes, bytes | None], None]
T = TypeVar("T")

_BLOCK = tarfile.BLOCKSIZE
_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz"}
#: Damage the decompressors and tarfile report (bz2 and gzip report theirs as OSError).
_CORRUPT = (tarfile.TarError, zlib.error, lzma.LZMAError, OSError)


class _LastBlock:
    """Wraps the decompressed stream and remembers the last header-sized read, so the end
    of the archive can be told apart from a cut: tarfile stops quietly on both."""

    def __init__(self, f: Any) -> None:
        self.f, self.last = f, b""

    def read(self, n: int = -1) -> bytes:
        data: bytes = self.f.read(n)
        if n == _BLOCK:
            self.last = data
        return data

    def seek(self, *args: int) -> int:
        return int(self.f.seek(*args))

    def tell(self) -> int:
        return int(self.f.tell())


def compression(path: Path) -> str:
    with open(path, "rb") as f:
        head = f.read(6)
    return next((kind for magic, kind in _MAGIC.items() if head.startswith(magic)), "none")


def _decompressed(path: Path, kind: str) -> IO[bytes]:
    opener: dict[str, Callable[[Path], Any]] = {
        "gzip": gzip.open,
        "bzip2": bz2.open,
        "xz": lzma.open,
        "none": lambda p: open(p, "rb"),
    }
    return opener[kind](path)  # type: ignore[no-any-return]


def truncated(source: Path, detail: str) -> InvalidPack:
    return InvalidPack(
        f"{source}: archive is truncated ({detail})",
        hint="copy or download the pack again; it did not arrive whole",
    )


@dataclass
class _Stream:
    source: Path
    limits: PackLimits
    dest: Path | None
    accept: Accept
    kind: str
    manifest: PackManifest | None = None
    manifest_raw: bytes = b""
    signature_raw: bytes | None = None
    accepted: bool = False
    expected: dict[str, PackMember] = field(default_factory=dict)
    folders: set[str] = field(default_factory=set)
    seen: set[str] = field(default_factory=set)
    found: dict[str, FileDigest] = field(default_factory=dict)
    last_name: str = ""

    def run(
        self, tf: tarfile.TarFile, blocks: _LastBlock
    ) -> tuple[PackManifest, dict[str, FileDigest]]:
        for index, info in enumerate(tf):
            name = self._header(info)
            if index == 0:
                self._read_manifest(tf, info, name)
            elif index == 1 and name == layout.SIGNATURE:
                self.signature_raw = self._small(tf, info, name, self.limits.max_signature_bytes)
            else:
                self._accept()
                self._member(tf, info, name)
            self.last_name = name
        if self.manifest is None:
            raise InvalidPack(
                f"{self.source}: no pack.json (the archive is empty)",
                hint="is this an envfactory pack?",
            )
        self._accept()
        self._check_end(blocks)
        return self.manifest, self.found

    def _header(self, info: tarfile.TarInfo) -> str:
        """Checks every header must pass, whatever the member: name, type, uniqueness."""
        name = check_member_name(info.name)
        if info.issym() or info.islnk():
            raise refuse_link(name, info.linkname, hard=info.islnk())
        if not (info.isreg() or info.isdir()):
            raise InvalidPack(
                f"pack member {name!r}: not a regular file or folder (device or FIFO)"
            )
        if name in self.seen:
            raise InvalidPack(f"pack member {name!r}: occurs twice in the archive")
        self.seen.add(name)
        return name

    def _small(self, tf: tarfile.TarFile, info: tarfile.TarInfo, name: str, cap: int) -> bytes:
        if not info.isreg():
            raise InvalidPack(f"{self.source}: {name} is not a regular file")
        if info.size > cap:
            raise InvalidPack(f"{name}: {info.size} bytes exceeds the {cap}-byte limit")
        src = tf.extractfile(info)
        assert src is not None  # a regular member always has a file object
        data = self._read_all(src, name, info.size)
        if len(data) != info.size:
            raise truncated(self.source, f"{name} is cut short")
        return data

    def _read_all(self, src: IO[bytes], name: str, size: int) -> bytes:
        try:
            return src.read(size)
        except (EOFError, tarfile.ReadError) as e:
            raise truncated(self.source, f"{name} is cut short: {e}") from e

    def _read_manifest(self, tf: tarfile.TarFile, info: tarfile.TarInfo, name: str) -> None:
        if name != layout.MANIFEST:
            raise InvalidPack(
                f"{self.source}: no pack.json at the start of the archive "
                f"(the first member is {name!r})",
                hint="export packs with `envfactory pack export`, which writes pack.json first",
            )
        self.manifest_raw = self._small(tf, info, name, self.limits.max_manifest_bytes)
        self.manifest = parse_manifest(self.manifest_raw, str(self.source))
        self.expected = {m.path: m for m in self.manifest.members}
        self.folders = folders_of(self.expected)

    def _accept(self) -> None:
        """Once, before the first member: signature and trust, then the size bounds."""
        if self.accepted or self.manifest is None:
            return
        self.accept(self.manifest_raw, self.signature_raw)
        total = check_bounds(self.manifest, self.limits, str(self.source))
        self._check_size(total)
        if self.dest is not None:
            self._check_room(total)
            self._write(layout.MANIFEST, self.manifest_raw)
            if self.signature_raw is not None:
                self._write(layout.SIGNATURE, self.signature_raw)
        self.accepted = True

    def _check_size(self, total: int) -> None:
        size = self.source.stat().st_size
        if self.kind == "none" and total > size:
            raise truncated(
                self.source, f"pack.json lists {total} bytes of members, the file holds {size}"
            )
        cap = max(self.limits.max_expansion * size, self.limits.expansion_floor_bytes)
        if self.kind != "none" and total > cap:
            raise InvalidPack(
                f"{self.source}: pack.json lists {total} bytes of members in a {size}-byte "
                f"{self.kind} archive, more than {self.limits.max_expansion} times its size "
                "(an archive bomb?)",
                hint="raise PackLimits.max_expansion if this pack is genuine",
            )

    def _check_room(self, total: int) -> None:
        assert self.dest is not None
        self.dest.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(self.dest).free
        if total > free:
            raise InvalidPack(
                f"{self.dest}: extracting the pack needs {total} bytes, {free} are free",
                hint="free some space or set TMPDIR to a larger disk",
            )

    def _member(self, tf: tarfile.TarFile, info: tarfile.TarInfo, name: str) -> None:
        if info.isdir():
            if name not in self.folders:
                raise InvalidPack(
                    f"pack member {name!r}: a folder holding no file that pack.json lists",
                    hint="re-export the pack",
                )
            if self.dest is not None:
                folder = self.dest / name
                self._guard_os(name, lambda: folder.mkdir(parents=True, exist_ok=True))
            return
        listed = self.expected.get(name)
        if listed is None:
            where = "a folder of listed members" if name in self.folders else "not listed"
            raise InvalidPack(
                f"member {name}: {where} in pack.json, but a file in the archive "
                "— it was added after export",
                hint="re-export the pack from the store; do not edit a pack by hand",
            )
        if info.size > listed.size:
            raise InvalidPack(
                f"member {name}: {info.size} bytes in the archive, pack.json lists "
                f"{listed.size} — it was changed after export"
            )
        src = tf.extractfile(info)
        assert src is not None
        digest = self._copy(src, name, info)
        if digest.size < info.size:
            raise truncated(self.source, f"member {name} has {digest.size} of {info.size} bytes")
        self.found[name] = digest

    def _copy(self, src: IO[bytes], name: str, info: tarfile.TarInfo) -> FileDigest:
        try:
            if self.dest is None:
                return copy_hashing(src, None, name, info.size)
            target = self.dest / name
            with self._open(name, target) as out:
                digest = copy_hashing(src, out, name, info.size)
            # Keep only the executable bit: no setuid, no world-writable files from an archive.
            target.chmod(0o755 if info.mode & 0o111 else 0o644)
            return digest
        except (EOFError, tarfile.ReadError) as e:
            raise truncated(self.source, f"member {name} is cut short: {e}") from e
        except OSError as e:  # a full disk, or a damaged compressed stream
            raise InvalidPack(f"pack member {name!r}: cannot be read or written ({e})") from e

    def _open(self, name: str, target: Path) -> IO[bytes]:
        def make() -> IO[bytes]:
            target.parent.mkdir(parents=True, exist_ok=True)
            return open(target, "xb")

        return self._guard_os(name, make)

    def _write(self, name: str, data: bytes) -> None:
        with self._open(name, self.dest / name) as out:  # type: ignore[operator]
            out.write(data)

    def _guard_os(self, name: str, action: Callable[[], T]) -> T:
        try:
            return action()
        except OSError as e:
            raise InvalidPack(
                f"pack member {name!r}: cannot be extracted ({e.strerror})",
                hint="a file and a folder of the same name, or a name the file system refuses",
            ) from e

    def _check_end(self, blocks: _LastBlock) -> None:
        if blocks.last == bytes(_BLOCK):
            return
        after = f"after member {self.last_name}" if self.last_name else "at its start"
        if len(blocks.last) < _BLOCK:
            missing = len(set(self.expected) - set(self.found))
            raise truncated(
                self.source,
                f"it ends {after} without its end-of-archive block"
                + (f"; {missing} listed members never came" if missing else ""),
            )
        raise InvalidPack(f"{self.source}: corrupt tar archive (a damaged header {after})")


@dataclass(frozen=True)
class TarContents:
    manifest: PackManifest
    found: dict[str, FileDigest]


def read_tar(source: Path, limits: PackLimits, dest: Path | None, accept: Accept) -> TarContents:
    """Stream the tar at `source`, hashing each member (extracting it under `dest` when
    given); InvalidPack at the first refusal. Hash mismatches are left to the caller."""
    kind = compression(source)
    try:
        raw = _decompressed(source, kind)
    except OSError as e:
        raise InvalidPack(f"{source}: cannot be read ({e.strerror})") from e
    blocks = _LastBlock(raw)
    stream = _Stream(source, limits, dest, accept, kind)
    try:
        with raw, tarfile.open(fileobj=blocks, mode="r:") as tf:  # type: ignore[call-overload]
            manifest, found = stream.run(tf, blocks)
    except EOFError as e:
        raise truncated(source, f"the {kind} stream ends early: {e}") from e
    except _CORRUPT as e:
        raise InvalidPack(f"{source}: not a readable tar archive ({e})") from e
    return TarContents(manifest, found)
