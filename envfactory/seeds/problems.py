"""Turning everything wrong with a seed into one ``InvalidSeed`` a user can act on.

Every check appends a ``Problem`` (where, what, how to fix) instead of stopping at the first,
so a user fixes a seed in one round; ``raise_if_any`` raises them together: the first
``LISTED`` of them and how many there are in all, so a seed wrong in 60,000 ways gets a
message of a few KiB, not megabytes (issue 46), and only the listed ones are worded.
"""

from __future__ import annotations

import difflib
import reprlib
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from envfactory.core.errors import InvalidSeed

#: How to fix each field, shown when it is missing, empty or of the wrong type.
FIELD_HINTS: dict[str, str] = {
    "title": "one line naming the task, e.g. `title: Nightly ETL drops rows after a schema change`",
    "description": "markdown describing the expert workflow: context, symptoms, what done looks like "
    "(use `description: |` for several lines)",
    "domain": "a short area label, e.g. `domain: data-engineering`",
    "attachments": "a path relative to the seed directory, or a list of them",
    "repository": "a clone URL or an absolute path, e.g. "
    "`repository: https://github.com/org/repo.git`",
    "history": "a mapping with revisions, paths and limit: mine the repository's fix commits, "
    "e.g. `history: {revisions: [v1.0..v1.1], limit: 50}`",
    "history.revisions": "one A..B range, or a list of commits, tags or merge commits",
    "history.paths": "a list of paths: only commits touching one of them are mined",
    "history.limit": "the newest N commits, a whole number >= 1, e.g. `limit: 50`",
    "constraints": "a mapping with max_turns, time_budget_s, base_image, judges, "
    "min_solve_rate and max_solve_rate",
    "constraints.max_turns": "a whole number of agent turns, 1..1000, e.g. `max_turns: 60`",
    "constraints.time_budget_s": "seconds as a whole number, 10..86400, e.g. `time_budget_s: 1800`",
    "constraints.base_image": "`debian` or `python`",
    "constraints.judges": "how many judges attempt the task, 1..32, e.g. `judges: 4`",
    "constraints.min_solve_rate": "the lowest accepted fraction of judges that solve it, "
    "0..1, e.g. `min_solve_rate: 0.25`",
    "constraints.max_solve_rate": "the highest accepted fraction of judges that solve it, "
    "0..1, e.g. `max_solve_rate: 0.75` (above it the task is flagged too easy)",
    "source": "free text saying where the seed came from, e.g. `source: incident INC-4411`",
}

_TYPE_NAMES = {
    "string_type": "text",
    "int_type": "a whole number",
    "float_type": "a number",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "bool_type": "true or false",
}


_BOUNDS = {
    "greater_than_equal": "at least",
    "greater_than": "more than",
    "less_than_equal": "at most",
    "less_than": "less than",
}


@dataclass(frozen=True)
class Problem:
    where: str
    problem: str
    hint: str | None = None

    def line(self) -> str:
        return f"{self.where}: {self.problem}" + (f" (fix: {self.hint})" if self.hint else "")


#: how many problems a message lists; the rest are counted
LISTED = 20


def raise_if_any(problems: list[Problem], file_label: str) -> None:
    if not problems:
        return
    if len(problems) == 1:
        p = problems[0]
        raise InvalidSeed(p.where, p.problem, hint=p.hint)
    listed = "\n".join(f"  - {p.line()}" for p in problems[:LISTED])
    if len(problems) <= LISTED:
        raise InvalidSeed(file_label, f"{len(problems)} problems:\n{listed}")
    more = len(problems) - LISTED
    raise InvalidSeed(
        file_label,
        f"{len(problems):,} problems, the first {LISTED} listed:\n{listed}\n"
        f"  … and {more:,} more (fix these and send it again to see them)",
    )


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


#: Shows a wrong value without walking all of it: a huge or deeply shared value (an alias
#: bomb that slipped a limit) must not turn an error message into gigabytes.
_REPR = reprlib.Repr()
_REPR.maxstring, _REPR.maxother, _REPR.maxlevel = 60, 60, 3
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6


def _shown(value: Any) -> str:
    text = _REPR.repr(value)
    return f"{type(value).__name__} {text[:60]}{'…' if len(text) > 60 else ''}"


def from_validation_error(
    exc: ValidationError, file_label: str, allowed: dict[str, list[str]]
) -> list[Problem]:
    """One Problem per pydantic error, named by field (``constraints.max_turns``).

    ``allowed`` maps a section ("" for the top level) to its keys, for unknown-key hints.
    """
    problems = []
    for n, err in enumerate(exc.errors(include_url=False)):
        field = _loc(err["loc"])
        where = f"{file_label} field '{field}'"
        if n >= LISTED:  # counted, never listed (`raise_if_any`): not worth wording
            problems.append(Problem(where, err["type"]))
            continue
        hint = FIELD_HINTS.get(field)
        kind, value = err["type"], err.get("input")
        if kind == "missing":
            problems.append(Problem(where, "is missing (required)", hint))
        elif kind == "extra_forbidden":
            problems.append(_unknown_key(file_label, err["loc"], allowed))
        elif kind == "string_too_short":
            problems.append(Problem(where, "is empty", hint))
        elif kind == "string_too_long":
            limit = err.get("ctx", {}).get("max_length")
            problems.append(
                Problem(
                    where,
                    f"is too long ({len(value)} characters, at most {limit})",
                    "shorten it; put detail in the description",
                )
            )
        elif kind in _BOUNDS:
            bound = next(iter(err.get("ctx", {}).values()), "?")
            problems.append(
                Problem(where, f"must be {_BOUNDS[kind]} {bound}, got {_REPR.repr(value)}", hint)
            )
        elif kind == "literal_error":
            expected = err.get("ctx", {}).get("expected", "?")
            problems.append(Problem(where, f"must be {expected}, got {_REPR.repr(value)}", hint))
        elif kind in _TYPE_NAMES:
            problems.append(
                Problem(where, f"must be {_TYPE_NAMES[kind]}, got {_shown(value)}", hint)
            )
        else:
            msg = err["msg"].removeprefix("Value error, ")
            problems.append(Problem(where, f"{msg}, got {_shown(value)}", hint))
    return problems


def split_unknown_keys(
    data: dict[str, Any], file_label: str, allowed: dict[str, list[str]]
) -> tuple[dict[str, Any], list[Problem]]:
    """`data` without the keys `allowed` does not name (top level "" and each mapping
    section), and one Problem per key left out. Found by set difference, not by the
    model: 60,000 unknown keys cost a pass over them, not 60,000 validation errors; only
    the first `LISTED` are worded with a guess (`raise_if_any` lists no more)."""
    problems: list[Problem] = []
    known = _known(data, (), file_label, allowed, problems)
    for section in (s for s in allowed if s and isinstance(known.get(s), dict)):
        known[section] = _known(known[section], (section,), file_label, allowed, problems)
    return known, problems


def _known(
    mapping: dict[str, Any],
    loc: tuple[str, ...],
    file_label: str,
    allowed: dict[str, list[str]],
    problems: list[Problem],
) -> dict[str, Any]:
    keys = set(allowed.get(".".join(loc), []))
    unknown = [k for k in mapping if k not in keys]
    worded = unknown[: max(0, LISTED - len(problems))]
    problems += [_unknown_key(file_label, (*loc, k), allowed) for k in worded]
    # the rest are only counted: one shared, never-listed Problem per key
    problems += [Problem(f"{file_label} field", "unknown key")] * (len(unknown) - len(worded))
    return {k: v for k, v in mapping.items() if k in keys}


def _unknown_key(file_label: str, loc: tuple[Any, ...], allowed: dict[str, list[str]]) -> Problem:
    section, key = ".".join(str(p) for p in loc[:-1]), str(loc[-1])
    keys = allowed.get(section, [])
    close = difflib.get_close_matches(key, keys, n=1)
    where = f"{file_label} field '{_loc(loc)}'"
    guess = f"did you mean '{close[0]}'? " if close else ""
    return Problem(where, "unknown key", f"{guess}allowed keys here: {', '.join(keys)}")
