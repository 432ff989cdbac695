"""Keyset pages: a bounded slice of a listing, and where the next one starts.

    page = tx.seeds.list_page(limit=50)                       # the first page
    page = tx.seeds.list_page(limit=50, after=page.next_key)  # the one after it

A listing is ordered by columns that end in a unique one (``created_at, id``), so the
order is total and the sort key of a row names one position. A page is the first ``limit``
rows strictly after the previous page's last key (``WHERE key > :after ORDER BY key LIMIT
n``), done by the database. Walking all pages therefore returns every row that existed
throughout exactly once, in one deterministic order, however many rows are added or
removed meanwhile (a row added behind the walk's position is not seen; nothing is seen
twice). No page is found by counting rows (OFFSET), which inserts would shift.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from sqlalchemy import Row, Select, and_, or_
from sqlalchemy.orm import QueryableAttribute, Session
from sqlalchemy.sql.elements import ColumnElement

T = TypeVar("T")
#: a row's sort key: one value per order column (a time, an id)
Key = tuple[datetime | str, ...]
#: the order of a listing: (column, descending) pairs, the last one unique
Order = Sequence[tuple[QueryableAttribute[Any], bool]]
#: a select of any columns
AnySelect = Select[*tuple[Any, ...]]


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    #: the last item's sort key when more rows follow it; None on the last page
    next_key: Key | None


def _after(order: Order, key: Key) -> ColumnElement[bool]:
    """Rows strictly after ``key`` in ``order``: the lexicographic comparison, spelled out
    (row values cannot mix ascending and descending columns)."""
    (column, descending), rest = order[0], order[1:]
    beyond = column < key[0] if descending else column > key[0]
    if not rest:
        return beyond
    return or_(beyond, and_(column == key[0], _after(rest, key[1:])))


def keyset_page(
    session: Session,
    query: AnySelect,
    order: Order,
    *,
    after: Key | None,
    limit: int,
    build: Callable[[Row[Any]], T],
) -> Page[T]:
    """The first ``limit`` rows of ``query`` after ``after`` in ``order``, each made into an
    item by ``build``. ``query`` must select every order column."""
    if limit < 1:
        raise ValueError(f"a page holds at least one row, not {limit}")
    if after is not None:
        if len(after) != len(order):
            raise ValueError(f"a key of this listing has {len(order)} values, not {len(after)}")
        query = query.where(_after(order, after))
    query = query.order_by(*(c.desc() if d else c.asc() for c, d in order)).limit(limit + 1)
    rows = list(session.execute(query))
    more = len(rows) > limit
    rows = rows[:limit]
    last = tuple(rows[-1]._mapping[c] for c, _ in order) if more else None
    return Page([build(r) for r in rows], last)
