"""Shared base for every model that crosses a process, a table or a file.

Frozen (hashable, safe to pass between activities) and strict about unknown keys, so a
typo in a seed or a pack manifest is an error rather than silently ignored data.

``UserText`` (and ``NonEmpty``, built on it) refuse NUL characters: PostgreSQL text cannot
hold them and no title, path or comment needs one, so every place user text enters (a
seed file, an API body, a pack) refuses it with the same message, before the store.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints, model_validator

SHA256_RE = re.compile(r"^[0-9a-f]{64}$")

NUL_MESSAGE = "must not contain NUL characters (\\0)"


def refuse_nul(value: str) -> str:
    """The one NUL check for user text (a pydantic after-validator)."""
    if "\x00" in value:
        raise ValueError(NUL_MESSAGE)
    return value


#: What no one-line user text needs and a terminal acts on: C0 and C1 controls (ESC, CR,
#: newline, tab, DEL …) and the bidirectional overrides that reorder what is shown.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
CONTROL_MESSAGE = "must be one line without control characters (newline, CR, tab, ESC, …)"


def control_characters(value: str) -> list[str]:
    """The control characters in `value`, spelled as escapes ("\\x1b"), in order, once each."""
    seen = dict.fromkeys(m.group() for m in _CONTROL.finditer(value))
    return [c.encode("unicode_escape").decode() for c in seen]


def refuse_control(value: str) -> str:
    """The one check for one-line user text (titles, names, paths; a pydantic validator);
    a NUL gets the NUL check's own message."""
    found = control_characters(refuse_nul(value))
    if found:
        raise ValueError(f"{CONTROL_MESSAGE}; found {', '.join(found)}")
    return value


def shown(value: str, keep: str = "") -> str:
    """`value` as a terminal may print it: each control character but those in `keep`
    (a description's newlines) as its escape."""
    return _CONTROL.sub(
        lambda m: m.group() if m.group() in keep else m.group().encode("unicode_escape").decode(),
        value,
    )


#: A content address in the artifact store: lowercase hex sha256 of the bytes.
ArtifactKey = Annotated[str, StringConstraints(pattern=SHA256_RE.pattern)]
#: Text a user typed or a file supplied: anything but NUL.
UserText = Annotated[str, AfterValidator(refuse_nul)]
NonEmpty = Annotated[
    str, StringConstraints(min_length=1, strip_whitespace=True), AfterValidator(refuse_nul)
]


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_computed_fields(cls, data: Any) -> Any:
        """Computed fields (e.g. a verdict) are serialised for readers but derived on load,
        so a dump validates back into the same model despite ``extra="forbid"``."""
        computed = cls.model_computed_fields
        if computed and isinstance(data, dict) and computed.keys() & data.keys():
            return {k: v for k, v in data.items() if k not in computed}
        return data


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id(prefix: str) -> str:
    """Short, sortable-enough ids with a readable prefix: ``env-3f2a9c1b7d0e``."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"
