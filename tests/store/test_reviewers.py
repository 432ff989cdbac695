"""Reviewers and page sessions in the store: tokens shown once and kept only hashed, one
table read by every instance, removal ending sessions, expiry, the old file's hashes."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pytest
from sqlalchemy import text

from envfactory.core.errors import Conflict, InvalidInput, NotFound
from envfactory.core.models import Reviewer, ReviewerRole
from envfactory.store import Store


def test_a_token_is_returned_once_and_only_its_sha256_is_stored(store: Store) -> None:
    token = store.reviewers.add("ana", ReviewerRole.REVIEWER)
    with store.engine.connect() as conn:
        row = conn.execute(text("SELECT name, role, token_sha256 FROM reviewers")).one()
    assert tuple(row) == ("ana", "reviewer", hashlib.sha256(token.encode()).hexdigest())
    who = store.reviewers.find_by_token(token)
    assert isinstance(who, Reviewer) and (who.name, who.role) == ("ana", ReviewerRole.REVIEWER)
    assert store.reviewers.find_by_token(token[:-1] + "x") is None
    assert store.reviewers.find_by_token(row.token_sha256) is None  # the hash is no token


def test_names_are_unique_and_checked(store: Store) -> None:
    store.reviewers.add("ana", ReviewerRole.VIEWER)
    with pytest.raises(Conflict, match="reviewer ana exists"):
        store.reviewers.add("ana", ReviewerRole.REVIEWER)
    with pytest.raises(InvalidInput, match="reviewer name"):
        store.reviewers.add("ana; drop table", ReviewerRole.REVIEWER)
    assert [r.name for r in store.reviewers.list()] == ["ana"]


def test_a_session_finds_its_reviewer_until_closed_or_expired(store: Store) -> None:
    store.reviewers.add("ana", ReviewerRole.REVIEWER)
    session = store.reviewers.open_session("ana", 3600)
    assert session.startswith("efs_")
    assert store.reviewers.find_session(session).name == "ana"  # type: ignore[union-attr]
    assert store.reviewers.find_by_token(session) is None  # not a reviewer token
    store.reviewers.close_session(session)
    assert store.reviewers.find_session(session) is None
    expired = store.reviewers.open_session("ana", 0)
    assert store.reviewers.find_session(expired) is None
    store.reviewers.open_session("ana", 3600)  # opening a session sweeps expired ones
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM reviewer_sessions")).scalar() == 1


def test_removing_a_reviewer_ends_their_sessions(store: Store) -> None:
    token = store.reviewers.add("ana", ReviewerRole.REVIEWER)
    session = store.reviewers.open_session("ana", 3600)
    store.reviewers.remove("ana")
    assert store.reviewers.find_by_token(token) is None
    assert store.reviewers.find_session(session) is None
    with pytest.raises(NotFound, match="no reviewer ana"):
        store.reviewers.remove("ana")
    with pytest.raises(NotFound):
        store.reviewers.open_session("ana", 3600)


def test_an_imported_hash_authenticates_its_old_token_and_a_stored_name_wins(store: Store) -> None:
    old = "efr_old-token"
    at = datetime(2026, 11, 1, tzinfo=UTC)
    digest = hashlib.sha256(old.encode()).hexdigest()
    assert store.reviewers.import_hashed("bo", ReviewerRole.VIEWER, digest, at) is True
    assert store.reviewers.find_by_token(old) == Reviewer(
        name="bo", role=ReviewerRole.VIEWER, created_at=at
    )
    assert store.reviewers.import_hashed("bo", ReviewerRole.REVIEWER, "0" * 64, at) is False
    with pytest.raises(InvalidInput):
        store.reviewers.import_hashed("eve", ReviewerRole.REVIEWER, "not-a-hash", at)
