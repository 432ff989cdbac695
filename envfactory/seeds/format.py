"""The seed file format (``seed.yaml``): parsing and field validation.

See ``docs/seed-format.md`` for the user-facing description. Invariants: the file is UTF-8
YAML whose top level is a mapping; no key appears twice; unknown keys are errors (a typo
must not silently drop data); types are strict (``max_turns: "60"`` is an error, not 60);
the YAML is parsed within bounds (`envfactory.core.bounded_yaml`: no alias bombs, no deep
nesting) and no text field may hold a NUL character.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from envfactory.core import bounded_yaml
from envfactory.core.models import Constraints, refuse_control, refuse_nul

from .problems import FIELD_HINTS, Problem, from_validation_error, split_unknown_keys

_NoNul = AfterValidator(refuse_nul)
_OneLine = AfterValidator(refuse_control)  # a title ESC-sequenced rewrites a reviewer's terminal
Title = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), _OneLine
]
Domain = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), _OneLine
]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1), _NoNul]
Source = Annotated[str, StringConstraints(strip_whitespace=True, max_length=500), _OneLine]

_REPO_URL = re.compile(r"^((https?|ssh|git|file)://\S+|[\w.-]+@[\w.-]+:\S+|/\S*)$")
Revision = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300), _OneLine
]


class SeedHistory(BaseModel):
    """``history:`` — mine the repository's fix commits instead of researching a task."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    revisions: list[Revision] = Field(default_factory=list, max_length=1000)
    paths: list[Revision] = Field(default_factory=list, max_length=100)
    limit: int | None = Field(default=None, ge=1, le=100_000)

    @field_validator("revisions")
    @classmethod
    def _no_option(cls, v: list[str]) -> list[str]:
        for r in v:
            if r.startswith("-"):
                raise ValueError(f"{r!r} starts with '-': name a commit, tag or A..B range")
        if len(v) > 1 and any(".." in r for r in v):
            raise ValueError("give one A..B range, or a list of commits and tags, not both")
        for r in v:
            if r.count("..") > 1 or "..." in r:
                raise ValueError(f"{r!r} is not a range A..B")
        return v


class SeedFile(BaseModel):
    """What ``seed.yaml`` may contain. ``attachments`` is checked separately (paths)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: Title
    description: Text
    domain: Domain
    attachments: Any = None
    repository: Text | None = None
    history: SeedHistory | None = None
    constraints: Constraints = Field(default_factory=Constraints)
    source: Source | None = None

    @field_validator("repository")
    @classmethod
    def _clone_url(cls, v: str | None) -> str | None:
        if v is not None and not _REPO_URL.match(v):
            raise ValueError("is not a clone URL or an absolute path")
        return v

    @field_validator("history")
    @classmethod
    def _history_needs_repository(
        cls, v: SeedHistory | None, info: ValidationInfo
    ) -> SeedHistory | None:
        if v is not None and info.data.get("repository") is None:
            raise ValueError("needs `repository:` (the repository whose history to mine)")
        return v


ALLOWED_KEYS = {
    "": list(SeedFile.model_fields),
    "constraints": list(Constraints.model_fields),
    "history": list(SeedHistory.model_fields),
}


class _UniqueKeyLoader(bounded_yaml.BoundedSafeLoader):
    """SafeLoader that refuses a key given twice (PyYAML would keep the last silently)."""


def _mapping(loader: _UniqueKeyLoader, node: yaml.Node) -> dict[Any, Any]:
    if not isinstance(node, yaml.MappingNode):  # `!!map x`: the tag on a scalar or a list
        raise yaml.constructor.ConstructorError(
            None,
            None,
            "expected a mapping, but found "
            + ("a list" if isinstance(node, yaml.SequenceNode) else "a single value"),
            node.start_mark,
        )
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            line = key_node.start_mark.line + 1
            raise _DuplicateKey(f"key '{key}' appears twice (second time on line {line})")
        seen.add(key)
    return loader.construct_mapping(node, deep=True)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


class _DuplicateKey(Exception):
    pass


def decode_utf8(data: bytes, label: str, filename: str) -> tuple[str | None, Problem | None]:
    """Decode strictly; on failure name the line and column of the first bad byte."""
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = data[exc.start : exc.start + 1].hex()
        return None, Problem(
            label,
            f"is not UTF-8 text (byte 0x{bad} at line {line}, column {col})",
            f"save it as UTF-8, e.g. `iconv -f latin1 -t utf-8 {filename} > {filename}.utf8`",
        )


def parse_yaml(text: str, label: str) -> tuple[dict[str, Any] | None, Problem | None]:
    try:
        data = bounded_yaml.load(text, loader=_UniqueKeyLoader)
    except _DuplicateKey as exc:
        return None, Problem(label, str(exc), "keep one of them")
    except bounded_yaml.YamlTooComplex as exc:
        return None, Problem(
            label,
            f"is refused: {exc}",
            "write the values out: no deep nesting, no repeated aliases",
        )
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = getattr(exc, "problem", None) or str(exc)
        hint = "check indentation and quote values containing ': '"
        if isinstance(exc, bounded_yaml.YamlValueError):
            hint = "quote the value to keep it as text, or write a valid one"
        return None, Problem(label, f"is not valid YAML{at}: {what}", hint)
    if not isinstance(data, dict):
        got = "an empty file" if data is None else f"a {type(data).__name__}"
        return None, Problem(
            label,
            f"must be a YAML mapping of fields, got {got}",
            "start with `title: ...`; see docs/seed-format.md",
        )
    return data, None


def validate_fields(data: dict[str, Any], label: str) -> tuple[SeedFile | None, list[Problem]]:
    """Validate the fields strictly; every problem is named by its field."""
    bad_keys = [k for k in data if not isinstance(k, str)]
    if bad_keys:
        return None, [
            Problem(label, f"keys must be text, got {bad_keys[0]!r}", FIELD_HINTS["title"])
        ]
    known, unknown = split_unknown_keys(data, label, ALLOWED_KEYS)
    try:
        fields = SeedFile.model_validate(known, strict=True)
    except ValidationError as exc:
        return None, from_validation_error(exc, label, ALLOWED_KEYS) + unknown
    return (None, unknown) if unknown else (fields, [])
