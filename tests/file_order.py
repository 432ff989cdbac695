"""The order test files are handed to pytest-xdist workers: the longest first.

`make test` runs a whole file per worker at a time (`--dist loadfile`) and hands out files
in collection order (`--no-loadscope-reorder`; xdist's own order is by number of tests,
which puts a 600-second file of 13 tests after a 2-second file of 40). Longest first is
the classic longest-processing-time rule: the last files handed out are short, so no
worker idles at the end while another still runs a long one.

The weights are the seconds each file took in a recorded run (tests/durations.json,
written by `scripts/test_durations.py --weights`); a file not in it weighs as much as
`UNKNOWN_S` a test. Only whole files move: the order inside a file is kept, so a module's
shared fixture is still built once and its tests still read top to bottom.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

WEIGHTS = Path(__file__).with_name("durations.json")
UNKNOWN_S = 0.5  # seconds a test of a file the weights do not know is taken to cost


class _Item(Protocol):
    @property
    def nodeid(self) -> str: ...


ItemT = TypeVar("ItemT", bound=_Item)


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def load_weights(path: Path = WEIGHTS) -> dict[str, float]:
    """{test file: seconds}; empty when the file is missing or unreadable (the order is
    then the collection order, which is correct, only slower to finish)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    files = data.get("files", {}) if isinstance(data, dict) else {}
    return {str(k): float(v) for k, v in files.items() if isinstance(v, (int, float))}


def longest_first(items: Sequence[ItemT], weights: Mapping[str, float]) -> list[ItemT]:
    """`items` with whole files reordered by weight, heaviest first; ties and the order
    inside each file keep the collection order (a stable sort)."""
    counts: dict[str, int] = {}
    for item in items:
        counts[file_of(item.nodeid)] = counts.get(file_of(item.nodeid), 0) + 1
    rank = {f: i for i, f in enumerate(counts)}

    def weight(f: str) -> float:
        return weights.get(f, UNKNOWN_S * counts[f])

    return sorted(items, key=lambda it: (-weight(file_of(it.nodeid)), rank[file_of(it.nodeid)]))
