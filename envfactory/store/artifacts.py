"""Content-addressed artifact store: large things (files, build contexts, logs, trajectories)
live here under their sha256; the database and Temporal payloads carry only the keys.

Layout: ``<root>/ab/cdef…`` (the first two hex digits name a shard directory), temporary
files in ``<root>/tmp`` — inside the root, so always on the same filesystem as their target.

Invariants:
- A key is the sha256 of exactly the bytes stored under it; a file is never modified after
  it appears (it is made read-only).
- A write is atomic: bytes go to a unique temporary file, are fsynced, then ``os.replace``d
  into place and the shard directory fsynced. A reader sees the whole artifact or nothing.
- Concurrent writers (threads or processes) of the same content are safe: each writes its
  own temporary file, the renames are atomic and the content identical, so the last one
  wins harmlessly. Temporary files are unique (``mkstemp``) and removed on failure.
- Reads can re-hash (``verify=True``) to catch disk corruption or tampering.

`S3ArtifactStore` keeps the same contract over a bucket of an S3-compatible service
(``ENVFACTORY_ARTIFACTS__BACKEND=s3``), so workers on several hosts share no filesystem:
object names are the local layout's (``<prefix>ab/cdef…``), a PUT is atomic and carries
the sha256 for the server to check, and concurrent writers of the same content write
identical objects. Its ``root`` is a local cache for `path` / `extract_dir`, filled by
downloads that are hashed before they are published there.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO, cast

from envfactory.core.errors import InvalidInput, NotFound, StoreError
from envfactory.core.models.base import SHA256_RE
from envfactory.core.settings import Settings

from .s3_bucket import S3Bucket

CHUNK = 1 << 20


class ArtifactStore:
    def __init__(self, root: Path | str, *, verify_reads: bool = False) -> None:
        self.root = Path(root)
        self.verify_reads = verify_reads
        self._tmp = self.root / "tmp"

    @classmethod
    def from_settings(cls, settings: Settings) -> ArtifactStore:
        """The store the settings choose: local under the home directory, or an S3 bucket
        (checked here, so a wrong bucket or endpoint fails at start, naming the setting)."""
        cfg = settings.artifacts
        if cfg.backend == "local":
            return ArtifactStore(settings.artifacts_dir)
        bucket = S3Bucket.from_settings(cfg)
        bucket.check()
        return S3ArtifactStore(
            bucket, prefix=cfg.s3_prefix, cache_dir=settings.home / "artifact-cache"
        )

    # -- writing -------------------------------------------------------------------------

    def put_bytes(self, data: bytes) -> str:
        key = hashlib.sha256(data).hexdigest()
        if self.exists(key):
            return key
        return self.put_stream(io.BytesIO(data))

    def put_file(self, path: Path | str) -> str:
        with open(path, "rb") as src:
            return self.put_stream(src)

    def put_stream(self, src: IO[bytes]) -> str:
        """Copy ``src`` to the store while hashing it; returns the key."""
        h = hashlib.sha256()
        with self._temp() as (out, tmp):
            while chunk := src.read(CHUNK):
                h.update(chunk)
                out.write(chunk)
            return self._publish(out, tmp, h.hexdigest())

    def put_dir(self, path: Path | str) -> str:
        """Store a directory as a deterministic tar (sorted, mtime 0, owner 0): equal trees,
        equal keys. Symlinks and special files are refused, naming the path."""
        root = Path(path)
        if not root.is_dir():
            raise InvalidInput(f"{root}: not a directory")
        with self._temp() as (out, tmp):
            hashing = _HashingWriter(out)
            with tarfile.open(
                fileobj=cast(IO[bytes], hashing), mode="w", format=tarfile.PAX_FORMAT
            ) as tar:
                for rel in _walk(root):
                    info, src = _tar_entry(root, rel)
                    try:
                        tar.addfile(info, src)
                    finally:
                        if src is not None:
                            src.close()
            return self._publish(out, tmp, hashing.hexdigest())

    # -- reading -------------------------------------------------------------------------

    def path(self, key: str) -> Path:
        """Where ``key`` is stored; NotFound if it is not."""
        p = self._final(key)
        if not p.is_file():
            raise NotFound(f"no artifact {key}", hint="was it stored with this home directory?")
        return p

    def exists(self, key: str) -> bool:
        return self._final(key).is_file()

    def size(self, key: str) -> int:
        return self.path(key).stat().st_size

    def open(self, key: str) -> BinaryIO:
        return open(self.path(key), "rb")

    def get(self, key: str, *, verify: bool | None = None) -> bytes:
        data = self.path(key).read_bytes()
        if (self.verify_reads if verify is None else verify) and hashlib.sha256(
            data
        ).hexdigest() != key:
            raise StoreError(f"artifact {key} is corrupt: its content no longer hashes to its key")
        return data

    def verify(self, key: str) -> None:
        """Re-hash a stored artifact; StoreError if it does not match its key."""
        h = hashlib.sha256()
        with self.open(key) as f:
            while chunk := f.read(CHUNK):
                h.update(chunk)
        if h.hexdigest() != key:
            raise StoreError(f"artifact {key} is corrupt: its content no longer hashes to its key")

    def extract_dir(self, key: str, dest: Path | str) -> Path:
        """Unpack a ``put_dir`` artifact into ``dest`` (tarfile's "data" filter: no escapes)."""
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(self.path(key), mode="r") as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(dest, filter="data")
            else:  # Python < 3.11.4 (Debian 12's 3.11.2) has no filters: check members here
                tar.extractall(dest, members=_plain_members(tar, key))
        return dest

    def keys(self) -> Iterator[str]:
        if not self.root.is_dir():
            return
        for shard in sorted(self.root.iterdir()):
            if len(shard.name) == 2 and shard.is_dir():
                for f in sorted(shard.iterdir()):
                    if SHA256_RE.match(shard.name + f.name):
                        yield shard.name + f.name

    # -- internals -----------------------------------------------------------------------

    def _final(self, key: str) -> Path:
        if not isinstance(key, str) or not SHA256_RE.match(key):
            raise InvalidInput(
                f"not an artifact key: {key!r}", hint="a key is 64 lowercase hex digits (sha256)"
            )
        return self.root / key[:2] / key[2:]

    def _temp(self) -> _TempFile:
        self._tmp.mkdir(parents=True, exist_ok=True)
        return _TempFile(self._tmp)

    def _publish(self, out: IO[bytes], tmp: Path, key: str) -> str:
        out.flush()
        os.fsync(out.fileno())
        final = self._final(key)
        if final.exists():  # same bytes already there; ours is redundant (removed on exit)
            return key
        final.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(tmp, 0o444)
        os.replace(tmp, final)
        _fsync_dir(final.parent)
        return key


class S3ArtifactStore(ArtifactStore):
    """The artifact store over an S3 bucket; ``root`` is a local download cache."""

    def __init__(
        self,
        bucket: S3Bucket,
        *,
        prefix: str = "",
        cache_dir: Path | str,
        verify_reads: bool = False,
    ) -> None:
        super().__init__(cache_dir, verify_reads=verify_reads)
        self.bucket, self.prefix = bucket, prefix

    def object_name(self, key: str) -> str:
        """The object holding ``key``: ``<prefix>ab/cdef…`` (the local layout's path)."""
        self._final(key)  # refuses a malformed key before any request
        return f"{self.prefix}{key[:2]}/{key[2:]}"

    def exists(self, key: str) -> bool:
        return self.bucket.head(self.object_name(key)) is not None

    def size(self, key: str) -> int:
        size = self.bucket.head(self.object_name(key))
        if size is None:
            raise NotFound(f"no artifact {key} in bucket {self.bucket.bucket!r}")
        return size

    def open(self, key: str) -> BinaryIO:
        return cast(BinaryIO, self.bucket.stream(self.object_name(key)))

    def get(self, key: str, *, verify: bool | None = None) -> bytes:
        with self.open(key) as f:
            data = f.read()
        if (self.verify_reads if verify is None else verify) and hashlib.sha256(
            data
        ).hexdigest() != key:
            raise StoreError(f"artifact {key} is corrupt: its content no longer hashes to its key")
        return data

    def path(self, key: str) -> Path:
        """A local copy of ``key`` (downloaded into the cache once, its hash checked)."""
        cached = self._final(key)
        if cached.is_file():
            return cached
        with self.open(key) as src, self._temp() as (out, tmp):
            h = hashlib.sha256()
            while chunk := src.read(CHUNK):
                h.update(chunk)
                out.write(chunk)
            if h.hexdigest() != key:
                raise StoreError(
                    f"artifact {key} is corrupt: its content no longer hashes to its key"
                )
            ArtifactStore._publish(self, out, tmp, key)
        return cached

    def keys(self) -> Iterator[str]:
        for name in self.bucket.names(self.prefix):
            rest = name[len(self.prefix) :]
            if len(rest) == 65 and rest[2] == "/" and SHA256_RE.match(rest[:2] + rest[3:]):
                yield rest[:2] + rest[3:]

    def _publish(self, out: IO[bytes], tmp: Path, key: str) -> str:
        out.flush()
        name = self.object_name(key)
        if self.bucket.head(name) is not None:  # same bytes already there
            return key
        with open(tmp, "rb") as src:
            self.bucket.put(name, src, sha256_hex=key, size=os.fstat(src.fileno()).st_size)
        return key


class _TempFile:
    """A unique temporary file, removed on exit unless it was renamed into place."""

    def __init__(self, directory: Path) -> None:
        fd, name = tempfile.mkstemp(dir=directory, prefix=".put-")
        self.tmp = Path(name)
        self.out = os.fdopen(fd, "wb")

    def __enter__(self) -> tuple[IO[bytes], Path]:
        return self.out, self.tmp

    def __exit__(self, *exc: object) -> None:
        self.out.close()
        self.tmp.unlink(missing_ok=True)


class _HashingWriter:
    """A write-only stream that hashes what passes through to ``out`` (enough for tarfile)."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out, self._h, self._pos = out, hashlib.sha256(), 0

    def write(self, b: bytes) -> int:
        self._h.update(b)
        self._pos += len(b)
        return self._out.write(b)

    def tell(self) -> int:
        return self._pos

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def _walk(root: Path) -> list[str]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel_dir = Path(dirpath).relative_to(root)
        for name in dirnames + sorted(filenames):
            out.append((rel_dir / name).as_posix())
    return sorted(out)


def _tar_entry(root: Path, rel: str) -> tuple[tarfile.TarInfo, IO[bytes] | None]:
    full = root / rel
    st = full.lstat()
    info = tarfile.TarInfo(rel)
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
    if stat.S_ISDIR(st.st_mode):
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        return info, None
    if not stat.S_ISREG(st.st_mode):
        kind = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a regular file"
        raise InvalidInput(f"{full}: {kind}", hint="replace it with a regular file or remove it")
    info.size = st.st_size
    info.mode = 0o755 if st.st_mode & 0o111 else 0o644
    return info, open(full, "rb")


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _plain_members(tar: tarfile.TarFile, key: str) -> list[tarfile.TarInfo]:
    """Regular files and directories under the destination only, as `put_dir` writes them."""
    members = tar.getmembers()
    for m in members:
        parts = Path(m.name).parts
        if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in parts:
            raise StoreError(f"artifact {key}: member {m.name!r} is not a plain file in the tree")
    return members
