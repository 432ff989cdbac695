"""Packs and the store: gather what to export, and register what a pack brings in.

Invariants:
- export takes each environment's latest verifier and *its* latest gate report; a
  missing report is a reason to refuse, listed with every other reason (`guard`);
- import verifies the whole pack (and, with a trust list, its signer) before it touches
  the engine or the store; each environment is registered in one transaction (spec,
  verifier, gate report, seed), so a failure leaves no half-registered environment;
- a pack is untrusted, signed or not: its limits are clamped to the operator's ceilings
  as `task import` clamps a suite's (`verifiers.formats.caps.clamp`, the same warnings);
  its environments are stored `imported`, never published, until gated here; its gate
  report is kept without a spec hash (its gates ran elsewhere); and the spec's origin
  records the pack and its first signer (or "unsigned"), which every re-export carries;
- `--all-published` exports an environment only with a gate report made here for its
  own spec (`GateReport.spec_hash`); the others are named with the reason (`published`).
- import is idempotent: an environment already stored with the same content is kept,
  one stored with different content under the same id and version is a Conflict;
- every file the spec and verifier name goes into the artifact store under its key.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from envfactory.core.errors import Conflict, InvalidPack, NotFound, PublishBlocked
from envfactory.core.models import (
    EnvironmentSpec,
    EnvStatus,
    LimitCaps,
    PackManifest,
    TaskOrigin,
    TaskSeed,
    Verifier,
    gated_spec_hash,
)
from verifiers.formats.caps import clamp

from .export import ExportItem
from .images import DockerImages, ImageIO
from .reader import PackedEnvironment, read_environment
from .safety import PackLimits
from .signing import Signer, TrustedKeys
from .verify import VerifiedPack, open_verified

if TYPE_CHECKING:
    from envfactory.store import Store


class ArtifactWriter(Protocol):
    def put_bytes(self, data: bytes) -> str: ...


def _seed(store: Store, seed_id: str | None) -> TaskSeed | None:
    if seed_id is None:
        return None
    try:
        return store.seeds.get(seed_id)
    except NotFound:
        return None  # the chain records the id; the seed itself is optional


@dataclass(frozen=True)
class Published:
    """What `--all-published` exports (`ids`), and each published one it leaves out."""

    ids: list[str]
    skipped: list[str]


def published(store: Store) -> Published:
    """Published environments whose latest gate report was made for their own spec."""
    ids: list[str] = []
    skipped: list[str] = []
    for record in store.environments.list(status=EnvStatus.PUBLISHED):
        spec = record.spec
        try:
            report = store.gate_reports.latest(spec.id, store.verifiers.get(spec.id).version)
        except NotFound:
            report = None  # items_from_store names what is missing
        if report is not None and report.spec_hash == gated_spec_hash(spec):
            ids.append(spec.id)
        else:
            skipped.append(
                f"{spec.id}: its gate report was not made here for this spec; gate it "
                f"again (envfactory task validate {spec.id})"
            )
    return Published(ids, skipped)


def published_ids(store: Store) -> list[str]:
    return published(store).ids


def items_from_store(store: Store, env_ids: Sequence[str]) -> list[ExportItem]:
    """The export items for `env_ids`, or PublishBlocked listing every missing piece."""
    items: list[ExportItem] = []
    reasons: list[str] = []
    for env_id in env_ids:
        try:
            spec = store.environments.get(env_id)
            verifier = store.verifiers.get(env_id)
        except NotFound as e:
            reasons.append(f"{env_id}: {e.message}")
            continue
        report = store.gate_reports.latest(env_id, verifier.version)
        if report is None:
            reasons.append(f"{env_id}: verifier v{verifier.version} has no gate report")
            continue
        items.append(ExportItem(spec, verifier, report, _seed(store, spec.seed_id)))
    if reasons:
        raise PublishBlocked(reasons)
    return items


@dataclass(frozen=True)
class ImportedEnvironment:
    env_id: str
    version: int
    image: str | None
    already_present: bool
    warnings: tuple[str, ...] = ()  # limits clamped to the operator's ceilings


@dataclass(frozen=True)
class ImportResult:
    manifest: PackManifest
    environments: tuple[ImportedEnvironment, ...] = field(default=())
    signed: bool = False


def _image_for(
    packed: PackedEnvironment, engine: Any, images: ImageIO, build: bool, network: bool
) -> str | None:
    if packed.image_tar is not None:
        return packed.load_image(images)
    if build and engine is not None:
        built = engine.build(
            packed.context_tar(), dockerfile=packed.spec.build.dockerfile, network=network
        )
        return str(built.image)
    return None


@dataclass(frozen=True)
class _Prepared:
    """One environment as it is stored here: limits clamped, origin recorded."""

    spec: EnvironmentSpec
    verifier: Verifier
    warnings: tuple[str, ...]


def _first_signer(packed: PackedEnvironment, signer: Signer | None) -> str:
    """Who first signed the environment: an unsigned pack's claims count for nothing; a
    signed pack vouches for the signer its provenance names (or is the first itself)."""
    if signer is None:
        return "unsigned"
    return packed.entry.provenance.signer or signer.fingerprint


def _prepare(
    packed: PackedEnvironment, verified: VerifiedPack, image: str | None, caps: LimitCaps
) -> _Prepared:
    where = f"{verified.source} ({packed.env_id}: spec.json)"
    limits, timeout_s, warnings = clamp(packed.spec.limits, packed.verifier.timeout_s, caps, where)
    origin = TaskOrigin(
        suite=verified.manifest.id,
        path=str(verified.source),
        signer=_first_signer(packed, verified.signer),
    )
    spec = packed.spec.model_copy(
        update={"image": image or packed.spec.image, "limits": limits, "origin": origin}
    )
    verifier = packed.verifier.model_copy(update={"timeout_s": timeout_s})
    return _Prepared(spec, verifier, tuple(warnings))


def _same(a: EnvironmentSpec, b: EnvironmentSpec) -> bool:
    """The same environment, whatever its image id and origin (another pack, another host)."""
    left_out = {"image": None, "origin": None}
    return a.model_copy(update=left_out) == b.model_copy(update=left_out)


def _register(store: Store, packed: PackedEnvironment, ready: _Prepared) -> bool:
    """Store one environment in one transaction, as imported (not published: its gates ran
    elsewhere); True if it was already there."""
    spec = ready.spec
    with store.session() as tx:
        if spec.version in tx.environments.versions(spec.id):
            if not _same(tx.environments.get(spec.id, spec.version), spec):
                raise Conflict(
                    f"environment {spec.id} v{spec.version} is already stored with other content",
                    hint="this pack holds a different environment under the same id and version",
                )
            return True
        if packed.seed is not None and tx.seeds.find_by_hash(packed.seed.content_hash) is None:
            tx.seeds.add(packed.seed)
        tx.environments.add(spec, EnvStatus.IMPORTED)
        if ready.verifier.version not in tx.verifiers.versions(spec.id):
            tx.verifiers.add(ready.verifier)
        tx.gate_reports.add(packed.gate_report.model_copy(update={"spec_hash": None}))
        return False


def import_pack(
    path: Path,
    *,
    store: Store,
    artifacts: ArtifactWriter,
    engine: Any = None,
    images: ImageIO | None = None,
    limits: PackLimits | None = None,
    build: bool = True,
    build_network: bool = False,
    trust: TrustedKeys | None = None,
    caps: LimitCaps | None = None,
) -> ImportResult:
    """Verify a pack, load or build its images, and register its environments (status
    imported, limits within `caps`: the operator's ceilings). A pack is untrusted: its
    builds are offline unless `build_network` (a bridge network, never the host's), and
    envfactory names its images (`images.pack_tag`)."""
    scratch = Path(tempfile.mkdtemp(prefix="envfactory-import-"))
    try:
        verified = open_verified(Path(path), scratch / "pack", limits, trust)
        if not verified.manifest.environments:
            raise InvalidPack(
                f"{path}: pack.json lists no environments: there is nothing to import",
                hint="export a pack from published environments (envfactory pack export)",
            )
        io = images or DockerImages.from_engine(engine)
        done: list[ImportedEnvironment] = []
        for entry in verified.manifest.environments:
            packed = read_environment(verified, entry)
            for data in packed.all_artifacts().values():
                artifacts.put_bytes(data)
            image = _image_for(packed, engine, io, build, build_network)
            ready = _prepare(packed, verified, image, caps or LimitCaps())
            present = _register(store, packed, ready)
            done.append(
                ImportedEnvironment(
                    entry.env_id, ready.spec.version, image, present, ready.warnings
                )
            )
        _record_pack(store, verified.manifest)
        return ImportResult(verified.manifest, tuple(done), verified.signer is not None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _record_pack(store: Store, manifest: PackManifest) -> None:
    try:
        store.packs.get(manifest.id)
    except NotFound:
        store.packs.add(manifest)
