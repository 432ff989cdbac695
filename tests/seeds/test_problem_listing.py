"""A seed wrong in many ways gets a message of bounded size (issue 46, item 6): the first 20
problems and the count, on the JSON path and the seed.yaml path alike.

Regression: a 1 MB `POST /api/seeds` with 60,000 unknown `constraints` keys was answered
with a 9.6 MB message after 2.9 s (one worded problem, with a guess, per key).
"""

from __future__ import annotations

import json
import time

import pytest

from envfactory.core.errors import InvalidInput, InvalidSeed
from envfactory.core.settings import SeedLimits
from envfactory.seeds import draft_from_json, draft_from_upload
from envfactory.seeds.problems import LISTED

SEED = {"title": "Fix the ETL job", "description": "Rows are dropped.", "domain": "data"}


def _refusal(raw: bytes) -> str:
    with pytest.raises(InvalidSeed) as err:
        draft_from_json(raw)
    return err.value.message


def test_60000_unknown_keys_list_the_first_20_and_count_them_all() -> None:
    constraints = {f"k{i:05d}": i for i in range(60_000)}
    started = time.perf_counter()
    message = _refusal(json.dumps(SEED | {"constraints": constraints}).encode())
    took = time.perf_counter() - started
    assert message.startswith("request body: 60,000 problems, the first 20 listed:\n")
    assert message.count("unknown key") == LISTED and "… and 59,980 more" in message
    assert len(message) < 8192
    print(f"60,000 unknown keys refused in {took * 1000:.0f} ms, {len(message)} characters")


def test_a_wrong_value_is_listed_before_the_unknown_keys() -> None:
    constraints = {"judges": "four"} | {f"extra{i}": 1 for i in range(30)}
    message = _refusal(json.dumps(SEED | {"titel": "x", "constraints": constraints}).encode())
    first = message.splitlines()[1]
    assert "constraints.judges" in first and "must be a whole number" in first
    assert "'titel': unknown key (fix: did you mean 'title'?" in message
    assert message.startswith("request body: 32 problems, the first 20 listed")


def test_a_few_problems_are_all_listed_without_a_count_line() -> None:
    message = _refusal(json.dumps(SEED | {"titel": "x", "sauce": 1}).encode())
    assert message.startswith("request body: 2 problems:\n") and "more" not in message


def test_the_seed_yaml_path_is_bounded_the_same_way() -> None:
    keys = "".join(f"  k{i}: {i}\n" for i in range(5_000))
    text = f"title: t\ndescription: d\ndomain: x\nconstraints:\n{keys}"
    with pytest.raises(InvalidSeed) as err:
        draft_from_upload(text.encode(), [], SeedLimits())
    assert err.value.message.startswith("seed.yaml: 5,000 problems, the first 20 listed")
    assert len(err.value.message) < 8192


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"[1, 2]", "must be a JSON object of seed fields, got list"),
        (b'{"title": ', "is not UTF-8 JSON"),
        (b"\xff{}", "is not UTF-8 JSON"),
    ],
)
def test_a_body_that_is_no_json_object_is_refused_saying_so(raw: bytes, says: str) -> None:
    assert says in _refusal(raw)


def test_a_key_given_twice_is_refused_as_in_yaml() -> None:
    with pytest.raises(InvalidInput, match="'title' appears twice"):
        draft_from_json(b'{"title": "a", "title": "b", "description": "d", "domain": "x"}')
