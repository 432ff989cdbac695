"""A real local S3-protocol server for tests: moto's ThreadedMotoServer on 127.0.0.1.

It is an HTTP server speaking S3 (boto3 talks to it over the network as it would to AWS or
MinIO), started once per test session; each test gets its own bucket.
"""

from __future__ import annotations

import logging
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from moto.server import ThreadedMotoServer

from envfactory.core.settings import ArtifactSettings
from envfactory.store import S3ArtifactStore
from envfactory.store.s3_bucket import S3Bucket

#: moto accepts any credentials; these are passed explicitly, so no AWS_* variable matters
CREDENTIALS = {"s3_access_key_id": "testing", "s3_secret_access_key": "testing"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def s3_server() -> Iterator[str]:
    """Start the server; yields its endpoint URL."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no access log per request
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def s3_settings(endpoint: str, bucket: str, prefix: str = "") -> ArtifactSettings:
    return ArtifactSettings(
        backend="s3",
        s3_bucket=bucket,
        s3_prefix=prefix,
        s3_endpoint_url=endpoint,
        s3_region="us-east-1",
        **CREDENTIALS,  # type: ignore[arg-type]
    )


def new_bucket(endpoint: str) -> str:
    """Create a fresh bucket on the server; returns its name."""
    name = f"t-{uuid.uuid4().hex[:16]}"
    S3Bucket.from_settings(s3_settings(endpoint, name)).client.create_bucket(Bucket=name)
    return name


def s3_store(
    endpoint: str, bucket: str, cache: Path, *, prefix: str = "", verify_reads: bool = False
) -> S3ArtifactStore:
    s3 = S3Bucket.from_settings(s3_settings(endpoint, bucket, prefix))
    return S3ArtifactStore(s3, prefix=prefix, cache_dir=cache, verify_reads=verify_reads)
