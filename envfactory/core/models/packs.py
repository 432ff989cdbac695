"""Pack manifests: what a published pack holds, with a content hash for every member."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from .base import ArtifactKey, Model, NonEmpty, utcnow
from .solve_rate import SolveRate

PACK_SCHEMA_VERSION = 1
#: what a pack holds: envfactory environments, or Harbor tasks
PackFormat = Literal["envfactory", "harbor"]
#: how an environment's image travels: a `docker save` archive, or its build context
ImageFormat = Literal["docker-save", "build-context"]


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
    # Hashes that tie each link of seed -> spec -> verifier -> gate report to pack members
    # (or, for the seed, to its content hash), so a reader can check the chain end to end.
    seed_sha256: ArtifactKey | None = None
    spec_sha256: ArtifactKey | None = None
    verifier_sha256: ArtifactKey | None = None
    gate_report_sha256: ArtifactKey | None = None
    verifier_author: str | None = None
    gate_verdict: Literal["passed", "failed"] | None = None
    #: the harness semantics the verifier was gated under (an export never promises more)
    gated_semantics: tuple[Literal["envfactory", "harbor"], ...] = ("envfactory",)
    #: killed / (killed + survived) of the gate battery's mutation run, when one ran
    mutation_score: float | None = None
    #: the judges' measured solve rate and the accepted band, from the gate report
    solve_rate: SolveRate | None = None
    #: who first signed this environment into a pack: a key fingerprint, or "unsigned"
    #: (it came here in a pack no one signed); None: made by the exporting install
    signer: str | None = None


class PackEnvironment(Model):
    env_id: str
    name: str
    image_format: ImageFormat
    provenance: ProvenanceChain
    root: str | None = None  # the environment's folder inside the pack
    image_ref: str | None = None  # image id at export time (docker-save packs)


class PackSignature(Model):
    """pack.sig: an Ed25519 signature over the exact bytes of pack.json (which lists every
    member with its sha256), and the public key that made it. Whether that key is trusted
    is the reader's decision (`envfactory.packs.signing.TrustedKeys`), never the pack's."""

    format: Literal["envfactory-pack-signature/1"] = "envfactory-pack-signature/1"
    algorithm: Literal["ed25519"] = "ed25519"
    key_fingerprint: str
    public_key: str  # base64 of the 32 raw bytes
    signature: str  # base64 of the 64 raw bytes


class PackManifest(Model):
    schema_version: int = PACK_SCHEMA_VERSION
    id: str
    created_by: str
    created_at: datetime = Field(default_factory=utcnow)
    format: PackFormat = "envfactory"
    environments: tuple[PackEnvironment, ...]
    members: tuple[PackMember, ...]
