"""The review queue under concurrency: one decision per item, distinct claims, an audit
row for every decision — on SQLite and PostgreSQL, with real threads and connections."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from envfactory.core.errors import Conflict, NotFound
from envfactory.core.models import (
    AuthMethod,
    Decision,
    Evidence,
    ReviewItem,
    ReviewState,
    ShortcutFinding,
)
from envfactory.store import Store

T0 = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


def _queue(store: Store, n: int) -> list[str]:
    with store.session() as tx:
        tx.findings.add(
            ShortcutFinding(
                id="f",
                env_id="env-1",
                source="probe",
                rule="probe:conftest",
                evidence=Evidence(summary="conftest forces pass"),
            )
        )
        for i in range(n):
            tx.reviews.add(
                ReviewItem(
                    id=f"r{i:03d}",
                    finding_id="f",
                    env_id="env-1",
                    created_at=T0 + timedelta(seconds=i),
                )
            )
    return [f"r{i:03d}" for i in range(n)]


def _race(n: int, fn: Callable[[int], Any]) -> list[Any]:
    """Run fn(0..n-1) in n threads released together; return results or exceptions."""
    barrier, out = threading.Barrier(n), [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            out[i] = fn(i)
        except Exception as exc:  # collected and asserted on by the caller
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_two_concurrent_deciders_one_wins_the_other_gets_conflict(store: Store) -> None:
    items = _queue(store, 8)
    decisions = (Decision.CONFIRM, Decision.DISMISS)
    for item_id in items:
        results = _race(
            2, lambda i, item=item_id: store.reviews.decide(item, f"r{i}", decisions[i])
        )
        wins = [r for r in results if isinstance(r, ReviewItem)]
        losses = [r for r in results if isinstance(r, Conflict)]
        assert (len(wins), len(losses)) == (1, 1), results
        stored = store.reviews.get(item_id)
        assert stored == wins[0] and stored.state != ReviewState.OPEN
        assert len(store.reviews.audit(item_id)) == 1


def test_a_decision_is_audited_with_who_when_before_and_after(store: Store) -> None:
    (item_id,) = _queue(store, 1)
    after = store.reviews.decide(item_id, "ana", Decision.CONFIRM, "edits the test file")
    (audit,) = store.reviews.audit(item_id)
    assert (audit.reviewer, audit.decision) == ("ana", Decision.CONFIRM)
    assert audit.before.state == ReviewState.OPEN and audit.before.reviewer is None
    assert audit.after == after == store.reviews.get(item_id)
    assert after.state == ReviewState.CONFIRMED and after.comment == "edits the test file"
    assert audit.at == after.decided_at


def test_deciding_twice_is_a_conflict_that_names_the_first_decision(store: Store) -> None:
    (item_id,) = _queue(store, 1)
    store.reviews.decide(item_id, "ana", Decision.DISMISS)
    with pytest.raises(Conflict, match="already dismissed by ana"):
        store.reviews.decide(item_id, "bo", Decision.CONFIRM)
    with pytest.raises(NotFound):
        store.reviews.decide("no-such-item", "bo", Decision.CONFIRM)


def test_concurrent_reviewers_claim_different_items(store: Store) -> None:
    _queue(store, 6)
    claimed = _race(6, lambda i: store.reviews.claim_next(f"reviewer{i}", lease_s=600))
    assert all(isinstance(c, ReviewItem) for c in claimed), claimed
    assert len({c.id for c in claimed}) == 6
    assert store.reviews.claim_next("late", lease_s=600) is None  # all held


def test_claims_come_oldest_first_and_a_lapsed_lease_frees_the_item(store: Store) -> None:
    items = _queue(store, 2)
    first = store.reviews.claim_next("ana", lease_s=-1)  # lease already lapsed
    assert first is not None and first.id == items[0]
    again = store.reviews.claim_next("bo", lease_s=600)
    assert again is not None and again.id == items[0]
    assert store.reviews.claim_of(items[0])[0] == "bo"


def test_a_live_claim_blocks_other_deciders_but_not_the_holder(store: Store) -> None:
    (item_id,) = _queue(store, 1)
    store.reviews.claim_next("ana", lease_s=600)
    with pytest.raises(Conflict, match="claimed by ana"):
        store.reviews.decide(item_id, "bo", Decision.CONFIRM)
    assert store.reviews.decide(item_id, "ana", Decision.CONFIRM).reviewer == "ana"
    assert store.reviews.claim_of(item_id) == (None, None)


def test_releasing_a_claim_returns_the_item_to_the_queue(store: Store) -> None:
    (item_id,) = _queue(store, 1)
    store.reviews.claim_next("ana", lease_s=600)
    store.reviews.release(item_id, "bo")  # not bo's: no effect
    assert store.reviews.claim_next("bo", lease_s=600) is None
    store.reviews.release(item_id, "ana")
    claimed = store.reviews.claim_next("bo", lease_s=600)
    assert claimed is not None and claimed.id == item_id


def test_decided_items_are_not_claimed(store: Store) -> None:
    items = _queue(store, 2)
    store.reviews.decide(items[0], "ana", Decision.CONFIRM)
    claimed = store.reviews.claim_next("bo")
    assert claimed is not None and claimed.id == items[1]
    assert [i.id for i in store.reviews.list(state=ReviewState.OPEN)] == [items[1]]


def test_the_audit_keeps_how_the_identity_was_established_and_the_note(store: Store) -> None:
    (item_id,) = _queue(store, 1)
    store.reviews.decide(
        item_id,
        "operator:ops@host",
        Decision.DISMISS,
        auth=AuthMethod.LOCAL_OPERATOR,
        note="claimed --as ana (not verified)",
    )
    (audit,) = store.reviews.audit(item_id)
    assert (audit.reviewer, audit.auth) == ("operator:ops@host", AuthMethod.LOCAL_OPERATOR)
    assert audit.note == "claimed --as ana (not verified)"
