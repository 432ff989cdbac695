"""Reviewer tokens: issued once, stored only as hashes in the database, checked on every
request.

Invariants:
- the registry is the store (`envfactory.store.reviewers`): any number of API instances
  and CLI runs over one database agree on who may do what, at once;
- roles: `viewer` reads, `reviewer` also decides, claims and submits seeds;
- tokens used to live in `<home>/reviewers.json` (one file per instance). Its entries are
  imported (same hashes: the old tokens keep working) the first time an API or a
  `envfactory reviewer` command starts on that home, and the file is renamed
  `reviewers.json.imported` so a later `reviewer remove` is never undone by a re-import.
"""

from __future__ import annotations

import fcntl
import json
import logging
from datetime import datetime
from pathlib import Path
from typing import Protocol

from envfactory.core.errors import InvalidInput
from envfactory.core.models import Reviewer, ReviewerRole
from envfactory.core.settings import Settings
from envfactory.store import Store

log = logging.getLogger(__name__)

LEGACY_FILE = "reviewers.json"


class ReviewerRegistry(Protocol):
    """Who may use the API and pages (`Store.reviewers` is the implementation)."""

    def add(self, name: str, role: ReviewerRole) -> str: ...

    def find_by_token(self, token: str) -> Reviewer | None: ...

    def list(self) -> list[Reviewer]: ...

    def remove(self, name: str) -> None: ...

    def open_session(self, name: str, ttl_s: float) -> str: ...

    def find_session(self, token: str) -> Reviewer | None: ...

    def close_session(self, token: str) -> None: ...


def reviewer_registry(settings: Settings, store: Store) -> ReviewerRegistry:
    """The store's registry, after importing a leftover reviewers.json under the home."""
    import_legacy_file(store, settings.home / LEGACY_FILE)
    return store.reviewers


def import_legacy_file(store: Store, path: Path) -> int:
    """Copy the old JSON registry's entries into the store (a stored name wins), then
    rename the file. Returns how many entries were added."""
    if not path.exists():
        return 0
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the old writers' lock: no half-written file
        if not path.exists():  # another process on this home imported it meanwhile
            return 0
        entries = _read_legacy(path)
        with store.session() as tx:
            added = sum(tx.reviewers.import_hashed(*e) for e in entries)
        path.rename(path.with_name(path.name + ".imported"))
    log.warning("imported %d reviewer(s) from %s into the database", added, path)
    return added


def _read_legacy(path: Path) -> list[tuple[str, ReviewerRole, str, datetime]]:
    try:
        data = json.loads(path.read_text())
        return [
            (
                name,
                ReviewerRole(d["role"]),
                d["token_sha256"],
                datetime.fromisoformat(d["created_at"]),
            )
            for name, d in sorted(data.items())
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise InvalidInput(
            f"{path}: not a reviewers file ({e})",
            hint="fix or remove it; reviewers can be issued again with `envfactory reviewer add`",
        ) from e
