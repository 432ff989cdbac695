"""Repositories: typed reads and writes of domain models, one class per stored object.

Each repository works inside the caller's transaction (a ``Session``); it never commits.
Reads return frozen pydantic models validated from the stored ``doc``, never ORM rows, so
nothing leaks a session. Inserting an id that exists raises ``Conflict`` (inside a
savepoint, so the surrounding transaction stays usable); a missing id raises ``NotFound``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import JSON, cast, func, select, type_coerce, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from envfactory.core.errors import Conflict, NotFound
from envfactory.core.models import (
    BuildResult,
    EnvironmentSpec,
    EnvStatus,
    EnvSummary,
    GateReport,
    Model,
    PackManifest,
    PackSummary,
    SeedSummary,
    ShortcutFinding,
    SolveRate,
    TaskSeed,
    Trajectory,
    Verifier,
    utcnow,
)

from .pages import AnySelect, Key, Page, keyset_page
from .schema import (
    Base,
    EnvironmentRow,
    FindingRow,
    GateReportRow,
    PackRow,
    SeedRow,
    TrajectoryRow,
    VerifierRow,
)

M = TypeVar("M", bound=Model)
VERSION_RETRIES = 5
#: a spec's ``source`` when its stored document has none
DEFAULT_SOURCE: str = EnvironmentSpec.model_fields["source"].default


def _json_without(column: Any, key: str, dialect: str) -> Any:
    """``column``'s JSON object less one top-level key, computed by the database (one parse
    of the document; PostgreSQL's jsonb ``-``, SQLite's ``json_remove``)."""
    if dialect == "postgresql":
        return type_coerce(cast(column, JSONB).op("-")(key), JSON)
    return type_coerce(func.json_remove(column, f"$.{key}"), JSON)


def dump(model: Model) -> dict[str, Any]:
    """The JSON document stored for a model; ``Model.model_validate`` reverses it exactly."""
    return model.model_dump(mode="json")


class _Repo:
    def __init__(self, session: Session) -> None:
        self.s = session

    def _insert(self, row: Base, what: str) -> None:
        try:
            with self.s.begin_nested():
                self.s.add(row)
        except IntegrityError as exc:
            if "foreign key" in str(exc.orig).lower():
                raise NotFound(f"{what} refers to a row that is not stored: {exc.orig}") from exc
            raise Conflict(f"{what} already exists", hint="use a new id or version") from exc

    def _next_version(self, insert: Callable[[int], None], current_max: Callable[[], int]) -> int:
        """Insert at max+1; a concurrent writer that took the same number makes us retry."""
        for _ in range(VERSION_RETRIES):
            version = current_max() + 1
            try:
                insert(version)
                return version
            except Conflict:
                continue
        raise Conflict(f"could not allocate a version after {VERSION_RETRIES} tries")


class SeedRepo(_Repo):
    def add(self, seed: TaskSeed) -> None:
        row = SeedRow(
            id=seed.id,
            content_hash=seed.content_hash,
            title=seed.title,
            domain=seed.domain,
            attachments=len(seed.attachments),
            attachment_bytes=sum(a.size for a in seed.attachments),
            description_chars=len(seed.description),
            created_at=seed.created_at,
            doc=dump(seed),
        )
        self._insert(row, f"seed {seed.id} (content {seed.content_hash[:12]})")

    def get(self, seed_id: str) -> TaskSeed:
        row = self.s.get(SeedRow, seed_id)
        if row is None:
            raise NotFound(f"no seed {seed_id!r}", hint="`envfactory seed list` shows the ids")
        return TaskSeed.model_validate(row.doc)

    def detail(self, seed_id: str) -> tuple[dict[str, Any], int]:
        """The seed's stored document but its description, and the description's length in
        characters. The description (megabytes, at most) is left in the database, which
        removes it from ``doc`` before the row is sent."""
        dialect = self.s.get_bind().dialect.name
        row = self.s.execute(
            select(
                _json_without(SeedRow.doc, "description", dialect), SeedRow.description_chars
            ).where(SeedRow.id == seed_id)
        ).first()
        if row is None:
            raise NotFound(f"no seed {seed_id!r}", hint="`envfactory seed list` shows the ids")
        return dict(row[0]), row[1]

    def description(self, seed_id: str) -> str:
        """The seed's description alone, read from ``doc`` by the database."""
        text = self.s.scalar(
            select(SeedRow.doc["description"].as_string()).where(SeedRow.id == seed_id)
        )
        if text is None:
            raise NotFound(f"no seed {seed_id!r}", hint="`envfactory seed list` shows the ids")
        return str(text)

    def find_by_hash(self, content_hash: str) -> TaskSeed | None:
        row = self.s.scalars(select(SeedRow).where(SeedRow.content_hash == content_hash)).first()
        return None if row is None else TaskSeed.model_validate(row.doc)

    def list(
        self, *, domain: str | None = None, limit: int = 100, offset: int = 0
    ) -> list[TaskSeed]:
        q = select(SeedRow).order_by(SeedRow.created_at.desc(), SeedRow.id)
        if domain is not None:
            q = q.where(SeedRow.domain == domain)
        return [
            TaskSeed.model_validate(r.doc) for r in self.s.scalars(q.limit(limit).offset(offset))
        ]

    def list_page(
        self, *, domain: str | None = None, after: Key | None = None, limit: int = 50
    ) -> Page[SeedSummary]:
        """Summaries, newest first (``created_at, id`` descending); the doc is not read."""
        q = select(
            SeedRow.id,
            SeedRow.title,
            SeedRow.domain,
            SeedRow.attachments,
            SeedRow.attachment_bytes,
            SeedRow.description_chars,
            SeedRow.created_at,
        )
        if domain is not None:
            q = q.where(SeedRow.domain == domain)
        order = ((SeedRow.created_at, True), (SeedRow.id, True))
        return keyset_page(
            self.s,
            q,
            order,
            after=after,
            limit=limit,
            build=lambda r: SeedSummary.model_validate(r._asdict()),
        )

    def count(self) -> int:
        return self.s.scalar(select(func.count()).select_from(SeedRow)) or 0


@dataclass(frozen=True)
class EnvironmentRecord:
    """One stored environment version with its lifecycle status and build result."""

    spec: EnvironmentSpec
    status: EnvStatus
    build: BuildResult | None
    updated_at: datetime


class EnvironmentRepo(_Repo):
    def add(self, spec: EnvironmentSpec, status: EnvStatus = EnvStatus.DRAFT) -> None:
        """Store ``spec`` at exactly ``spec.version``; Conflict if that version exists."""
        now = utcnow()
        row = EnvironmentRow(
            id=spec.id,
            version=spec.version,
            name=spec.name,
            seed_id=spec.seed_id,
            suite=spec.origin.suite if spec.origin else None,
            status=status.value,
            image=spec.image,
            build=None,
            created_at=spec.created_at,
            updated_at=now,
            doc=dump(spec),
        )
        self._insert(row, f"environment {spec.id} v{spec.version}")

    def add_version(
        self, spec: EnvironmentSpec, status: EnvStatus = EnvStatus.DRAFT
    ) -> EnvironmentSpec:
        """Store ``spec`` as the next version of ``spec.id``; returns it with that version."""
        stored: list[EnvironmentSpec] = []

        def insert(version: int) -> None:
            stored[:] = [spec.model_copy(update={"version": version})]
            self.add(stored[0], status)

        self._next_version(insert, lambda: max(self.versions(spec.id), default=0))
        return stored[0]

    def versions(self, env_id: str) -> list[int]:
        q = select(EnvironmentRow.version).where(EnvironmentRow.id == env_id)
        return sorted(self.s.scalars(q))

    def _row(self, env_id: str, version: int | None) -> EnvironmentRow:
        if version is None:
            version = max(self.versions(env_id), default=0)
        row = self.s.get(EnvironmentRow, (env_id, version))
        if row is None:
            raise NotFound(f"no environment {env_id!r} version {version}")
        return row

    def get(self, env_id: str, version: int | None = None) -> EnvironmentSpec:
        """The spec at ``version``, or the latest version when None."""
        return EnvironmentSpec.model_validate(self._row(env_id, version).doc)

    def record(self, env_id: str, version: int | None = None) -> EnvironmentRecord:
        return _env_record(self._row(env_id, version))

    def set_status(
        self, env_id: str, version: int, status: EnvStatus, *, expect: EnvStatus | None = None
    ) -> None:
        """Move a version to ``status``; with ``expect``, only from that status (else Conflict)."""
        q = update(EnvironmentRow).where(
            EnvironmentRow.id == env_id, EnvironmentRow.version == version
        )
        if expect is not None:
            q = q.where(EnvironmentRow.status == expect.value)
        res = self.s.execute(q.values(status=status.value, updated_at=utcnow()))
        if res.rowcount != 1:  # type: ignore[attr-defined]
            now = self._row(env_id, version).status  # NotFound if it does not exist
            raise Conflict(f"environment {env_id} v{version} is {now}, expected {expect}")

    def set_build(
        self, env_id: str, version: int, build: BuildResult, service_images: Sequence[str] = ()
    ) -> EnvironmentSpec:
        """Record a build: the result, and the image ids (its own, its services') on the
        spec itself."""
        row = self._row(env_id, version)
        spec = EnvironmentSpec.model_validate(row.doc)
        services = tuple(
            s.model_copy(update={"image": image})
            for s, image in zip(spec.services, service_images, strict=False)
        )
        spec = spec.model_copy(update={"image": build.image, "services": services or spec.services})
        row.doc, row.image, row.build, row.updated_at = (
            dump(spec),
            build.image,
            dump(build),
            utcnow(),
        )
        self.s.flush()
        return spec

    def settle(self, spec: EnvironmentSpec) -> None:
        """Store what a build settled in ``spec`` (its image's workdir) over the version it
        was read from: the same id and version, never a new one."""
        row = self._row(spec.id, spec.version)
        row.doc, row.updated_at = dump(spec), utcnow()
        self.s.flush()

    def list(
        self,
        *,
        status: EnvStatus | None = None,
        seed_id: str | None = None,
        suite: str | None = None,
        latest_only: bool = True,
    ) -> list[EnvironmentRecord]:
        q = select(EnvironmentRow).order_by(EnvironmentRow.id, EnvironmentRow.version)
        if latest_only:
            q = _latest(q)
        q = _env_filters(q, status=status, seed_id=seed_id, suite=suite)
        return [_env_record(r) for r in self.s.scalars(q)]

    def list_page(
        self,
        *,
        status: EnvStatus | None = None,
        seed_id: str | None = None,
        suite: str | None = None,
        imported: bool = False,
        after: Key | None = None,
        limit: int = 50,
    ) -> Page[EnvSummary]:
        """Summaries of the latest versions, by id; ``imported``: only tasks with an origin
        (``envfactory task import``). The doc is not loaded: ``source`` and ``origin`` are
        read inside the database."""
        source = func.coalesce(EnvironmentRow.doc["source"].as_string(), DEFAULT_SOURCE)
        q = select(
            EnvironmentRow.id,
            EnvironmentRow.version,
            EnvironmentRow.name,
            EnvironmentRow.status,
            EnvironmentRow.seed_id,
            EnvironmentRow.suite,
            source.label("source"),
            EnvironmentRow.updated_at,
        )
        q = _env_filters(_latest(q), status=status, seed_id=seed_id, suite=suite)
        if imported:
            q = q.where(EnvironmentRow.doc["origin"].as_string().is_not(None))
        order = ((EnvironmentRow.id, False),)
        return keyset_page(
            self.s,
            q,
            order,
            after=after,
            limit=limit,
            build=lambda r: EnvSummary.model_validate(r._asdict()),
        )


def _latest(q: AnySelect) -> AnySelect:
    """Only the highest version of each environment."""
    latest = (
        select(EnvironmentRow.id, func.max(EnvironmentRow.version).label("v"))
        .group_by(EnvironmentRow.id)
        .subquery()
    )
    return q.join(
        latest, (EnvironmentRow.id == latest.c.id) & (EnvironmentRow.version == latest.c.v)
    )


def _env_filters(
    q: AnySelect, *, status: EnvStatus | None, seed_id: str | None, suite: str | None
) -> AnySelect:
    if status is not None:
        q = q.where(EnvironmentRow.status == status.value)
    if seed_id is not None:
        q = q.where(EnvironmentRow.seed_id == seed_id)
    if suite is not None:
        q = q.where(EnvironmentRow.suite == suite)
    return q


def _env_record(row: EnvironmentRow) -> EnvironmentRecord:
    return EnvironmentRecord(
        spec=EnvironmentSpec.model_validate(row.doc),
        status=EnvStatus(row.status),
        build=None if row.build is None else BuildResult.model_validate(row.build),
        updated_at=row.updated_at,
    )


class VerifierRepo(_Repo):
    def add(self, verifier: Verifier) -> None:
        row = VerifierRow(
            env_id=verifier.env_id,
            version=verifier.version,
            author=verifier.provenance.author,
            created_at=verifier.created_at,
            doc=dump(verifier),
        )
        self._insert(row, f"verifier {verifier.env_id} v{verifier.version}")

    def add_version(self, verifier: Verifier) -> Verifier:
        stored: list[Verifier] = []

        def insert(version: int) -> None:
            stored[:] = [verifier.model_copy(update={"version": version})]
            self.add(stored[0])

        self._next_version(insert, lambda: max(self.versions(verifier.env_id), default=0))
        return stored[0]

    def versions(self, env_id: str) -> list[int]:
        return sorted(
            self.s.scalars(select(VerifierRow.version).where(VerifierRow.env_id == env_id))
        )

    def get(self, env_id: str, version: int | None = None) -> Verifier:
        if version is None:
            version = max(self.versions(env_id), default=0)
        row = self.s.get(VerifierRow, (env_id, version))
        if row is None:
            raise NotFound(f"no verifier for environment {env_id!r} version {version}")
        return Verifier.model_validate(row.doc)


class GateReportRepo(_Repo):
    def add(self, report: GateReport) -> int:
        """Append a report; returns its row id (reports are never overwritten)."""
        row = GateReportRow(
            env_id=report.env_id,
            verifier_version=report.verifier_version,
            verdict=report.verdict.value,
            created_at=report.created_at,
            doc=dump(report),
        )
        self.s.add(row)
        self.s.flush()
        return row.id

    def get(self, report_id: int) -> GateReport:
        row = self.s.get(GateReportRow, report_id)
        if row is None:
            raise NotFound(f"no gate report {report_id}")
        return GateReport.model_validate(row.doc)

    def set_solve_rate(self, report_id: int, solve_rate: SolveRate) -> GateReport:
        """Scoring completes a report with the judges' solve rate (its checks never change)."""
        row = self.s.get(GateReportRow, report_id)
        if row is None:
            raise NotFound(f"no gate report {report_id}")
        report = GateReport.model_validate(row.doc).model_copy(update={"solve_rate": solve_rate})
        row.doc = dump(report)
        self.s.flush()
        return report

    def list(self, env_id: str, verifier_version: int | None = None) -> list[GateReport]:
        q = select(GateReportRow).where(GateReportRow.env_id == env_id)
        if verifier_version is not None:
            q = q.where(GateReportRow.verifier_version == verifier_version)
        q = q.order_by(GateReportRow.created_at, GateReportRow.id)
        return [GateReport.model_validate(r.doc) for r in self.s.scalars(q)]

    def latest(self, env_id: str, verifier_version: int | None = None) -> GateReport | None:
        """The last report of ``list`` (the newest), read alone."""
        q = select(GateReportRow).where(GateReportRow.env_id == env_id)
        if verifier_version is not None:
            q = q.where(GateReportRow.verifier_version == verifier_version)
        q = q.order_by(GateReportRow.created_at.desc(), GateReportRow.id.desc()).limit(1)
        row = self.s.scalars(q).first()
        return None if row is None else GateReport.model_validate(row.doc)


class TrajectoryRepo(_Repo):
    def add(self, traj: Trajectory) -> None:
        row = TrajectoryRow(
            id=traj.id,
            role=traj.role.value,
            env_id=traj.env_id,
            model=traj.model,
            reward=traj.reward,
            created_at=traj.created_at,
            doc=dump(traj),
        )
        self._insert(row, f"trajectory {traj.id}")

    def get(self, traj_id: str) -> Trajectory:
        row = self.s.get(TrajectoryRow, traj_id)
        if row is None:
            raise NotFound(f"no trajectory {traj_id!r}")
        return Trajectory.model_validate(row.doc)

    def set_reward(self, traj_id: str, reward: int) -> Trajectory:
        if reward not in (0, 1):
            raise ValueError(f"reward must be 0 or 1, got {reward!r}")
        row = self.s.get(TrajectoryRow, traj_id)
        if row is None:
            raise NotFound(f"no trajectory {traj_id!r}")
        traj = Trajectory.model_validate(row.doc).model_copy(update={"reward": reward})
        row.reward, row.doc = reward, dump(traj)
        self.s.flush()
        return traj

    def list(
        self, *, env_id: str | None = None, role: str | None = None, limit: int = 1000
    ) -> list[Trajectory]:
        q = select(TrajectoryRow).order_by(TrajectoryRow.created_at, TrajectoryRow.id)
        if env_id is not None:
            q = q.where(TrajectoryRow.env_id == env_id)
        if role is not None:
            q = q.where(TrajectoryRow.role == str(role))
        return [Trajectory.model_validate(r.doc) for r in self.s.scalars(q.limit(limit))]


class FindingRepo(_Repo):
    def add(self, finding: ShortcutFinding) -> None:
        row = FindingRow(
            id=finding.id,
            env_id=finding.env_id,
            source=finding.source,
            rule=finding.rule,
            found_by=finding.found_by,
            created_at=finding.created_at,
            doc=dump(finding),
        )
        self._insert(row, f"finding {finding.id}")

    def get(self, finding_id: str) -> ShortcutFinding:
        row = self.s.get(FindingRow, finding_id)
        if row is None:
            raise NotFound(f"no finding {finding_id!r}")
        return ShortcutFinding.model_validate(row.doc)

    def list(
        self, *, env_id: str | None = None, found_by: str | None = None
    ) -> list[ShortcutFinding]:
        q = select(FindingRow).order_by(FindingRow.created_at, FindingRow.id)
        if env_id is not None:
            q = q.where(FindingRow.env_id == env_id)
        if found_by is not None:
            q = q.where(FindingRow.found_by == found_by)
        return [ShortcutFinding.model_validate(r.doc) for r in self.s.scalars(q)]


class PackRepo(_Repo):
    def add(self, manifest: PackManifest, *, archive_key: str | None = None) -> None:
        row = PackRow(
            id=manifest.id,
            created_by=manifest.created_by,
            archive_key=archive_key,
            format=manifest.format,
            environments=len(manifest.environments),
            members=len(manifest.members),
            bytes=sum(m.size for m in manifest.members),
            created_at=manifest.created_at,
            doc=dump(manifest),
        )
        self._insert(row, f"pack {manifest.id}")

    def _row(self, pack_id: str) -> PackRow:
        row = self.s.get(PackRow, pack_id)
        if row is None:
            raise NotFound(f"no pack {pack_id!r}")
        return row

    def get(self, pack_id: str) -> PackManifest:
        return PackManifest.model_validate(self._row(pack_id).doc)

    def archive_key(self, pack_id: str) -> str | None:
        return self._row(pack_id).archive_key

    def list(self) -> list[PackManifest]:
        q = select(PackRow).order_by(PackRow.created_at.desc(), PackRow.id)
        return [PackManifest.model_validate(r.doc) for r in self.s.scalars(q)]

    def list_page(self, *, after: Key | None = None, limit: int = 50) -> Page[PackSummary]:
        """Summaries, newest first (``created_at, id`` descending); the doc is not read."""
        q = select(
            PackRow.id,
            PackRow.format,
            PackRow.created_by,
            PackRow.environments,
            PackRow.members,
            PackRow.bytes,
            PackRow.archive_key.is_not(None).label("downloadable"),
            PackRow.created_at,
        )
        order = ((PackRow.created_at, True), (PackRow.id, True))
        return keyset_page(
            self.s,
            q,
            order,
            after=after,
            limit=limit,
            build=lambda r: PackSummary.model_validate(r._asdict()),
        )
