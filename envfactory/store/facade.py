"""``Store``: the database facade the rest of envfactory uses.

    store = Store.open("sqlite:///…/envfactory.db")        # or postgresql+psycopg://…
    with store.session() as tx:                             # one transaction, commit on exit
        tx.seeds.add(seed)
        tx.reviews.decide(item_id, "ana", Decision.CONFIRM)
    store.seeds.get(seed_id)                                # one call = one transaction

Invariants: a ``session()`` commits only if its block finishes and rolls back otherwise;
write sessions on SQLite take the write lock at BEGIN (see ``db.py``), so read-then-write
logic inside them cannot lose a race halfway; driver errors surface as ``StoreError``
(retryable), our own errors (``Conflict``, ``NotFound``) pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from envfactory.core.errors import StoreError
from envfactory.core.settings import Settings

from .db import SQLITE_BEGIN, is_sqlite, make_engine
from .evals import AgentEvalRepo
from .migrate import ensure_schema
from .repositories import (
    EnvironmentRepo,
    FindingRepo,
    GateReportRepo,
    PackRepo,
    SeedRepo,
    TrajectoryRepo,
    VerifierRepo,
)
from .reviewers import ReviewerRepo
from .reviews import ReviewRepo

#: Repository methods that only read: their one-call transactions need no write lock.
_READ_PREFIXES = (
    "get",
    "list",
    "find",
    "count",
    "versions",
    "latest",
    "record",
    "audit",
    "claim_of",
)


class Tx:
    """One transaction and the repositories bound to it."""

    def __init__(self, session: Session) -> None:
        self.db = session
        self.seeds = SeedRepo(session)
        self.environments = EnvironmentRepo(session)
        self.verifiers = VerifierRepo(session)
        self.gate_reports = GateReportRepo(session)
        self.trajectories = TrajectoryRepo(session)
        self.findings = FindingRepo(session)
        self.reviews = ReviewRepo(session)
        self.packs = PackRepo(session)
        self.reviewers = ReviewerRepo(session)
        self.agent_evals = AgentEvalRepo(session)


class Store:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.url = engine.url.render_as_string(hide_password=True)
        self.is_sqlite = is_sqlite(str(engine.url))
        writer = (
            engine.execution_options(**{SQLITE_BEGIN: "IMMEDIATE"}) if self.is_sqlite else engine
        )
        self._readers = sessionmaker(engine, expire_on_commit=False)
        self._writers = sessionmaker(writer, expire_on_commit=False)

    @classmethod
    def open(cls, url: str) -> Store:
        """Connect to ``url`` (the schema must exist: see ``migrate.upgrade``)."""
        return cls(make_engine(url))

    @classmethod
    def from_settings(cls, settings: Settings) -> Store:
        """The store a process edge uses: migrated if embedded, checked at head otherwise."""
        ensure_schema(settings)
        return cls.open(settings.db_url)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def session(self, *, readonly: bool = False) -> Iterator[Tx]:
        """A transaction: commit when the block ends, roll back if it raises."""
        maker = self._readers if readonly else self._writers
        try:
            with maker() as session, session.begin():
                yield Tx(session)
        except DBAPIError as exc:
            raise StoreError(f"database error on {self.url}: {exc.orig}") from exc

    # One call, one transaction. Typed as the repositories so callers keep type checking.
    @property
    def seeds(self) -> SeedRepo:
        return cast(SeedRepo, _PerCall(self, "seeds"))

    @property
    def environments(self) -> EnvironmentRepo:
        return cast(EnvironmentRepo, _PerCall(self, "environments"))

    @property
    def verifiers(self) -> VerifierRepo:
        return cast(VerifierRepo, _PerCall(self, "verifiers"))

    @property
    def gate_reports(self) -> GateReportRepo:
        return cast(GateReportRepo, _PerCall(self, "gate_reports"))

    @property
    def trajectories(self) -> TrajectoryRepo:
        return cast(TrajectoryRepo, _PerCall(self, "trajectories"))

    @property
    def findings(self) -> FindingRepo:
        return cast(FindingRepo, _PerCall(self, "findings"))

    @property
    def reviews(self) -> ReviewRepo:
        return cast(ReviewRepo, _PerCall(self, "reviews"))

    @property
    def packs(self) -> PackRepo:
        return cast(PackRepo, _PerCall(self, "packs"))

    @property
    def reviewers(self) -> ReviewerRepo:
        return cast(ReviewerRepo, _PerCall(self, "reviewers"))

    @property
    def agent_evals(self) -> AgentEvalRepo:
        return cast(AgentEvalRepo, _PerCall(self, "agent_evals"))


class _PerCall:
    """Runs each repository method in its own transaction (read-only when it only reads)."""

    def __init__(self, store: Store, repo: str) -> None:
        self._store, self._repo = store, repo

    def __getattr__(self, name: str) -> Any:
        readonly = name.startswith(_READ_PREFIXES)

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._store.session(readonly=readonly) as tx:
                return getattr(getattr(tx, self._repo), name)(*args, **kwargs)

        call.__name__ = name
        return call
