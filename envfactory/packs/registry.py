"""Packs and the store: gather what to export, and register what a pack brings in.

Invariants:
- export takes each environment's latest verifier and *its* latest gate report; a
  missing report is a reason to refuse, listed with every other reason (`guard`);
- import verifies the whole pack (and, with a trust list, its signer) before it touches
  the engine or the store; each environment is registered in one transaction (spec,
  verifier, gate report, seed), so a failure leaves no half-registered environment;
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
from envfactory.core.models import EnvironmentSpec, EnvStatus, PackManifest, TaskSeed

from .export import ExportItem
from .images import DockerImages, ImageIO
from .reader import PackedEnvironment, read_environment
from .safety import PackLimits
from .signing import TrustedKeys
from .verify import open_verified

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


def published_ids(store: Store) -> list[str]:
    return [r.spec.id for r in store.environments.list(status=EnvStatus.PUBLISHED)]


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


def _register(store: Store, packed: PackedEnvironment, spec: EnvironmentSpec) -> bool:
    """Store one environment in one transaction; True if it was already there."""
    with store.session() as tx:
        if spec.version in tx.environments.versions(spec.id):
            stored = tx.environments.get(spec.id, spec.version)
            if stored.model_copy(update={"image": None}) != spec.model_copy(update={"image": None}):
                raise Conflict(
                    f"environment {spec.id} v{spec.version} is already stored with other content",
                    hint="this pack holds a different environment under the same id and version",
                )
            return True
        if packed.seed is not None and tx.seeds.find_by_hash(packed.seed.content_hash) is None:
            tx.seeds.add(packed.seed)
        tx.environments.add(spec, EnvStatus.PUBLISHED)
        if packed.verifier.version not in tx.verifiers.versions(spec.id):
            tx.verifiers.add(packed.verifier)
        tx.gate_reports.add(packed.gate_report)
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
) -> ImportResult:
    """Verify a pack, load or build its images, and register its environments. A pack is
    untrusted: its builds are offline unless `build_network` (a bridge network, never
    the host's), and its image archives may only tag images in its own namespace."""
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
            spec = packed.spec.model_copy(update={"image": image or packed.spec.image})
            present = _register(store, packed, spec)
            done.append(ImportedEnvironment(spec.id, spec.version, image, present))
        _record_pack(store, verified.manifest)
        return ImportResult(verified.manifest, tuple(done), verified.signer is not None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _record_pack(store: Store, manifest: PackManifest) -> None:
    try:
        store.packs.get(manifest.id)
    except NotFound:
        store.packs.add(manifest)
