"""Export gated environments as a pack (folder or tar), in our layout or Harbor's.

Invariants:
- check, then publish: `guard` collects every reason an item may not be exported (failed
  gate report, a report for another verifier version, ...) and refuses with all of them;
- the verifier is written only under its own subtree (see `layout`), never beside what
  the solver sees;
- every byte taken from the artifact store is checked against its key on the way out;
- a tar is written to a temporary name and renamed into place, so a crash never leaves a
  half-written pack under the final name; pack.json comes first and pack.sig second (a
  streaming reader checks both before any member), then the members, sorted, with owners
  and times normalised, so the same content gives the same archive;
- with a signing key, pack.sig signs the exact bytes of pack.json (`signing`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from envfactory.core.errors import PublishBlocked, StoreError
from envfactory.core.models import (
    EnvironmentSpec,
    FileEntry,
    GateReport,
    GateVerdict,
    ImageFormat,
    PackEnvironment,
    PackFormat,
    PackManifest,
    ProvenanceChain,
    TaskSeed,
    Verifier,
)

from . import layout
from .manifest import build_manifest, write_manifest
from .safety import check_member_name

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ImageMode = Literal["save", "context"]


class ArtifactReader(Protocol):
    def get(self, key: str) -> bytes: ...


class ImageSaver(Protocol):
    def save_image(self, image: str, dest: Path) -> str:
        """Write `docker save` output for `image` (untagged) to `dest`; return its id."""
        ...


#: Writes one Harbor task folder: (spec, verifier, artifacts, out_dir) -> None.
HarborWriter = Callable[[EnvironmentSpec, Verifier, ArtifactReader, Path], object]


@dataclass(frozen=True)
class ExportItem:
    """One environment to export: its spec, the verifier that passed the gates, the report."""

    spec: EnvironmentSpec
    verifier: Verifier
    gate_report: GateReport
    seed: TaskSeed | None = None


def guard(
    items: Sequence[ExportItem], images: ImageMode = "context", fmt: PackFormat = "envfactory"
) -> None:
    """Refuse the export with every reason at once, or return. An export never promises
    more than was gated: a Harbor export needs the verifier gated safe under Harbor's
    runtime (the solver's own container), not only under envfactory's."""
    reasons: list[str] = []
    if not items:
        reasons.append("no environments to export")
    seen: set[str] = set()
    for it in items:
        eid = it.spec.id
        if eid in seen:
            reasons.append(f"{eid}: listed twice")
        seen.add(eid)
        if it.gate_report.verdict != GateVerdict.PASSED:
            reasons.append(f"{eid}: gate report failed ({'; '.join(it.gate_report.reasons)})")
        if it.verifier.env_id != eid or it.gate_report.env_id != eid:
            reasons.append(f"{eid}: verifier or gate report belongs to another environment")
        if it.gate_report.verifier_version != it.verifier.version:
            reasons.append(
                f"{eid}: gate report is for verifier v{it.gate_report.verifier_version}, "
                f"not the exported v{it.verifier.version}"
            )
        if fmt == "harbor" and it.gate_report.verdict == GateVerdict.PASSED:
            reasons += _harbor_refusal(eid, it.gate_report)
        if images == "save" and not it.spec.image:
            reasons.append(f"{eid}: no built image to save (use --images context)")
    if reasons:
        raise PublishBlocked(reasons)


def _harbor_refusal(eid: str, report: GateReport) -> list[str]:
    if "harbor" not in report.semantics:
        return [
            f"{eid}: gated under envfactory's runtime only; a Harbor export promises "
            "Harbor's (verification in the solver's own container). Re-gate it with "
            'semantics = ["envfactory", "harbor"] (envfactory validate on the export does)'
        ]
    if not report.safe_under("harbor"):
        why = "; ".join(report.other_runtime_reasons) or "; ".join(report.reasons)
        return [f"{eid}: not safe under Harbor's runtime ({why})"]
    return []


def _write(root: Path, rel: str, data: bytes, mode: int = 0o644) -> str:
    path = root / check_member_name(rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode & 0o755)
    return hashlib.sha256(data).hexdigest()


def _artifact(artifacts: ArtifactReader, entry: FileEntry) -> bytes:
    data = artifacts.get(entry.key)
    if hashlib.sha256(data).hexdigest() != entry.key:
        raise StoreError(f"artifact {entry.key} ({entry.path}) does not match its key")
    return data


def _write_files(
    root: Path, base: str, files: Sequence[FileEntry], artifacts: ArtifactReader
) -> None:
    for entry in files:
        _write(root, f"{base}/{entry.path}", _artifact(artifacts, entry), entry.mode)


def _dockerfile_from_lines(spec: EnvironmentSpec, artifacts: ArtifactReader) -> list[str]:
    for entry in spec.build.files:
        if entry.path == spec.build.dockerfile:
            text = _artifact(artifacts, entry).decode("utf-8", "replace")
            return [
                ln.strip() for ln in text.splitlines() if ln.strip().upper().startswith("FROM ")
            ]
    return []


def _write_meta(root: Path, base: str, it: ExportItem) -> dict[str, str | None]:
    return {
        "spec": _write(root, f"{base}/{layout.SPEC}", it.spec.model_dump_json(indent=2).encode()),
        "verifier": _write(
            root, f"{base}/{layout.VERIFIER_JSON}", it.verifier.model_dump_json(indent=2).encode()
        ),
        "gate": _write(
            root, f"{base}/{layout.GATE_REPORT}", it.gate_report.model_dump_json(indent=2).encode()
        ),
        "seed": _write(root, f"{base}/{layout.SEED}", it.seed.model_dump_json(indent=2).encode())
        if it.seed
        else None,
    }


def _environment(
    it: ExportItem,
    root: str,
    fmt: ImageFormat,
    hashes: dict[str, str | None],
    image_id: str | None = None,
) -> PackEnvironment:
    chain = ProvenanceChain(
        seed_id=it.spec.seed_id,
        env_id=it.spec.id,
        env_version=it.spec.version,
        verifier_version=it.verifier.version,
        gate_report_created_at=it.gate_report.created_at,
        seed_sha256=it.seed.content_hash if it.seed else None,
        spec_sha256=hashes["spec"],
        verifier_sha256=hashes["verifier"],
        gate_report_sha256=hashes["gate"],
        verifier_author=it.verifier.provenance.author,
        gate_verdict=it.gate_report.verdict.value,
        mutation_score=it.gate_report.mutation.score if it.gate_report.mutation else None,
        solve_rate=it.gate_report.solve_rate,
        gated_semantics=it.gate_report.semantics,
        signer=it.spec.origin.signer if it.spec.origin else None,
    )
    return PackEnvironment(
        env_id=it.spec.id,
        name=it.spec.name,
        image_format=fmt,
        provenance=chain,
        root=root,
        image_ref=image_id,
    )


def _stage_envfactory(
    staged: Path,
    it: ExportItem,
    artifacts: ArtifactReader,
    images: ImageMode,
    saver: ImageSaver | None,
) -> PackEnvironment:
    base = layout.env_root(it.spec.id)
    _write(staged, f"{base}/{layout.INSTRUCTION}", it.spec.instruction.encode())
    _write_files(staged, f"{base}/{layout.CONTEXT}", it.spec.build.files, artifacts)
    flavour = it.seed.constraints.base_image if it.seed else None
    recipe = {
        "dockerfile": it.spec.build.dockerfile,
        "flavour": flavour,
        "from": _dockerfile_from_lines(it.spec, artifacts),
    }
    _write(staged, f"{base}/{layout.BASE}", json.dumps(recipe, indent=2).encode())
    if images == "save":
        if saver is None:
            raise PublishBlocked([f"{it.spec.id}: --images save needs a Docker engine"])
        target = staged / base / layout.IMAGE_TAR
        target.parent.mkdir(parents=True, exist_ok=True)
        image_id = saver.save_image(it.spec.image or "", target)
    _write_files(staged, f"{base}/{layout.VERIFIER_FILES}", it.verifier.files, artifacts)
    hashes = _write_meta(staged, base, it)
    if images == "save":
        return _environment(it, base, "docker-save", hashes, image_id)
    return _environment(it, base, "build-context", hashes, None)


def _stage_harbor(
    staged: Path, it: ExportItem, artifacts: ArtifactReader, writer: HarborWriter
) -> PackEnvironment:
    root = layout.env_root(it.spec.id).split("/", 1)[1]  # validates the id
    writer(it.spec, it.verifier, artifacts, staged / root)
    hashes = _write_meta(staged, f"{layout.HARBOR_META}/{root}", it)
    return _environment(it, root, "build-context", hashes)


def _default_harbor_writer() -> HarborWriter:
    from verifiers.formats import export_harbor  # the tasks package owns the Harbor format

    return export_harbor


def export_pack(
    items: Sequence[ExportItem],
    out: Path,
    *,
    artifacts: ArtifactReader,
    created_by: str,
    fmt: PackFormat = "envfactory",
    images: ImageMode = "context",
    saver: ImageSaver | None = None,
    harbor_writer: HarborWriter | None = None,
    signing_key: Ed25519PrivateKey | None = None,
) -> PackManifest:
    """Write a pack to `out`: a tar when it ends in .tar / .tar.gz, else a new folder;
    signed (pack.sig) when `signing_key` is given."""
    guard(items, images if fmt == "envfactory" else "context", fmt)
    out = Path(out)
    as_tar = out.name.endswith((".tar", ".tar.gz", ".tgz"))
    if out.exists() and (as_tar or any(out.iterdir())):
        raise PublishBlocked([f"{out}: already exists; choose a new path"])
    out.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=".pack-", dir=out.parent)) if as_tar else out
    try:
        staged.mkdir(parents=True, exist_ok=True)
        envs = [
            _stage_envfactory(staged, it, artifacts, images, saver)
            if fmt == "envfactory"
            else _stage_harbor(staged, it, artifacts, harbor_writer or _default_harbor_writer())
            for it in items
        ]
        manifest = build_manifest(staged, envs, created_by=created_by, fmt=fmt)
        manifest_path = write_manifest(staged, manifest)
        if signing_key is not None:
            _sign(staged, manifest_path.read_bytes(), signing_key)
        if as_tar:
            _tar_folder(staged, out)
        return manifest
    except BaseException:
        if not as_tar:
            shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        if as_tar:
            shutil.rmtree(staged, ignore_errors=True)


def _sign(staged: Path, manifest: bytes, key: Ed25519PrivateKey) -> None:
    from .signing import sign_manifest

    signature = sign_manifest(manifest, key)
    (staged / layout.SIGNATURE).write_text(signature.model_dump_json(indent=2) + "\n")


def _normalise(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def _tar_folder(staged: Path, out: Path) -> None:
    """pack.json, pack.sig, then sorted files: a streaming reader checks the manifest and
    its signature before it meets any member."""
    tmp = out.with_name(out.name + ".partial")
    mode = "w:gz" if out.name.endswith((".gz", ".tgz")) else "w"
    files = sorted(p for p in staged.rglob("*") if p.is_file())
    order = {name: i for i, name in enumerate(layout.NOT_MEMBERS)}
    files.sort(key=lambda p: order.get(p.relative_to(staged).as_posix(), len(order)))
    with tarfile.open(tmp, mode) as tf:  # type: ignore[call-overload]
        for p in files:
            tf.add(p, arcname=p.relative_to(staged).as_posix(), recursive=False, filter=_normalise)
    tmp.replace(out)
