"""Bounded lists: every list route takes `limit` and `cursor` and answers one page.

    GET /api/seeds?limit=100                      → {"items": […], "next_cursor": "eyJs…"}
    GET /api/seeds?limit=100&cursor=eyJs…         → the page after it; next_cursor null: the end

Invariants:
- a page holds at most `MAX_LIMIT` summaries (`DEFAULT_LIMIT` when `limit` is not given); a
  larger `limit` is a 422 naming it, so no request can ask for the whole table;
- a cursor is opaque to clients: the sort key of the page's last item and a fingerprint of
  the list and its filters, base64url-encoded JSON. It is validated, not signed: it holds
  nothing the caller has not seen, and a forged one can only start a page elsewhere in the
  same ordered list. One that does not decode, belongs to another list or other filters,
  or carries values of the wrong type is a 422 naming `cursor`, never a 500;
- pages are keyset pages done by the store (`envfactory.store.pages`): walking them returns
  every item once, in one order, while items are added.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Generic, TypeVar

from fastapi import Query
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field

from envfactory.core.models import control_characters
from envfactory.store import Key, Page

T = TypeVar("T")

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
#: a cursor is a few dozen characters; anything much longer is not one of ours
MAX_CURSOR_CHARS = 512
#: the longest id a cursor may carry (ids are at most 64 characters in the store)
MAX_KEY_CHARS = 200

Limit = Annotated[
    int,
    Query(
        ge=1,
        le=MAX_LIMIT,
        description=f"items per page: {DEFAULT_LIMIT} when not given, at most {MAX_LIMIT}",
    ),
]
Cursor = Annotated[
    str | None,
    Query(
        max_length=MAX_CURSOR_CHARS,
        description="the previous page's `next_cursor`, unchanged; omit it for the first page",
    ),
]


@dataclass(frozen=True)
class Listing:
    """One paginated list: its name and the types of its sort key, as the store orders it
    (``*Repo.list_page``)."""

    name: str
    key: tuple[type[datetime] | type[str], ...]


SEEDS = Listing("seeds", (datetime, str))  # created_at, id: newest first
ENVIRONMENTS = Listing("environments", (str,))  # id
REVIEWS = Listing("reviews", (datetime, str))  # created_at, id: oldest first
PACKS = Listing("packs", (datetime, str))  # created_at, id: newest first
TASKS = Listing("tasks", (str,))  # env id


class ListPage(BaseModel, Generic[T]):
    items: list[T]
    next_cursor: str | None = Field(
        description="pass it as `cursor` for the next page; null on the last page"
    )

    @classmethod
    def model_parametrized_name(cls, params: tuple[Any, ...]) -> str:
        # SeedSummaryPage in the OpenAPI schema, not ListPage_SeedSummary_
        return f"{getattr(params[0], '__name__', params[0])}Page"


Filters = Mapping[str, str | None]


def _fingerprint(listing: Listing, filters: Filters) -> str:
    text = json.dumps([listing.name, sorted(filters.items())], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode(listing: Listing, filters: Filters, key: Key) -> str:
    values = [v.isoformat() if isinstance(v, datetime) else v for v in key]
    payload = {"l": listing.name, "f": _fingerprint(listing, filters), "k": values}
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _bad(cursor: str, why: str) -> RequestValidationError:
    return RequestValidationError(
        [
            {
                "type": "value_error",
                "loc": ("query", "cursor"),
                "msg": f"{why}: pass the `next_cursor` of the previous page unchanged, "
                "or omit `cursor` to start from the first page",
                "input": cursor[:100],
            }
        ]
    )


def _payload(cursor: str) -> Any:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        return json.loads(raw)
    except (binascii.Error, ValueError, RecursionError):
        return None


def _value(kind: type[datetime] | type[str], value: Any) -> datetime | str | None:
    """One key value as its column's type, or None if it is not one."""
    if not isinstance(value, str) or len(value) > MAX_KEY_CHARS or control_characters(value):
        return None
    if kind is str:
        return value
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None  # the store holds aware times


def decode(listing: Listing, filters: Filters, cursor: str | None) -> Key | None:
    """The sort key a cursor carries (None: the first page); 422 naming `cursor` for one
    this list did not give out with these filters."""
    if not cursor:
        return None
    if len(cursor) > MAX_CURSOR_CHARS:
        raise _bad(cursor, f"`cursor` is longer than any this API gives out ({MAX_CURSOR_CHARS})")
    payload = _payload(cursor)
    if not isinstance(payload, dict) or set(payload) != {"l", "f", "k"}:
        raise _bad(cursor, "`cursor` is not a cursor this API gave out")
    if payload["l"] != listing.name or payload["f"] != _fingerprint(listing, filters):
        raise _bad(
            cursor,
            f"`cursor` belongs to another list or other filters than this {listing.name} list",
        )
    values = payload["k"]
    if not isinstance(values, list) or len(values) != len(listing.key):
        raise _bad(cursor, "`cursor` is not a cursor this API gave out")
    key = tuple(_value(kind, v) for kind, v in zip(listing.key, values, strict=True))
    if any(v is None for v in key):
        raise _bad(cursor, "`cursor` carries a position that is not one of this list's")
    return tuple(v for v in key if v is not None)


def listed(
    listing: Listing, filters: Filters, cursor: str | None, fetch: Callable[[Key | None], Page[T]]
) -> ListPage[T]:
    """The page after `cursor`, fetched by `fetch(after)`, with the next page's cursor."""
    page = fetch(decode(listing, filters, cursor))
    after = None if page.next_key is None else encode(listing, filters, page.next_key)
    return ListPage[T](items=page.items, next_cursor=after)
