"""Pack manifests: what a published pack holds, with a content hash for every member."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from .base import ArtifactKey, Model, NonEmpty, utcnow

PACK_SCHEMA_VERSION = 1


class PackMember(Model):
    path: NonEmpty  # relative POSIX path inside the pack
    sha256: ArtifactKey
    size: int = Field(ge=0)
    visibility: Literal["solver", "verifier", "meta"] = "meta"


class ProvenanceChain(Model):
    seed_id: str | None
    env_id: str
    env_version: int
    verifier_version: int
    gate_report_created_at: datetime | None = None


class PackEnvironment(Model):
    env_id: str
    name: str
    image_format: Literal["docker-save", "build-context"]
    provenance: ProvenanceChain


class PackManifest(Model):
    schema_version: int = PACK_SCHEMA_VERSION
    id: str
    created_by: str
    created_at: datetime = Field(default_factory=utcnow)
    environments: tuple[PackEnvironment, ...]
    members: tuple[PackMember, ...]
