"""A seed sent as JSON (`POST /api/seeds`): the fields of a seed.yaml as one JSON object.

Checked by the seed format's own rules (`format.validate_fields`), as a seed.yaml is: a key
twice in one object is refused (as YAML refuses it), unknown keys are named, and a body
wrong in 60,000 ways costs one pass and a message listing the first problems and their
count (`problems.raise_if_any`).

`checked` is the form a worker process runs (the API checks large bodies out of its own
process, `envfactory.api.actions.seed_draft`): it returns a refusal as data, since our
errors do not survive pickling.
"""

from __future__ import annotations

import json
from typing import Any

from envfactory.core.errors import InvalidInput, InvalidSeed
from envfactory.core.unique_json import DuplicateKey, loads_unique

from .format import validate_fields
from .intake import SeedDraft, content_hash
from .problems import raise_if_any

LABEL = "request body"
#: a refusal, as a worker process hands it back: the error's message and hint
Refusal = tuple[str, str | None]


def draft_from_json(raw: bytes, label: str = LABEL) -> SeedDraft:
    """The body as a checked draft; InvalidSeed (or InvalidInput) naming every problem."""
    data = _fields(raw, label)
    if "constraints" in data and data["constraints"] in (None, {}):  # the defaults
        del data["constraints"]
    if "attachments" in data:  # a JSON body cannot carry files: never drop them silently
        raise InvalidSeed(
            f"{label} field 'attachments'",
            "cannot be sent as JSON",
            hint="POST multipart/form-data to /api/seeds/upload: the seed.yaml as "
            "`seed`, each file as a `files` part named by its path",
        )
    fields, problems = validate_fields(data, label)
    raise_if_any(problems, label)
    if fields is None:  # validate_fields reports every problem above
        raise InvalidSeed(label, "is not a valid seed")
    return SeedDraft(fields=fields, files=(), content_hash=content_hash(fields, []), label=label)


def checked(raw: bytes) -> SeedDraft | Refusal:
    """`draft_from_json` for a worker process: the draft, or the refusal's message and hint."""
    try:
        return draft_from_json(raw)
    except InvalidInput as e:
        return e.message, e.hint


def _fields(raw: bytes, label: str) -> dict[str, Any]:
    try:
        data = loads_unique(raw)
    except DuplicateKey as e:
        raise InvalidInput(
            f"body: {e}", hint="send each field once; the last one would silently win"
        ) from e
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InvalidSeed(label, f"is not UTF-8 JSON ({e})") from e
    if not isinstance(data, dict):
        raise InvalidSeed(
            label,
            f"must be a JSON object of seed fields, got {type(data).__name__}",
            hint='send {"title": …, "description": …, "domain": …}',
        )
    return data
