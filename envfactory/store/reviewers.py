"""Reviewer tokens and review-page sessions, in the database so every API instance agrees.

Invariants:
- a token (reviewer or session) is 256 random bits; only its sha256 is stored. A fast hash
  is enough for a random secret of that size (there is nothing to brute-force), and a
  lookup by hash leaks nothing useful through timing: a leaked table grants nothing;
- ``add`` returns a reviewer's token exactly once; it cannot be shown again, only replaced
  (remove, then add);
- reviewer tokens (``efr_``) and session tokens (``efs_``) live in different tables, so
  neither works where the other is expected;
- a session names its reviewer: removing the reviewer ends their sessions in the same
  transaction, and a role is read at every request, never cached in the session;
- an expired session finds nobody; expired rows are deleted whenever a session opens.
"""

from __future__ import annotations

import builtins
import hashlib
import re
import secrets
from datetime import datetime, timedelta

from sqlalchemy import delete, select

from envfactory.core.errors import Conflict, InvalidInput, NotFound
from envfactory.core.models import Reviewer, ReviewerRole, utcnow

from .repositories import _Repo
from .schema import ReviewerRow, ReviewerSessionRow

REVIEWER_PREFIX = "efr_"
SESSION_PREFIX = "efs_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _new_token(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)


def _reviewer(row: ReviewerRow) -> Reviewer:
    return Reviewer(name=row.name, role=ReviewerRole(row.role), created_at=row.created_at)


class ReviewerRepo(_Repo):
    def add(self, name: str, role: ReviewerRole) -> str:
        """Create a reviewer; return their token (shown once, stored only as a hash)."""
        if not _NAME.match(name):
            raise InvalidInput(f"reviewer name {name!r}: use letters, digits, '.', '_', '@', '-'")
        token = _new_token(REVIEWER_PREFIX)
        self._add_row(name, ReviewerRole(role), hash_token(token), utcnow())
        return token

    def import_hashed(
        self, name: str, role: ReviewerRole, token_sha256: str, created_at: datetime
    ) -> bool:
        """Store a reviewer whose token hash was kept elsewhere (the old reviewers.json);
        False if the name is already stored (that entry wins)."""
        if not _NAME.match(name) or not re.fullmatch(r"[0-9a-f]{64}", token_sha256):
            raise InvalidInput(f"reviewer {name!r}: not a valid name and sha256 token hash")
        try:
            self._add_row(name, ReviewerRole(role), token_sha256, created_at)
        except Conflict:
            return False
        return True

    def _add_row(self, name: str, role: ReviewerRole, digest: str, at: datetime) -> None:
        if self.s.get(ReviewerRow, name) is not None:
            raise Conflict(f"reviewer {name} exists", hint="remove them first to issue a new token")
        row = ReviewerRow(name=name, role=role.value, token_sha256=digest, created_at=at)
        self._insert(row, f"reviewer {name}")

    def remove(self, name: str) -> None:
        """Revoke a reviewer's token and end their sessions."""
        self.s.execute(delete(ReviewerSessionRow).where(ReviewerSessionRow.reviewer == name))
        if self.s.execute(delete(ReviewerRow).where(ReviewerRow.name == name)).rowcount != 1:  # type: ignore[attr-defined]
            raise NotFound(f"no reviewer {name}", hint="`envfactory reviewer list`")

    def list(self) -> builtins.list[Reviewer]:
        return [
            _reviewer(r) for r in self.s.scalars(select(ReviewerRow).order_by(ReviewerRow.name))
        ]

    def find_by_token(self, token: str) -> Reviewer | None:
        """The reviewer a token belongs to, or None (unknown, revoked or not a token)."""
        if not token.startswith(REVIEWER_PREFIX):
            return None
        q = select(ReviewerRow).where(ReviewerRow.token_sha256 == hash_token(token))
        row = self.s.scalars(q).first()
        return None if row is None else _reviewer(row)

    def open_session(self, name: str, ttl_s: float) -> str:
        """Start a review-page session for ``name``; return its token (the cookie value)."""
        now = utcnow()
        self.s.execute(delete(ReviewerSessionRow).where(ReviewerSessionRow.expires_at <= now))
        if self.s.get(ReviewerRow, name) is None:
            raise NotFound(f"no reviewer {name}")
        token = _new_token(SESSION_PREFIX)
        self.s.add(
            ReviewerSessionRow(
                token_sha256=hash_token(token),
                reviewer=name,
                created_at=now,
                expires_at=now + timedelta(seconds=ttl_s),
            )
        )
        self.s.flush()
        return token

    def find_session(self, token: str) -> Reviewer | None:
        """The reviewer signed in with this session token, or None (unknown or expired)."""
        if not token.startswith(SESSION_PREFIX):
            return None
        q = (
            select(ReviewerRow)
            .join(ReviewerSessionRow, ReviewerSessionRow.reviewer == ReviewerRow.name)
            .where(
                ReviewerSessionRow.token_sha256 == hash_token(token),
                ReviewerSessionRow.expires_at > utcnow(),
            )
        )
        row = self.s.scalars(q).first()
        return None if row is None else _reviewer(row)

    def close_session(self, token: str) -> None:
        self.s.execute(
            delete(ReviewerSessionRow).where(ReviewerSessionRow.token_sha256 == hash_token(token))
        )
