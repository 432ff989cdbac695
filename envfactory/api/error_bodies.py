"""Error answers of bounded size: the first problems, and how many there were in all.

A request can be wrong in any number of ways (issue 46: a 1 MB seed with 60,000 unknown
`constraints` keys got a 9.6 MB answer after 2.9 s). Invariants:
- a 422 for a request that fails validation lists its first `LISTED` errors and says
  `count`, the number in all; each error's `input` is shortened, so a 1 MB field is not
  sent back;
- a domain error's `detail` is at most `MAX_DETAIL_CHARS` characters, saying how many were
  cut (a seed's problems are already listed first-`LISTED`-and-a-count by
  `envfactory.seeds.problems.raise_if_any`; this is the bound for every other message).
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi.encoders import jsonable_encoder

from envfactory.seeds.problems import LISTED

MAX_DETAIL_CHARS = 16 * 1024
MAX_INPUT_CHARS = 200

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = MAX_INPUT_CHARS
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict = 2, 6, 6


def validation_body(errors: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """FastAPI's 422 body (`detail`: the errors), bounded, with `count` added."""
    shown = [_shortened(e) for e in errors[:LISTED]]
    body: dict[str, Any] = {"detail": jsonable_encoder(shown), "count": len(errors)}
    if len(errors) > LISTED:
        body["note"] = f"the first {LISTED} of {len(errors)} problems are listed"
    return body


def _shortened(error: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: _bounded(v) if k == "input" else v for k, v in error.items()}
    if isinstance(out.get("ctx"), dict):
        out["ctx"] = {k: _bounded(v) for k, v in out["ctx"].items()}
    return out


def _bounded(value: Any) -> Any:
    """Text and containers as they came when small, else a short repr of them."""
    if not isinstance(value, (str, bytes, list, tuple, dict, set)) or _small(value, 2):
        return value
    return _REPR.repr(value)


def _small(value: Any, depth: int) -> bool:
    if value is None or isinstance(value, (bool, int, float)):
        return True
    if isinstance(value, (str, bytes)):
        return len(value) <= MAX_INPUT_CHARS
    if depth and isinstance(value, (list, tuple, set)):
        return len(value) <= _REPR.maxlist and all(_small(v, depth - 1) for v in value)
    if depth and isinstance(value, dict):
        return len(value) <= _REPR.maxdict and all(
            _small(k, 0) and _small(v, depth - 1) for k, v in value.items()
        )
    return False


def capped(text: str) -> str:
    """`text`, or its first MAX_DETAIL_CHARS characters and how many more there were."""
    if len(text) <= MAX_DETAIL_CHARS:
        return text
    return text[:MAX_DETAIL_CHARS] + f"… ({len(text) - MAX_DETAIL_CHARS:,} more characters)"
