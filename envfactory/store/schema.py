"""The database schema: SQLAlchemy 2 typed ORM rows for every stored domain object.

Design: each row keeps the columns we filter, join or order on, plus ``doc``, a JSON column
holding the frozen pydantic model's ``model_dump(mode="json")``; reading validates ``doc``
back into the model, so a stored object round-trips exactly. Review items are the
exception: their mutable fields (state, reviewer, decided_at) are plain columns, because
decisions are conditional UPDATEs on them.

Portability (SQLite and PostgreSQL, one set of Alembic migrations): a naming convention on
the metadata so constraint names are stable; status vocabularies as ``String(32)`` (the
Enum lives in Python, so adding a value needs no migration); JSON; timezone-aware UTC
datetimes. Alembic's autogenerate against this metadata must report no difference from
``migrations/`` (a test checks it).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

ID = String(64)
NAME = String(200)
STATUS = String(32)


class UtcDateTime(TypeDecorator[datetime]):
    """Aware datetimes in, aware UTC datetimes out, on both backends.

    SQLite has no time zones: values are stored as UTC and the zone is put back on load.
    A naive datetime is refused rather than guessed.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: pass an aware datetime (UTC)")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UtcDateTime(), dict[str, Any]: JSON()}


class SeedRow(Base):
    __tablename__ = "seeds"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    content_hash: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(Text)
    domain: Mapped[str] = mapped_column(NAME, index=True)
    #: the list summary's counts (``SeedSummary``), so a list never loads ``doc``
    attachments: Mapped[int] = mapped_column(Integer, server_default="0")
    attachment_bytes: Mapped[int] = mapped_column(BigInteger, server_default="0")
    description_chars: Mapped[int] = mapped_column(Integer, server_default="0")
    created_at: Mapped[datetime] = mapped_column(index=True)
    doc: Mapped[dict[str, Any]]


class EnvironmentRow(Base):
    """One version of an environment spec. ``status`` belongs to the version."""

    __tablename__ = "environments"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(NAME)
    seed_id: Mapped[str | None] = mapped_column(ID, index=True)
    #: the suite an imported task belongs to (``spec.origin.suite``); None for synthesized
    suite: Mapped[str | None] = mapped_column(NAME, index=True)
    status: Mapped[str] = mapped_column(STATUS, index=True)
    image: Mapped[str | None] = mapped_column(NAME)
    build: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # BuildResult, once built
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    doc: Mapped[dict[str, Any]]


class VerifierRow(Base):
    __tablename__ = "verifiers"

    env_id: Mapped[str] = mapped_column(ID, primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    author: Mapped[str] = mapped_column(NAME)
    created_at: Mapped[datetime]
    doc: Mapped[dict[str, Any]]


class GateReportRow(Base):
    __tablename__ = "gate_reports"
    __table_args__ = (Index("ix_gate_reports_env_version", "env_id", "verifier_version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    env_id: Mapped[str] = mapped_column(ID)
    verifier_version: Mapped[int] = mapped_column(Integer)
    verdict: Mapped[str] = mapped_column(STATUS)
    created_at: Mapped[datetime]
    doc: Mapped[dict[str, Any]]


class TrajectoryRow(Base):
    __tablename__ = "trajectories"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    role: Mapped[str] = mapped_column(STATUS, index=True)
    env_id: Mapped[str | None] = mapped_column(ID, index=True)
    model: Mapped[str] = mapped_column(NAME)
    reward: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime]
    doc: Mapped[dict[str, Any]]


class FindingRow(Base):
    __tablename__ = "findings"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    env_id: Mapped[str] = mapped_column(ID, index=True)
    source: Mapped[str] = mapped_column(STATUS)
    rule: Mapped[str] = mapped_column(NAME)
    #: ``rules`` or ``model`` (``ShortcutFinding.found_by``); rows older than 0005: rules
    found_by: Mapped[str] = mapped_column(STATUS, index=True, server_default="rules")
    created_at: Mapped[datetime]
    doc: Mapped[dict[str, Any]]


class ReviewItemRow(Base):
    """The review queue. Columns mirror ``ReviewItem``; the claim columns are queue-only."""

    __tablename__ = "review_items"
    __table_args__ = (Index("ix_review_items_state_created", "state", "created_at"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    finding_id: Mapped[str] = mapped_column(ForeignKey("findings.id"), index=True)
    env_id: Mapped[str] = mapped_column(ID, index=True)
    state: Mapped[str] = mapped_column(STATUS)
    reviewer: Mapped[str | None] = mapped_column(NAME)
    comment: Mapped[str] = mapped_column(Text)
    decided_at: Mapped[datetime | None]
    claimed_by: Mapped[str | None] = mapped_column(NAME)
    lease_until: Mapped[datetime | None]
    created_at: Mapped[datetime]


class ReviewDecisionRow(Base):
    """Append-only audit of decisions: who, when, the item before and after."""

    __tablename__ = "review_decisions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    review_id: Mapped[str] = mapped_column(ForeignKey("review_items.id"), index=True)
    reviewer: Mapped[str] = mapped_column(NAME)
    decision: Mapped[str] = mapped_column(STATUS)
    at: Mapped[datetime]
    before: Mapped[dict[str, Any]]
    after: Mapped[dict[str, Any]]
    #: how ``reviewer`` was established (``AuthMethod``); rows older than 0003: "unrecorded"
    auth: Mapped[str] = mapped_column(STATUS, server_default="unrecorded")
    #: what was claimed but not verified, e.g. a local operator's ``--as`` name
    note: Mapped[str] = mapped_column(Text, server_default="")


class ReviewerRow(Base):
    """Who may use the review API and pages. Only the sha256 of a token is stored."""

    __tablename__ = "reviewers"

    name: Mapped[str] = mapped_column(NAME, primary_key=True)
    role: Mapped[str] = mapped_column(STATUS)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]


class ReviewerSessionRow(Base):
    """A signed-in review-page session (the cookie's value, stored only as sha256)."""

    __tablename__ = "reviewer_sessions"

    token_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    reviewer: Mapped[str] = mapped_column(ForeignKey("reviewers.name"), index=True)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime] = mapped_column(index=True)


class PackRow(Base):
    __tablename__ = "packs"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    created_by: Mapped[str] = mapped_column(NAME)
    archive_key: Mapped[str | None] = mapped_column(String(64))
    #: the list summary's fields (``PackSummary``), so a list never loads ``doc``
    format: Mapped[str] = mapped_column(STATUS, server_default="envfactory")
    environments: Mapped[int] = mapped_column(Integer, server_default="0")
    members: Mapped[int] = mapped_column(Integer, server_default="0")
    bytes: Mapped[int] = mapped_column(BigInteger, server_default="0")
    created_at: Mapped[datetime] = mapped_column(index=True)
    doc: Mapped[dict[str, Any]]


class AgentEvalRow(Base):
    """One `envfactory agents eval` run: its attempts live in ``doc`` (an ``EvalRun``)."""

    __tablename__ = "agent_evals"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    role: Mapped[str] = mapped_column(STATUS, index=True)
    model: Mapped[str] = mapped_column(NAME)
    created_at: Mapped[datetime] = mapped_column(index=True)
    doc: Mapped[dict[str, Any]]


metadata = Base.metadata
