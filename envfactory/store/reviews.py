"""The human review queue: open items, claims with a lease, and audited decisions.

Invariants:
- A review item is decided at most once. ``decide`` locks the row (``SELECT … FOR UPDATE``
  on PostgreSQL; the ``BEGIN IMMEDIATE`` write lock on SQLite) and then applies a
  conditional ``UPDATE … WHERE state = 'open'``: of two concurrent deciders one wins and the
  other gets ``Conflict``.
- Every decision appends a ``review_decisions`` row (who, how that identity was
  established, when, the item before and after) in the same transaction as the state
  change: no decision without its audit, nor the reverse.
- ``claim_next`` hands two concurrent reviewers different items: ``FOR UPDATE SKIP LOCKED``
  on PostgreSQL, the write lock on SQLite. A claim is a lease; once it expires the item is
  up for grabs again. A live claim by someone else blocks a decision.
"""

from __future__ import annotations

import builtins
from datetime import datetime, timedelta

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session

from envfactory.core.errors import Conflict, NotFound
from envfactory.core.models import (
    AuthMethod,
    Decision,
    ReviewAudit,
    ReviewItem,
    ReviewState,
    ReviewSummary,
    utcnow,
)

from .pages import Key, Page, keyset_page
from .repositories import _Repo, dump
from .schema import ReviewDecisionRow, ReviewItemRow


def _item(row: ReviewItemRow) -> ReviewItem:
    return ReviewItem(
        id=row.id,
        finding_id=row.finding_id,
        env_id=row.env_id,
        state=ReviewState(row.state),
        reviewer=row.reviewer,
        comment=row.comment,
        decided_at=row.decided_at,
        created_at=row.created_at,
    )


class ReviewRepo(_Repo):
    def __init__(self, session: Session) -> None:
        super().__init__(session)

    def add(self, item: ReviewItem) -> None:
        """Queue an item; its finding must already be stored (foreign key)."""
        row = ReviewItemRow(
            id=item.id,
            finding_id=item.finding_id,
            env_id=item.env_id,
            state=item.state.value,
            reviewer=item.reviewer,
            comment=item.comment,
            decided_at=item.decided_at,
            claimed_by=None,
            lease_until=None,
            created_at=item.created_at,
        )
        self._insert(row, f"review item {item.id}")

    def get(self, item_id: str) -> ReviewItem:
        return _item(self._row(item_id))

    def _row(self, item_id: str, *, lock: bool = False) -> ReviewItemRow:
        q = select(ReviewItemRow).where(ReviewItemRow.id == item_id)
        if lock:
            q = q.with_for_update()
        row = self.s.scalars(q.execution_options(populate_existing=True)).first()
        if row is None:
            raise NotFound(f"no review item {item_id!r}", hint="`envfactory review list`")
        return row

    def list(
        self, *, state: ReviewState | None = None, env_id: str | None = None
    ) -> list[ReviewItem]:
        q = select(ReviewItemRow).order_by(ReviewItemRow.created_at, ReviewItemRow.id)
        if state is not None:
            q = q.where(ReviewItemRow.state == state.value)
        if env_id is not None:
            q = q.where(ReviewItemRow.env_id == env_id)
        return [_item(r) for r in self.s.scalars(q)]

    def list_page(
        self,
        *,
        state: ReviewState | None = None,
        env_id: str | None = None,
        after: Key | None = None,
        limit: int = 50,
    ) -> Page[ReviewSummary]:
        """Summaries (no comment), oldest first (``created_at, id``), as the queue is worked."""
        q = select(
            ReviewItemRow.id,
            ReviewItemRow.finding_id,
            ReviewItemRow.env_id,
            ReviewItemRow.state,
            ReviewItemRow.reviewer,
            ReviewItemRow.decided_at,
            ReviewItemRow.created_at,
        )
        if state is not None:
            q = q.where(ReviewItemRow.state == state.value)
        if env_id is not None:
            q = q.where(ReviewItemRow.env_id == env_id)
        order = ((ReviewItemRow.created_at, False), (ReviewItemRow.id, False))
        return keyset_page(
            self.s,
            q,
            order,
            after=after,
            limit=limit,
            build=lambda r: ReviewSummary.model_validate(r._asdict()),
        )

    def count_by_state(self, *, env_id: str | None = None) -> dict[ReviewState, int]:
        """How many items are in each state (every state, zero included)."""
        q = select(ReviewItemRow.state, func.count()).group_by(ReviewItemRow.state)
        if env_id is not None:
            q = q.where(ReviewItemRow.env_id == env_id)
        counted = {ReviewState(state): n for state, n in self.s.execute(q)}
        return {s: counted.get(s, 0) for s in ReviewState}

    def claim_next(self, reviewer: str, lease_s: float = 900.0) -> ReviewItem | None:
        """Lease the oldest open item nobody else holds to ``reviewer``; None if none is left."""
        now = utcnow()
        free = or_(
            ReviewItemRow.claimed_by.is_(None),
            ReviewItemRow.claimed_by == reviewer,
            ReviewItemRow.lease_until < now,
        )
        pick = (
            select(ReviewItemRow.id)
            .where(ReviewItemRow.state == ReviewState.OPEN.value, free)
            .order_by(ReviewItemRow.created_at, ReviewItemRow.id)
            .limit(1)
            .with_for_update(
                skip_locked=True
            )  # dropped by SQLAlchemy on SQLite: the lock serialises
            .scalar_subquery()
        )
        claim = (
            update(ReviewItemRow)
            .where(ReviewItemRow.id == pick)
            .values(claimed_by=reviewer, lease_until=now + timedelta(seconds=lease_s))
            .returning(ReviewItemRow.id)
        )
        item_id = self.s.execute(claim).scalar_one_or_none()
        return None if item_id is None else self.get(item_id)

    def release(self, item_id: str, reviewer: str) -> None:
        """Give a claim back early (no-op if ``reviewer`` does not hold it)."""
        self.s.execute(
            update(ReviewItemRow)
            .where(ReviewItemRow.id == item_id, ReviewItemRow.claimed_by == reviewer)
            .values(claimed_by=None, lease_until=None)
        )

    def claim_of(self, item_id: str) -> tuple[str | None, datetime | None]:
        row = self._row(item_id)
        return row.claimed_by, row.lease_until

    def decide(
        self,
        item_id: str,
        reviewer: str,
        decision: Decision,
        comment: str = "",
        *,
        auth: AuthMethod = AuthMethod.UNRECORDED,
        note: str = "",
    ) -> ReviewItem:
        """Confirm or dismiss an open item, exactly once; the loser of a race gets Conflict.
        ``auth`` says how ``reviewer`` was established; ``note`` keeps unverified claims."""
        if not reviewer.strip():
            raise ValueError("reviewer must be a non-empty name")
        row = self._row(item_id, lock=True)
        before, now = _item(row), utcnow()
        _check_decidable(row, reviewer, now)
        new_state = Decision(decision).state
        res = self.s.execute(
            update(ReviewItemRow)
            .where(ReviewItemRow.id == item_id, ReviewItemRow.state == ReviewState.OPEN.value)
            .values(
                state=new_state.value,
                reviewer=reviewer,
                comment=comment,
                decided_at=now,
                claimed_by=None,
                lease_until=None,
            )
        )
        if res.rowcount != 1:  # type: ignore[attr-defined]
            raise Conflict(f"review item {item_id} was decided concurrently by someone else")
        after = before.model_copy(
            update={"state": new_state, "reviewer": reviewer, "comment": comment, "decided_at": now}
        )
        self.s.add(
            ReviewDecisionRow(
                review_id=item_id,
                reviewer=reviewer,
                decision=Decision(decision).value,
                at=now,
                before=dump(before),
                after=dump(after),
                auth=AuthMethod(auth).value,
                note=note,
            )
        )
        self.s.flush()
        return after

    def audit(self, item_id: str) -> builtins.list[ReviewAudit]:
        q = (
            select(ReviewDecisionRow)
            .where(ReviewDecisionRow.review_id == item_id)
            .order_by(ReviewDecisionRow.at, ReviewDecisionRow.id)
        )
        return [
            ReviewAudit(
                review_id=r.review_id,
                reviewer=r.reviewer,
                decision=Decision(r.decision),
                at=r.at,
                before=ReviewItem.model_validate(r.before),
                after=ReviewItem.model_validate(r.after),
                auth=AuthMethod(r.auth),
                note=r.note,
            )
            for r in self.s.scalars(q)
        ]


def _check_decidable(row: ReviewItemRow, reviewer: str, now: datetime) -> None:
    if row.state != ReviewState.OPEN.value:
        raise Conflict(
            f"review item {row.id} is already {row.state} by {row.reviewer} at {row.decided_at}",
            hint="reload the queue; a decision is final",
        )
    lease = row.lease_until
    if row.claimed_by not in (None, reviewer) and lease is not None and lease > now:
        raise Conflict(
            f"review item {row.id} is claimed by {row.claimed_by} until {lease.isoformat()}",
            hint="take another item, or wait for the claim to expire",
        )
