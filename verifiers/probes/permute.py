"""The reference's values moved among the records it wrote: the counts, sums, extremes and
distinct values unchanged, each record wrong.

A verifier that checks a table by its aggregates (how many rows, the total, the largest,
how many distinct) accepts any state holding the right multiset of values, whichever row
holds which. `rotated` builds such a state from the cells the reference set: for each
column, the values it set are rotated among the rows it set them in (ordered by key). Two
columns rotated by the same step would move whole tuples intact — a state a verifier that
ignores the key (a serial id) rightly accepts — so the k-th column is rotated by k + 1
steps, and a column whose step is a multiple of its row count is left alone. Columns
holding a single value (every row ``shipped``) have nothing to move.

Shared by the SQLite (`rows.PermutedCells`) and PostgreSQL (`postgres`) probes; pure.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, TypeVar

K = TypeVar("K", bound=Hashable)
C = TypeVar("C", bound=Hashable)


def same(a: Any, b: Any) -> bool:
    """Equal and of one type (1 and 1.0 and True differ as a database keeps them)."""
    return type(a) is type(b) and a == b


def rotated(cells: Mapping[K, Mapping[C, Any]], order: list[K]) -> dict[K, dict[C, Any]]:
    """key → {column: new value} for every cell whose value the rotation changes; `cells`
    holds, per key, the values the reference set; `order` lists the keys in key order."""
    columns: list[C] = []
    for k in order:
        columns += [c for c in cells.get(k, {}) if c not in columns]
    out: dict[K, dict[C, Any]] = {}
    step = 0
    for c in columns:
        keys = [k for k in order if c in cells.get(k, {})]
        values = [cells[k][c] for k in keys]
        if len({(type(v).__name__, repr(v)) for v in values}) < 2:
            continue
        step += 1
        if step % len(keys) == 0:
            continue
        for i, k in enumerate(keys):
            new = values[(i + step) % len(keys)]
            if not same(new, values[i]):
                out.setdefault(k, {})[c] = new
    return out
