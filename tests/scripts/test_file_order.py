"""The xdist workers get the longest test files first (tests/file_order.py), from the
seconds `scripts/test_durations.py --weights` records."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from scripts.test_durations import from_log, write_weights
from tests.file_order import load_seconds, longest_first


@dataclass(frozen=True)
class Item:
    nodeid: str
    seconds: float = 1.0


def ids(items: list[Item]) -> list[str]:
    return [i.nodeid for i in items]


def test_whole_files_move_heaviest_first_and_keep_their_inner_order() -> None:
    items = [
        Item("a.py::1", 3),
        Item("b.py::1", 500),
        Item("a.py::2", 2),
        Item("c.py::1", 40),
        Item("b.py::2", 100),
    ]
    got = longest_first(items, lambda i: i.seconds)
    assert ids(got) == ["b.py::1", "b.py::2", "c.py::1", "a.py::1", "a.py::2"]


def test_many_cheap_tests_outweigh_one_and_ties_keep_collection_order() -> None:
    many = [Item(f"new.py::{i}", 0.5) for i in range(10)]
    items = [Item("x.py::1", 4.0), Item("y.py::1", 4.0), *many]
    assert ids(longest_first(items, lambda i: i.seconds)) == [*ids(many), "x.py::1", "y.py::1"]


def test_the_record_round_trips_from_a_log_and_a_bad_one_means_no_record(tmp_path: Path) -> None:
    log = (
        "12.50s call     t/a.py::x\n0.40s setup    t/a.py::x\n"
        "3.00s call     t/b.py::y[1]\n0.90s call     t/c.py::z\nnoise\n"
    )
    seconds = from_log(log)
    path = tmp_path / "durations.json"
    write_weights(path, seconds, "a log")
    assert json.loads(path.read_text())["source"] == "a log"
    assert load_seconds(path) == {"t/a.py::x": 12.9, "t/b.py::y[1]": 3.0}  # under 1 s: left out
    path.write_text("{not json")
    assert load_seconds(path) == {}
    assert load_seconds(tmp_path / "missing.json") == {}
