"""The S3 backend of the artifact store: what settings choose it, where objects go, and the
errors that name the setting to fix when the bucket cannot be used (a real local
S3-protocol server, tests/s3_server.py)."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from envfactory.core.errors import ConfigError, StoreError
from envfactory.core.settings import load_settings
from envfactory.store import ArtifactStore, S3ArtifactStore
from tests.s3_server import CREDENTIALS, free_port, new_bucket, s3_store


def _settings(tmp_path: Path, endpoint: str, bucket: str, prefix: str = "") -> dict[str, object]:
    return {
        "home": tmp_path / "home",
        "artifacts": {
            "backend": "s3",
            "s3_bucket": bucket,
            "s3_prefix": prefix,
            "s3_endpoint_url": endpoint,
            "s3_region": "us-east-1",
            "s3_connect_timeout_s": 1,
            **CREDENTIALS,
        },
    }


def test_settings_choose_the_bucket_and_objects_keep_the_local_layout(
    tmp_path: Path, s3_endpoint: str
) -> None:
    bucket = new_bucket(s3_endpoint)
    settings = load_settings(**_settings(tmp_path, s3_endpoint, bucket, prefix="team/"))
    store = ArtifactStore.from_settings(settings)
    assert isinstance(store, S3ArtifactStore)
    key = store.put_bytes(b"shared between hosts")
    assert key == hashlib.sha256(b"shared between hosts").hexdigest()
    listed = store.bucket.client.list_objects_v2(Bucket=bucket)["Contents"]
    assert [o["Key"] for o in listed] == [f"team/{key[:2]}/{key[2:]}"]
    # a second host (another store, its own cache) reads it from the bucket alone
    other = s3_store(s3_endpoint, bucket, tmp_path / "other-cache", prefix="team/")
    assert other.get(key, verify=True) == b"shared between hosts"


def test_the_local_backend_stays_the_default(tmp_path: Path) -> None:
    store = ArtifactStore.from_settings(load_settings(home=tmp_path / "home"))
    assert type(store) is ArtifactStore and store.root == tmp_path / "home" / "artifacts"


def test_a_tampered_object_is_never_cached_as_a_local_file(
    tmp_path: Path, s3_endpoint: str
) -> None:
    store = s3_store(s3_endpoint, new_bucket(s3_endpoint), tmp_path / "cache")
    key = store.put_bytes(b"original")
    s3 = store.bucket
    s3.client.put_object(Bucket=s3.bucket, Key=store.object_name(key), Body=b"forged")
    with pytest.raises(StoreError, match="corrupt"):
        store.path(key)
    assert list((tmp_path / "cache").rglob("*")) == [tmp_path / "cache" / "tmp"]


def test_an_unreachable_endpoint_names_the_endpoint_setting(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    settings = load_settings(**_settings(tmp_path, dead, "any"))
    t0 = time.monotonic()
    with pytest.raises(StoreError, match="unreachable") as err:
        ArtifactStore.from_settings(settings)
    assert "ENVFACTORY_ARTIFACTS__S3_ENDPOINT_URL" in str(err.value)
    assert time.monotonic() - t0 < 15


def test_a_missing_bucket_names_the_bucket_setting(tmp_path: Path, s3_endpoint: str) -> None:
    settings = load_settings(**_settings(tmp_path, s3_endpoint, "no-such-bucket"))
    with pytest.raises(ConfigError, match="no-such-bucket") as err:
        ArtifactStore.from_settings(settings)
    assert "ENVFACTORY_ARTIFACTS__S3_BUCKET" in str(err.value)


def test_the_s3_backend_without_a_bucket_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ENVFACTORY_ARTIFACTS__BACKEND", "s3")
    with pytest.raises(ConfigError, match="ENVFACTORY_ARTIFACTS__S3_BUCKET"):
        load_settings()
