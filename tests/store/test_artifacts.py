"""The content-addressed artifact store: keys, layout, atomicity and concurrent writers.

Every contract test runs against both backends: the local directory and an S3 bucket on
a real local S3-protocol server (tests/s3_server.py); `Backend` holds the few things a
test does differently to each (tampering with a stored artifact, opening a second
handle on the same store from another process).
"""

from __future__ import annotations

import hashlib
import io
import multiprocessing
import os
import random
import tarfile
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from envfactory.core.errors import InvalidInput, NotFound, StoreError
from envfactory.store import ArtifactStore, S3ArtifactStore
from envfactory.store.artifacts import _plain_members
from tests.s3_server import new_bucket, s3_store

#: how to open a store from another process: ("local", root) or ("s3", endpoint, bucket, cache)
Spec = tuple[str, ...]


def open_spec(spec: Spec, *, verify_reads: bool = False) -> ArtifactStore:
    if spec[0] == "local":
        return ArtifactStore(spec[1], verify_reads=verify_reads)
    _, endpoint, bucket, cache = spec
    return s3_store(endpoint, bucket, Path(cache), prefix="env/", verify_reads=verify_reads)


@dataclass
class Backend:
    spec: Spec

    def open(self, *, verify_reads: bool = False) -> ArtifactStore:
        return open_spec(self.spec, verify_reads=verify_reads)

    def tamper(self, store: ArtifactStore, key: str, data: bytes) -> None:
        """Rewrite a stored artifact behind the store's back (disk rot, an attacker)."""
        if isinstance(store, S3ArtifactStore):
            s3 = store.bucket
            s3.client.put_object(Bucket=s3.bucket, Key=store.object_name(key), Body=data)
            return
        path = store.path(key)
        path.chmod(0o644)
        path.write_bytes(data)


@pytest.fixture(params=["local", "s3"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "local":
        return Backend(("local", str(tmp_path / "artifacts")))
    endpoint = request.getfixturevalue("s3_endpoint")
    return Backend(("s3", endpoint, new_bucket(endpoint), str(tmp_path / "cache")))


@pytest.fixture
def artifacts(backend: Backend) -> ArtifactStore:
    return backend.open()


def _blob(i: int, size: int = 256 * 1024) -> bytes:
    return random.Random(i).randbytes(size)


def _assert_consistent(store: ArtifactStore, expected: set[bytes]) -> None:
    """Exactly the expected artifacts, each intact, and no temporary files left behind."""
    keys = set(store.keys())
    assert keys == {hashlib.sha256(b).hexdigest() for b in expected}
    for key in keys:
        store.verify(key)
    assert not (store.root / "tmp").exists() or os.listdir(store.root / "tmp") == []


def test_put_returns_the_sha256_and_stores_under_a_two_level_path(artifacts: ArtifactStore) -> None:
    key = artifacts.put_bytes(b"hello")
    assert key == hashlib.sha256(b"hello").hexdigest()
    assert artifacts.path(key) == artifacts.root / key[:2] / key[2:]
    assert artifacts.get(key, verify=True) == b"hello"
    with artifacts.open(key) as f:
        assert f.read() == b"hello"
    assert artifacts.size(key) == 5 and artifacts.exists(key)


def test_storing_the_same_content_twice_keeps_one_copy(
    artifacts: ArtifactStore, tmp_path: Path
) -> None:
    src = tmp_path / "f.bin"
    src.write_bytes(b"x" * 3_000_000)  # bigger than one copy chunk
    k1, k2 = artifacts.put_file(src), artifacts.put_bytes(src.read_bytes())
    assert k1 == k2 and list(artifacts.keys()) == [k1]


def test_a_corrupted_artifact_fails_verification(
    artifacts: ArtifactStore, backend: Backend
) -> None:
    key = artifacts.put_bytes(b"original")
    backend.tamper(artifacts, key, b"tampered")
    assert artifacts.get(key) == b"tampered"  # unverified read
    with pytest.raises(StoreError, match="corrupt"):
        artifacts.get(key, verify=True)
    with pytest.raises(StoreError, match="corrupt"):
        artifacts.verify(key)
    with pytest.raises(StoreError):
        backend.open(verify_reads=True).get(key)


@pytest.mark.parametrize("bad", ["../../etc/passwd", "ABC", "g" * 64, "A" * 64, ""])
def test_a_malformed_key_is_refused_before_touching_the_disk(
    artifacts: ArtifactStore, bad: str
) -> None:
    with pytest.raises(InvalidInput, match="not an artifact key"):
        artifacts.get(bad)


def test_a_missing_key_is_not_found(artifacts: ArtifactStore) -> None:
    with pytest.raises(NotFound):
        artifacts.get("0" * 64)
    assert not artifacts.exists("0" * 64)


def test_stored_artifacts_are_read_only(artifacts: ArtifactStore) -> None:
    key = artifacts.put_bytes(b"immutable")
    assert artifacts.path(key).stat().st_mode & 0o222 == 0


def _tree(root: Path, mtime: int) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("a")
    (root / "sub" / "run.sh").write_text("#!/bin/sh\n")
    (root / "sub" / "run.sh").chmod(0o755)
    for p in root.rglob("*"):
        os.utime(p, (mtime, mtime))
    return root


def test_equal_directory_trees_get_equal_keys_and_extract_back(
    artifacts: ArtifactStore, tmp_path: Path
) -> None:
    k1 = artifacts.put_dir(_tree(tmp_path / "one", 1_000_000))
    k2 = artifacts.put_dir(_tree(tmp_path / "two", 2_000_000))
    assert k1 == k2
    out = artifacts.extract_dir(k1, tmp_path / "out")
    assert (out / "a.txt").read_text() == "a"
    assert os.access(out / "sub" / "run.sh", os.X_OK)
    (tmp_path / "one" / "a.txt").write_text("b")
    assert artifacts.put_dir(tmp_path / "one") != k1


def test_a_directory_with_a_symlink_is_refused(artifacts: ArtifactStore, tmp_path: Path) -> None:
    tree = _tree(tmp_path / "t", 0)
    (tree / "link").symlink_to("/etc/passwd")
    with pytest.raises(InvalidInput, match="link: a symlink"):
        artifacts.put_dir(tree)
    assert list(artifacts.keys()) == []


def test_concurrent_writer_threads_leave_the_store_consistent(artifacts: ArtifactStore) -> None:
    blobs = [_blob(i) for i in range(12)]
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def writer(t: int) -> None:
        barrier.wait()
        try:
            for b in random.Random(t).sample(blobs, len(blobs)):  # same content, different order
                assert artifacts.put_bytes(b) == hashlib.sha256(b).hexdigest()
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    _assert_consistent(artifacts, set(blobs))


def test_readers_never_see_a_partial_artifact(artifacts: ArtifactStore) -> None:
    """A reader polling for each key while it is written sees it whole or not at all."""
    blobs = [_blob(100 + i, 2 * 1024 * 1024) for i in range(4)]
    keys = [hashlib.sha256(b).hexdigest() for b in blobs]
    stop, seen = threading.Event(), []

    def reader() -> None:
        while not stop.is_set():
            for key, blob in zip(keys, blobs, strict=True):
                if artifacts.exists(key):
                    seen.append(artifacts.get(key) == blob)

    t = threading.Thread(target=reader)
    t.start()
    for blob in blobs:
        artifacts.put_stream(io.BytesIO(blob))
    stop.set()
    t.join()
    assert seen and all(seen)


def _process_writer(args: tuple[Spec, int]) -> list[str]:
    spec, seed = args
    store = open_spec(spec)
    blobs = [_blob(i, 128 * 1024) for i in range(10)]
    return [store.put_bytes(b) for b in random.Random(seed).sample(blobs, len(blobs))]


def test_concurrent_writer_processes_leave_the_store_consistent(backend: Backend) -> None:
    with multiprocessing.get_context("fork").Pool(4) as pool:
        results = pool.map(_process_writer, [(backend.spec, s) for s in range(8)])
    expected = {_blob(i, 128 * 1024) for i in range(10)}
    assert all(set(r) == {hashlib.sha256(b).hexdigest() for b in expected} for r in results)
    _assert_consistent(backend.open(), expected)


def test_without_tar_filters_a_member_outside_the_tree_is_refused(tmp_path: Path) -> None:
    """Debian 12's Python 3.11.2 has no `filter=`: extract_dir checks the members itself."""
    path = tmp_path / "evil.tar"
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("../evil.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with tarfile.open(path) as tar, pytest.raises(StoreError, match=r"'\.\./evil\.txt'"):
        _plain_members(tar, "k")
