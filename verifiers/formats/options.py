"""Our `[envfactory]` table in task.toml, config validation, and a small TOML writer.

The `[envfactory]` table holds what neither Harbor nor Terminal-Bench can say
(docs/task-formats.md): the verification scope and workspace, success criteria,
hidden-state notes, and, for deliberately broken tasks, the gate expected to reject
them. Unknown keys in it are an error (a typo must not silently change a reward);
unknown keys in Harbor's own tables are ignored, as Harbor adds fields over time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envfactory.core.errors import InvalidTask
from envfactory.core.models import CapabilityProfile, CheckKind, Semantics, VerifyScope

M = TypeVar("M", bound=BaseModel)


class EnvfactoryOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    workdir: str | None = None
    workspace_paths: tuple[str, ...] | None = None
    verify_scope: VerifyScope | None = None
    #: absolute paths of workspace files the task does not grade (EnvironmentSpec)
    ungraded: tuple[str, ...] = ()
    #: the harness semantics to gate under (default for imports: inferred, see scope.py)
    semantics: tuple[Semantics, ...] | None = Field(default=None, min_length=1)
    capabilities: CapabilityProfile | None = None
    success_criteria: str = ""
    hidden_state_notes: str = ""
    pids: int | None = Field(default=None, ge=16)
    exec_timeout_s: int | None = Field(default=None, ge=1)
    verifier_entry: str | None = None
    expected_failure: str | None = None
    expected_failure_kind: CheckKind | None = None


def parse_table(model: type[M], data: Any, *, where: str) -> M:
    """Validate one config table; any problem becomes an `InvalidTask` naming the key."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise InvalidTask(
            f"{where}: expected a table, got {type(data).__name__}",
            hint="write it as a [table] of key = value lines (docs/task-formats.md)",
        )
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        problems = [
            f"{where}.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        ]
        raise InvalidTask(
            "; ".join(problems), hint="fix the value(s) named above (docs/task-formats.md)"
        ) from None


def toml_value(value: Any) -> str:
    """A TOML literal for the simple values we write (str, bool, int, float, list, dict)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write {value} to TOML")
        return repr(value)
    if isinstance(value, str):
        if "\n" in value and "'''" not in value and _literal_ok(value):
            return "'''\n" + value + "'''"  # multi-line literal: readable, no escapes
        return json.dumps(value, ensure_ascii=False)  # JSON escapes are valid TOML
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        inner = ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{" + inner + "}" if inner else "{}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _literal_ok(text: str) -> bool:
    return all(ch in "\n\t" or ord(ch) >= 0x20 and ord(ch) != 0x7F for ch in text)


def toml_document(tables: Mapping[str, Mapping[str, Any]], head: Mapping[str, Any]) -> str:
    """`head` keys first, then one `[table]` per entry; None values are left out."""
    lines = [f"{k} = {toml_value(v)}" for k, v in head.items() if v is not None]
    for table, values in tables.items():
        body = [f"{k} = {toml_value(v)}" for k, v in values.items() if v is not None]
        if body:
            lines += ["", f"[{table}]", *body]
    return "\n".join(lines) + "\n"
