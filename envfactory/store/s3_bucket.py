"""A bucket of an S3-compatible service, as the artifact store needs it (boto3 underneath).

Only what `S3ArtifactStore` uses: head, get (a stream), put (with the sha256 checked by
the server), list under a prefix, and a reachability check. Every botocore failure leaves
here as an envfactory error naming the setting to fix:

- the endpoint cannot be reached → `StoreError` (retryable) naming
  ``ENVFACTORY_ARTIFACTS__S3_ENDPOINT_URL``;
- the bucket does not exist → `ConfigError` naming ``ENVFACTORY_ARTIFACTS__S3_BUCKET``;
- credentials refused → `ConfigError` naming the credential variables.

Invariant: an object appears whole or not at all (S3 PUT is atomic), and the server
refuses a body whose sha256 differs from the one sent with it, so a key in the bucket
always names exactly its bytes unless someone rewrites the object out of band.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any, TypeVar

import boto3
import botocore.exceptions
from botocore.config import Config

from envfactory.core.errors import ConfigError, NotFound, StoreError
from envfactory.core.settings import ArtifactSettings

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

T = TypeVar("T")

_ENDPOINT = "ENVFACTORY_ARTIFACTS__S3_ENDPOINT_URL"
_BUCKET = "ENVFACTORY_ARTIFACTS__S3_BUCKET"
_CREDENTIALS = (
    "ENVFACTORY_ARTIFACTS__S3_ACCESS_KEY_ID / ENVFACTORY_ARTIFACTS__S3_SECRET_ACCESS_KEY "
    "(or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)"
)
_MISSING = {"404", "NoSuchKey", "NotFound"}
_NO_BUCKET = {"NoSuchBucket"}
_DENIED = {"403", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"}


class S3Bucket:
    def __init__(self, client: S3Client, bucket: str, *, endpoint: str | None = None) -> None:
        self.client, self.bucket = client, bucket
        self._where = f"bucket {bucket!r} at {endpoint or 'AWS'}"

    @classmethod
    def from_settings(cls, cfg: ArtifactSettings) -> S3Bucket:
        if not cfg.s3_bucket:
            raise ConfigError(f"no S3 bucket configured: set {_BUCKET}")
        client = boto3.client(
            "s3",
            endpoint_url=cfg.s3_endpoint_url,
            region_name=cfg.s3_region,
            aws_access_key_id=_secret(cfg.s3_access_key_id),
            aws_secret_access_key=_secret(cfg.s3_secret_access_key),
            config=Config(
                connect_timeout=cfg.s3_connect_timeout_s,
                retries={"max_attempts": 3, "mode": "standard"},
            ),
        )
        return cls(client, cfg.s3_bucket, endpoint=cfg.s3_endpoint_url)

    def check(self) -> None:
        """Raise the error naming the setting to fix if the bucket cannot be used."""
        self._call("HEAD", lambda: self.client.head_bucket(Bucket=self.bucket), bucket_op=True)

    def head(self, name: str) -> int | None:
        """The object's size, or None when there is none under ``name``."""
        try:
            out = self._call(name, lambda: self.client.head_object(Bucket=self.bucket, Key=name))
        except NotFound:
            return None
        return int(out["ContentLength"])

    def stream(self, name: str) -> IO[bytes]:
        """The object's bytes as a readable stream (close it); NotFound when absent."""
        out = self._call(name, lambda: self.client.get_object(Bucket=self.bucket, Key=name))
        body: Any = out["Body"]
        return body  # type: ignore[no-any-return]  # botocore's StreamingBody is an IOBase

    def put(self, name: str, src: IO[bytes], *, sha256_hex: str, size: int) -> None:
        """Store ``src`` under ``name``; the server checks the bytes against ``sha256_hex``."""
        checksum = base64.b64encode(bytes.fromhex(sha256_hex)).decode()
        self._call(
            name,
            lambda: self.client.put_object(
                Bucket=self.bucket,
                Key=name,
                Body=src,
                ContentLength=size,
                ChecksumSHA256=checksum,
            ),
        )

    def names(self, prefix: str) -> Iterator[str]:
        """Every object name under ``prefix``, in lexicographic order (S3's listing order)."""
        paginator = self.client.get_paginator("list_objects_v2")
        pages = paginator.paginate(Bucket=self.bucket, Prefix=prefix)
        for page in self._call(prefix, lambda: list(pages), bucket_op=True):
            for obj in page.get("Contents", []):
                yield obj["Key"]

    def _call(self, name: str, fn: Callable[[], T], *, bucket_op: bool = False) -> T:
        try:
            return fn()
        except botocore.exceptions.ClientError as exc:
            raise self._client_error(name, exc, bucket_op=bucket_op) from exc
        except (
            botocore.exceptions.EndpointConnectionError,
            botocore.exceptions.ConnectionClosedError,
            botocore.exceptions.ConnectTimeoutError,
            botocore.exceptions.ReadTimeoutError,
        ) as exc:
            raise StoreError(
                f"artifact store unreachable: {self._where}: {exc}",
                hint=f"is the S3 service running? check {_ENDPOINT}",
            ) from exc
        except botocore.exceptions.NoCredentialsError as exc:
            raise ConfigError(
                f"no credentials for {self._where}", hint=f"set {_CREDENTIALS}"
            ) from exc

    def _client_error(
        self, name: str, exc: botocore.exceptions.ClientError, *, bucket_op: bool
    ) -> Exception:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in _NO_BUCKET or (bucket_op and code in _MISSING):
            return ConfigError(
                f"artifact store: no {self._where}",
                hint=f"create the bucket or set {_BUCKET} to an existing one",
            )
        if code in _MISSING:
            return NotFound(f"no artifact {name} in {self._where}")
        if code in _DENIED:
            return ConfigError(
                f"artifact store: access to {self._where} refused ({code})",
                hint=f"check {_CREDENTIALS} and the bucket's policy",
            )
        return StoreError(f"artifact store: {self._where}: {name}: {exc}")


def _secret(value: Any) -> str | None:
    return value.get_secret_value() if value is not None else None
