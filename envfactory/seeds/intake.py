"""Seed intake: load and validate a seed file or directory, then store it.

``load_seed`` has no side effects: it reads, validates and reports *every* problem at once
as one ``InvalidSeed``. ``submit_seed`` stores a valid seed as one logical operation:
attachments go to the content-addressed artifact store first, the seed row last, in one
transaction. If anything fails before the row commits, the seed does not exist; artifacts
already written are harmless (content-addressed, shared, never half-written).

A seed's id is derived from its content hash, which covers title, description, domain,
repository, constraints and every attachment (path and bytes) but not ``source``: the same
work submitted twice, from anywhere, is a duplicate.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from envfactory.core.errors import Conflict, InvalidSeed
from envfactory.core.models import Attachment, SeedHistory, TaskSeed
from envfactory.core.settings import SeedLimits
from envfactory.store import ArtifactStore, Store

from . import files
from .format import SeedFile, decode_utf8, parse_yaml, validate_fields
from .problems import Problem, raise_if_any

SEED_FILE_NAMES = ("seed.yaml", "seed.yml")


@dataclass(frozen=True)
class SeedDraft:
    """A validated seed, not yet stored: the fields, the attachment bytes, the content hash."""

    fields: SeedFile
    files: tuple[files.LoadedFile, ...]
    content_hash: str
    label: str  # the seed file as the user named it, for messages

    @property
    def seed_id(self) -> str:
        return f"seed-{self.content_hash[:12]}"


def locate(path: Path) -> tuple[Path, Path, bool]:
    """(seed file, seed directory, whether a directory was given) for a FILE or DIR."""
    if path.is_symlink():
        raise InvalidSeed(str(path), "is a symlink", hint="pass the real file or directory")
    if path.is_dir():
        for name in SEED_FILE_NAMES:
            if (path / name).exists() or (path / name).is_symlink():
                return path / name, path, True
        raise InvalidSeed(
            str(path),
            "has no seed.yaml",
            hint="put the seed fields in seed.yaml inside this directory",
        )
    if path.is_file():
        return path, path.parent, False
    raise InvalidSeed(
        str(path), "does not exist", hint="pass a seed.yaml file or a directory holding one"
    )


def load_seed(path: Path | str, limits: SeedLimits) -> SeedDraft:
    """Read and validate a seed; raise InvalidSeed listing every problem. Writes nothing."""
    seed_file, seed_dir, given_dir = locate(Path(path))
    label = str(seed_file)
    raw = _read_seed_file(seed_file, label, limits)
    text, bad = decode_utf8(raw, label, seed_file.name)
    raise_if_any([bad] if bad else [], label)
    data, bad = parse_yaml(text or "", label)
    raise_if_any([bad] if bad else [], label)
    assert data is not None
    fields, problems = validate_fields(data, label)
    loaded, file_problems = _attachments(data, seed_file, seed_dir, given_dir, label, limits)
    raise_if_any(problems + file_problems, label)
    assert fields is not None
    return SeedDraft(fields, tuple(loaded), content_hash(fields, loaded), label)


def _read_seed_file(seed_file: Path, label: str, limits: SeedLimits) -> bytes:
    if seed_file.is_symlink():
        raise InvalidSeed(label, "is a symlink", hint="replace it with the real file")
    size = seed_file.stat().st_size
    if size > limits.max_attachment_bytes:
        raise InvalidSeed(
            label,
            f"is too large ({size} bytes, at most {limits.max_attachment_bytes})",
            hint="move long material into an attached file",
        )
    return seed_file.read_bytes()


def _attachments(
    data: dict[str, object],
    seed_file: Path,
    seed_dir: Path,
    given_dir: bool,
    label: str,
    limits: SeedLimits,
) -> tuple[list[files.LoadedFile], list[Problem]]:
    """Listed attachments; with no ``attachments`` key, a DIR seed attaches all its files
    and a FILE seed none."""
    if "attachments" not in data:
        if not given_dir:
            return [], []
        paths, problems = files.all_files(seed_dir, seed_file, limits)
    else:
        listed, problems = files.entries(data["attachments"], label)
        if problems:
            return [], problems
        paths, problems = files.resolve(seed_dir, listed, seed_file, limits)
    if problems:
        return [], problems
    return files.read_all(seed_dir, paths, limits)


def content_hash(fields: SeedFile, loaded: list[files.LoadedFile]) -> str:
    doc = {
        "title": fields.title,
        "description": fields.description,
        "domain": fields.domain,
        "repository": fields.repository,
        # unset optional constraints are left out, so adding one never changes old hashes
        "constraints": fields.constraints.model_dump(mode="json", exclude_none=True),
        "attachments": sorted((f.path, hashlib.sha256(f.data).hexdigest()) for f in loaded),
    }
    if fields.history is not None:  # left out when unset, so older hashes stay the same
        doc["history"] = fields.history.model_dump(mode="json")
    canonical = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def submit_seed(
    path: Path | str, *, store: Store, artifacts: ArtifactStore, limits: SeedLimits
) -> TaskSeed:
    """Validate and store a seed; InvalidSeed (nothing stored) if it is bad or a duplicate."""
    return store_draft(load_seed(path, limits), store=store, artifacts=artifacts)


def store_draft(draft: SeedDraft, *, store: Store, artifacts: ArtifactStore) -> TaskSeed:
    """Store a validated seed: attachments first, the seed row last in one transaction."""
    existing = store.seeds.find_by_hash(draft.content_hash)
    if existing is not None:
        raise _duplicate(existing, draft.label)
    attachments = tuple(
        Attachment(path=f.path, key=artifacts.put_bytes(f.data), size=len(f.data))
        for f in draft.files
    )
    fields = draft.fields
    seed = TaskSeed(
        id=draft.seed_id,
        title=fields.title,
        description=fields.description,
        domain=fields.domain,
        attachments=attachments,
        repository=fields.repository,
        history=SeedHistory.model_validate(fields.history.model_dump()) if fields.history else None,
        constraints=fields.constraints,
        source=fields.source,
        content_hash=draft.content_hash,
    )
    try:
        with store.session() as tx:
            tx.seeds.add(seed)
    except Conflict as exc:  # a concurrent submit of the same seed won the race
        raise _duplicate(store.seeds.find_by_hash(draft.content_hash) or seed, draft.label) from exc
    return seed


def _duplicate(existing: TaskSeed, label: str) -> InvalidSeed:
    return InvalidSeed(
        label,
        f"is a duplicate of {existing.id} ('{existing.title}', submitted "
        f"{existing.created_at:%Y-%m-%d %H:%M} UTC)",
        hint=f"it is already stored: `envfactory seed show {existing.id}`; change the seed to submit a new one",
    )
