"""The order test files are handed to pytest-xdist workers: the longest first.

`make test` runs a whole file per worker at a time (`--dist loadfile`) and hands out files
in collection order (`--no-loadscope-reorder`; xdist's own order is by number of tests,
which puts a 600-second file of 13 tests after a 2-second file of 40). Longest first is
the classic longest-processing-time rule: the last files handed out are short, so no
worker idles at the end while another still runs a long one.

A file weighs the seconds of its tests: each test's from a recorded run
(tests/durations.json, written by `scripts/test_durations.py --weights` from a CI log's
`--durations` lines), else an estimate by its markers (`DOCKER_S` for a Docker test,
`UNKNOWN_S` otherwise). Only whole files move: the order inside a file is kept, so a
module's shared fixture is still built once and its tests still read top to bottom.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

WEIGHTS = Path(__file__).with_name("durations.json")
UNKNOWN_S = 0.5  # seconds a test the record does not know is taken to cost
DOCKER_S = 8.0  # the same, for a test marked docker


class _Item(Protocol):
    @property
    def nodeid(self) -> str: ...


ItemT = TypeVar("ItemT", bound=_Item)


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def load_seconds(path: Path = WEIGHTS) -> dict[str, float]:
    """{test id: seconds} from the record; empty when it is missing or unreadable (the
    order is then by the estimates alone, which is correct, only slower to finish)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    tests = data.get("tests", {}) if isinstance(data, dict) else {}
    return {str(k): float(v) for k, v in tests.items() if isinstance(v, (int, float))}


def longest_first(items: Sequence[ItemT], seconds_of: Callable[[ItemT], float]) -> list[ItemT]:
    """`items` with whole files reordered by the sum of `seconds_of` their tests, heaviest
    first; ties and the order inside each file keep the collection order (a stable sort)."""
    weight: dict[str, float] = {}
    for item in items:
        f = file_of(item.nodeid)
        weight[f] = weight.get(f, 0.0) + seconds_of(item)
    rank = {f: i for i, f in enumerate(weight)}
    return sorted(items, key=lambda it: (-weight[file_of(it.nodeid)], rank[file_of(it.nodeid)]))
