"""The xdist workers get the longest test files first (tests/file_order.py), from weights
`scripts/test_durations.py --weights` writes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from scripts.test_durations import file_weights, write_weights
from tests.file_order import UNKNOWN_S, load_weights, longest_first


@dataclass(frozen=True)
class Item:
    nodeid: str


def ids(items: list[Item]) -> list[str]:
    return [i.nodeid for i in items]


def test_whole_files_move_heaviest_first_and_keep_their_inner_order() -> None:
    items = [Item(n) for n in ("a.py::1", "b.py::1", "a.py::2", "c.py::1", "b.py::2")]
    got = longest_first(items, {"a.py": 5.0, "b.py": 600.0, "c.py": 40.0})
    assert ids(got) == ["b.py::1", "b.py::2", "c.py::1", "a.py::1", "a.py::2"]


def test_an_unknown_file_weighs_by_its_test_count_and_ties_keep_collection_order() -> None:
    many = [Item(f"new.py::{i}") for i in range(10)]  # 10 * UNKNOWN_S
    items = [Item("x.py::1"), Item("y.py::1"), *many]
    got = longest_first(items, {"x.py": 10 * UNKNOWN_S - 1, "y.py": 10 * UNKNOWN_S - 1})
    assert ids(got) == [*ids(many), "x.py::1", "y.py::1"]
    assert ids(longest_first(items, {})) == [*ids(many), "x.py::1", "y.py::1"]


def test_weights_round_trip_from_durations_and_bad_files_mean_no_weights(tmp_path: Path) -> None:
    seconds = {"t/a.py::x": 1.25, "t/a.py::y": 2.0, "t/b.py::z[1]": 9.0}
    assert file_weights(seconds) == {"t/b.py": 9.0, "t/a.py": 3.2}
    path = tmp_path / "durations.json"
    write_weights(path, seconds, "a log")
    assert json.loads(path.read_text())["source"] == "a log"
    assert load_weights(path) == {"t/b.py": 9.0, "t/a.py": 3.2}
    path.write_text("{not json")
    assert load_weights(path) == {}
    assert load_weights(tmp_path / "missing.json") == {}
