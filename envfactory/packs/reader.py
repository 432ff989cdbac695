"""Read one environment out of a verified pack folder.

Invariants:
- only called on a `VerifiedPack` (every member's hash already checked);
- each file named by the spec or the verifier is checked once more against its own
  content key, so spec.json, verifier.json and the files they name agree;
- the solver-side view (`instruction`, image, build context) and the verifier side
  (`verifier`, `verifier_files`) are separate attributes; nothing here copies the
  verifier anywhere.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from envfactory.core.errors import InvalidPack
from envfactory.core.models import (
    EnvironmentSpec,
    FileEntry,
    GateReport,
    PackEnvironment,
    TaskSeed,
    Verifier,
)

from . import layout
from .images import ImageIO
from .safety import check_member_name
from .verify import VerifiedPack


@dataclass(frozen=True)
class EnvPaths:
    """Where one environment's parts are on disk, for either pack format."""

    instruction: Path
    context: Path
    verifier_files: Path
    verifier_json: Path
    spec: Path
    gate_report: Path
    seed: Path
    base: Path | None
    image_tar: Path | None

    @classmethod
    def of(cls, root: Path, fmt: str, env_root: str) -> EnvPaths:
        if fmt == "harbor":
            task = root / env_root
            meta = root / layout.HARBOR_META / env_root
            return cls(
                task / "instruction.md",
                task / "environment",
                task / "tests",
                meta / layout.VERIFIER_JSON,
                meta / layout.SPEC,
                meta / layout.GATE_REPORT,
                meta / layout.SEED,
                None,
                None,
            )
        f = root / env_root
        return cls(
            f / layout.INSTRUCTION,
            f / layout.CONTEXT,
            f / layout.VERIFIER_FILES,
            f / layout.VERIFIER_JSON,
            f / layout.SPEC,
            f / layout.GATE_REPORT,
            f / layout.SEED,
            f / layout.BASE,
            f / layout.IMAGE_TAR,
        )


@dataclass(frozen=True)
class PackedEnvironment:
    """Everything a pack holds for one environment, loaded and cross-checked."""

    pack_id: str
    entry: PackEnvironment
    paths: EnvPaths
    spec: EnvironmentSpec
    verifier: Verifier
    gate_report: GateReport
    seed: TaskSeed | None
    instruction: str
    base_recipe: dict[str, object]

    @property
    def env_id(self) -> str:
        return self.spec.id

    def load_image(self, images: ImageIO) -> str | None:
        """Load this environment's image archive, when the pack holds one (tagged in the
        pack's namespace, checked against the id the manifest recorded)."""
        tar = self.image_tar
        if tar is None:
            return None
        return images.load_image(
            tar, pack_id=self.pack_id, env_id=self.env_id, image_id=self.entry.image_ref
        )

    @property
    def image_tar(self) -> Path | None:
        p = self.paths.image_tar
        return p if self.entry.image_format == "docker-save" and p and p.is_file() else None

    def context_files(self) -> dict[str, tuple[bytes, int]]:
        return _files(self.paths.context, self.spec.build.files, self.env_id)

    def context_tar(self) -> bytes:
        """The build context as a tar, for `SandboxEngine.build`."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tf:
            for path, (data, mode) in sorted(self.context_files().items()):
                info = tarfile.TarInfo(path)
                info.size, info.mode = len(data), mode
                tf.addfile(info, io.BytesIO(data))
        return buf.getvalue()

    def verifier_files(self) -> dict[str, bytes]:
        """Verifier files by content key: a `FileSource` for `verifiers.runner`."""
        found = _files(self.paths.verifier_files, self.verifier.files, self.env_id)
        return {e.key: found[e.path][0] for e in self.verifier.files}

    def all_artifacts(self) -> dict[str, bytes]:
        """Every blob the spec and verifier name, by key (for registering in a store)."""
        context = self.context_files()
        out = {e.key: context[e.path][0] for e in self.spec.build.files}
        out.update(self.verifier_files())
        return out


def _files(base: Path, entries: tuple[FileEntry, ...], env_id: str) -> dict[str, tuple[bytes, int]]:
    out: dict[str, tuple[bytes, int]] = {}
    for e in entries:
        path = base / check_member_name(e.path)
        if not path.is_file():
            raise InvalidPack(
                f"environment {env_id}: {path.name} named by the spec is not in the pack"
            )
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != e.key:
            raise InvalidPack(
                f"environment {env_id}: {e.path} does not match its key {e.key[:12]}…"
            )
        out[e.path] = (data, e.mode)
    return out


_M = TypeVar("_M", bound=BaseModel)


def _model(cls: type[_M], path: Path) -> _M:
    try:
        return cls.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as e:
        raise InvalidPack(f"{path}: not a valid {cls.__name__} ({e})") from e


def read_environment(pack: VerifiedPack, entry: PackEnvironment) -> PackedEnvironment:
    if pack.root is None:
        raise InvalidPack(f"{pack.source}: open the pack (extract it) before reading environments")
    default_root = layout.env_root(entry.env_id)
    if pack.manifest.format == "harbor":
        default_root = default_root.split("/", 1)[1]
    paths = EnvPaths.of(
        pack.root, pack.manifest.format, check_member_name(entry.root or default_root)
    )
    spec = _model(EnvironmentSpec, paths.spec)
    verifier = _model(Verifier, paths.verifier_json)
    if spec.id != entry.env_id or verifier.env_id != entry.env_id:
        raise InvalidPack(f"environment {entry.env_id}: spec or verifier belongs to another id")
    return PackedEnvironment(
        pack_id=pack.manifest.id,
        entry=entry,
        paths=paths,
        spec=spec,
        verifier=verifier,
        gate_report=_model(GateReport, paths.gate_report),
        seed=_model(TaskSeed, paths.seed) if paths.seed.is_file() else None,
        instruction=paths.instruction.read_text(),
        base_recipe=json.loads(paths.base.read_text())
        if paths.base and paths.base.is_file()
        else {},
    )
