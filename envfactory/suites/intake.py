"""`import_tasks`: task directories → stored `EnvironmentSpec` + `Verifier`, status imported.

Each task stands alone: a task that cannot be read is an `ImportFailure` (the error names
the task and what to fix) and nothing of it reaches the database, while the others are
stored. An unchanged task imported again finds its own env id and is reported as
`new=False`; the first import's origin (suite, path, commit) stays the record. Blobs of a
task that failed half-way may remain in the content-addressed artifact store, which
holds bytes only, never a task.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from envfactory.core.errors import Conflict, EnvFactoryError
from envfactory.core.models import (
    EnvironmentSpec,
    EnvStatus,
    LimitCaps,
    TaskFileLimits,
    TaskOrigin,
)
from envfactory.store import ArtifactStore, Store
from verifiers.formats import CLAMPED, ImportedTask, load_task

from .discover import find_tasks, suite_name
from .origin import file_hashes, git_origin


@dataclass(frozen=True)
class ImportedEntry:
    env_id: str
    name: str
    suite: str
    path: Path
    format: str
    new: bool  # False: the same content was stored before
    warnings: tuple[str, ...] = ()  # limits clamped to the operator's ceilings


@dataclass(frozen=True)
class ImportFailure:
    path: Path
    error: EnvFactoryError


@dataclass
class ImportReport:
    imported: list[ImportedEntry] = field(default_factory=list)
    failed: list[ImportFailure] = field(default_factory=list)


def import_tasks(
    paths: Iterable[Path],
    store: Store,
    artifacts: ArtifactStore,
    *,
    suite: str | None = None,
    caps: LimitCaps | None = None,
    files: TaskFileLimits | None = None,
) -> ImportReport:
    """Import every task at or under each path (see `find_tasks`), its limits clamped to
    `caps` (the operator's ceilings); a task holding more than `files` allow is refused
    before any of it is stored."""
    report = ImportReport()
    for path in paths:
        try:
            tasks = find_tasks(Path(path))
        except EnvFactoryError as exc:
            report.failed.append(ImportFailure(Path(path), exc))
            continue
        name = suite or suite_name(Path(path))
        for task_dir in tasks:
            try:
                report.imported.append(
                    import_one(task_dir, store, artifacts, suite=name, caps=caps, files=files)
                )
            except EnvFactoryError as exc:
                report.failed.append(ImportFailure(task_dir, exc))
    return report


def import_one(
    task_dir: Path,
    store: Store,
    artifacts: ArtifactStore,
    *,
    suite: str,
    caps: LimitCaps | None = None,
    files: TaskFileLimits | None = None,
) -> ImportedEntry:
    """Read, then store spec and verifier together (or find them stored already)."""
    task = load_task(task_dir, artifacts, caps, files)
    spec = task.spec.model_copy(update={"origin": origin_of(task_dir, artifacts, suite)})
    new = _store(store, spec, task)
    stored = spec if new else store.environments.get(spec.id)
    return ImportedEntry(
        env_id=spec.id,
        name=spec.name,
        path=task_dir,
        format=task.format,
        new=new,
        suite=(stored.origin.suite if stored.origin else None) or suite,
        warnings=tuple(n for n in task.notes if CLAMPED in n),
    )


def origin_of(task_dir: Path, artifacts: ArtifactStore, suite: str) -> TaskOrigin:
    hashes = json.dumps(file_hashes(task_dir), sort_keys=True, indent=1).encode()
    repository, commit = git_origin(task_dir)
    return TaskOrigin(
        suite=suite,
        path=str(task_dir),
        repository=repository,
        commit=commit,
        files_key=artifacts.put_bytes(hashes),
    )


def _store(store: Store, spec: EnvironmentSpec, task: ImportedTask) -> bool:
    with store.session() as tx:
        if tx.environments.versions(spec.id):
            return False
        try:
            tx.environments.add(spec, EnvStatus.IMPORTED)
        except Conflict:  # a concurrent import of the same content won
            return False
        tx.verifiers.add(task.verifier)
    return True
