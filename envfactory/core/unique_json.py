"""JSON with every object's keys unique: `{"a": 1, "a": 2}` is refused, not read as 2.

Python's `json` (and pydantic's parser) keep the last of two equal keys, so a reader and
a reviewer can see different values in the same bytes. YAML input is refused for this
already (`bounded_yaml`); seeds posted as JSON and pack.json are read through here.
"""

from __future__ import annotations

import json
from typing import Any


class DuplicateKey(ValueError):
    """An object holds `key` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def loads_unique(data: str | bytes) -> Any:
    """`json.loads(data)`, refusing an object with a key twice (`DuplicateKey`); other
    errors are json's own (`json.JSONDecodeError`, `UnicodeDecodeError`)."""
    return json.loads(data, object_pairs_hook=_pairs)
