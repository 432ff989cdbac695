"""Reviewer tokens: issued once, stored only as hashes, checked on every request.

Invariants:
- a token is 256 random bits; only its sha256 is stored (a fast hash is enough for a
  random secret of that size: there is nothing to brute-force), so a leaked registry
  file grants nothing;
- `add` returns the token exactly once; it cannot be shown again, only replaced;
- roles: `viewer` reads, `reviewer` also decides, claims and submits seeds;
- the registry file is replaced atomically under an exclusive lock, so concurrent
  `reviewer add` runs never lose an entry.

The registry is a JSON file under the envfactory home; `ReviewerRegistry` is the seam
for a database-backed one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from envfactory.core.errors import Conflict, InvalidInput, NotFound

TOKEN_PREFIX = "efr_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


class Role(StrEnum):
    VIEWER = "viewer"
    REVIEWER = "reviewer"

    def allows(self, needed: Role) -> bool:
        return needed == Role.VIEWER or self == Role.REVIEWER


@dataclass(frozen=True)
class Reviewer:
    name: str
    role: Role
    created_at: str


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class ReviewerRegistry(Protocol):
    def add(self, name: str, role: Role) -> str: ...

    def authenticate(self, token: str) -> Reviewer | None: ...

    def list(self) -> list[Reviewer]: ...

    def remove(self, name: str) -> None: ...


class FileReviewers:
    """`ReviewerRegistry` in one JSON file: {name: {role, token_sha256, created_at}}."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, dict[str, str]]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = self._read()
            yield data
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".reviewers-")
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=2, sort_keys=True)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)

    def _read(self) -> dict[str, dict[str, str]]:
        if not self.path.exists():
            return {}
        return json.loads(self.path.read_text())  # type: ignore[no-any-return]

    def add(self, name: str, role: Role) -> str:
        """Create a reviewer; return the token (shown once, stored only as a hash)."""
        if not _NAME.match(name):
            raise InvalidInput(f"reviewer name {name!r}: use letters, digits, '.', '_', '@', '-'")
        token = new_token()
        with self._locked() as data:
            if name in data:
                raise Conflict(
                    f"reviewer {name} exists", hint="remove them first to issue a new token"
                )
            data[name] = {
                "role": Role(role).value,
                "token_sha256": hash_token(token),
                "created_at": datetime.now(UTC).isoformat(),
            }
        return token

    def remove(self, name: str) -> None:
        with self._locked() as data:
            if data.pop(name, None) is None:
                raise NotFound(f"no reviewer {name}")

    def list(self) -> list[Reviewer]:
        return [
            Reviewer(n, Role(d["role"]), d["created_at"]) for n, d in sorted(self._read().items())
        ]

    def authenticate(self, token: str) -> Reviewer | None:
        if not token.startswith(TOKEN_PREFIX):
            return None
        digest = hash_token(token)
        for name, d in self._read().items():
            if hmac.compare_digest(d["token_sha256"], digest):
                return Reviewer(name, Role(d["role"]), d["created_at"])
        return None
