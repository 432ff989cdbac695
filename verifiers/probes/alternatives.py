"""Correct alternatives: final states a correct solver could equally leave.

Not attacks: each is the oracle's result rewritten in a form the instruction does not
rule out — JSON or YAML re-serialised (another key order and indentation), CSV with every field
quoted, a text output's final newline added or taken away, a repository garbage-collected
with its refs packed, an SQLite database vacuumed. The gates verify each on the oracle's
state (`CheckKind.ALTERNATIVE`, expected 1); a verifier that gives 0 is *too strict*: a
warning on the report (`GateReport.too_strict`), shown by `validate` and on the review
page, for a reviewer to decide (exact bytes may be what the task asks for), never a
rejection. Built per gate run from what the reference wrote (`alternatives_for`); an
alternative that changes nothing is not built.
"""

from __future__ import annotations

import csv
import io
import json
import posixpath
from collections.abc import Mapping
from typing import Any

import yaml

from envfactory.core import bounded_yaml
from envfactory.core.models import EnvironmentSpec

from .base import Probe, qs
from .git import repositories
from .history import GIT, OracleEdit
from .numbers import embedded_writes, program_language, within_budget, written
from .workspace import Workspace, file_bytes

DB_EXTS = (".db", ".sqlite", ".sqlite3")


class _Rewritten(OracleEdit):
    """Shared shape: the rewritten files, written over the oracle's (and committed where
    the reference committed)."""

    def __init__(self, files: Mapping[str, bytes] | None = None) -> None:
        self.files = dict(files or {})

    def edits(self, spec: EnvironmentSpec) -> str:
        return embedded_writes(self.files)


class ReserialisedJson(_Rewritten):
    """Applied to the oracle state, a correct alternative: every JSON file the reference
    solution wrote, re-serialised with its objects' keys in reverse order and another
    indentation (same values, same array order)."""

    name = "json-reserialised"


class ReserialisedYaml(_Rewritten):
    """Applied to the oracle state, a correct alternative: every YAML file the reference
    solution wrote, re-serialised in block style with its mappings' keys in reverse order
    and another indentation (the same values once loaded; comments are not kept)."""

    name = "yaml-reserialised"


class QuotedCsv(_Rewritten):
    """Applied to the oracle state, a correct alternative: every CSV file the reference
    solution wrote, with every field quoted (same rows, same values)."""

    name = "csv-quoted"


class FinalNewline(_Rewritten):
    """Applied to the oracle state, a correct alternative: every text output the
    reference solution wrote loses its final newline, or gains one when it had none."""

    name = "final-newline"


class GarbageCollected(Probe):
    """Applied to the oracle state, a correct alternative: every repository the reference
    committed in is garbage-collected, its objects packed and its refs packed
    (`git gc --prune=now`, `git pack-refs --all`)."""

    name = "git-gc"

    def __init__(self, repos: tuple[str, ...] = ()) -> None:
        self.repos = repos

    def script(self, spec: EnvironmentSpec) -> str:
        lines = ["command -v git >/dev/null 2>&1 || exit 0"]
        for repo in self.repos:
            lines.append(f"d={qs([repo])}; {GIT} gc -q --prune=now && {GIT} pack-refs --all")
        return "\n".join(lines) + "\ntrue\n"


class VacuumedSqlite(Probe):
    """Applied to the oracle state, a correct alternative: every SQLite database the
    reference solution wrote is vacuumed (the same rows, the file's pages rebuilt)."""

    name = "sqlite-vacuumed"

    def __init__(self, paths: tuple[str, ...] = ()) -> None:
        self.paths = paths

    def script(self, spec: EnvironmentSpec) -> str:
        code = "import sqlite3, sys\nfor p in sys.argv[1:]:\n    c = sqlite3.connect(p)\n    c.execute('VACUUM')\n    c.close()\n"
        return f"command -v python3 >/dev/null 2>&1 || exit 0\npython3 -c {qs([code])} {qs(self.paths)}\n"


def _reversed_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reversed_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed_keys(v) for v in value]
    return value


def reserialised(data: bytes) -> bytes | None:
    try:
        value = json.loads(data)
    except ValueError:
        return None
    if not isinstance(value, dict | list):
        return None
    end = "\n" if data.endswith(b"\n") else ""
    out = (json.dumps(_reversed_keys(value), indent=3, ensure_ascii=False) + end).encode()
    return out if out != data else None


def yaml_reserialised(data: bytes) -> bytes | None:
    """`data` (one YAML document holding a mapping or a list) dumped again in another
    style, or None when it does not parse, is a scalar, or would not load back equal
    (a value YAML cannot write out as it read it)."""
    try:
        value = bounded_yaml.load(data.decode())
    except (UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(value, dict | list):
        return None
    out = yaml.safe_dump(
        _reversed_keys(value),
        indent=4,
        default_flow_style=False,
        allow_unicode=True,
        sort_keys=False,
    ).encode()
    try:
        same = bounded_yaml.load(out.decode()) == value
    except yaml.YAMLError:
        return None
    return out if same and out != data else None


def quoted(data: bytes) -> bytes | None:
    try:
        text = data.decode()
        rows = list(csv.reader(io.StringIO(text)))
    except (UnicodeDecodeError, csv.Error):
        return None
    if not rows:
        return None
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    out = buf.getvalue()
    if not text.endswith("\n"):
        out = out[:-1]
    return out.encode() if out.encode() != data else None


def newline_toggled(data: bytes) -> bytes | None:
    if not data or b"\0" in data[:1024]:
        return None
    try:
        data.decode()
    except UnicodeDecodeError:
        return None
    return data[:-1] if data.endswith(b"\n") and not data.endswith(b"\n\n") else data + b"\n"


def alternatives_for(oracle: Workspace, pristine: Workspace) -> tuple[Probe, ...]:
    """The correct alternatives the oracle's outputs allow (each only where it changes
    something)."""
    outputs = {
        p: e.data for p, e in written(oracle, pristine).items() if program_language(p, e) is None
    }
    found: list[Probe] = []
    for cls, rewrite, exts in (
        (ReserialisedJson, reserialised, (".json",)),
        (ReserialisedYaml, yaml_reserialised, (".yaml", ".yml")),
        (QuotedCsv, quoted, (".csv",)),
        (FinalNewline, newline_toggled, (".txt", ".csv", ".json", ".md", ".tsv", ".log", ".out")),
    ):
        files = {
            p: new
            for p, data in outputs.items()
            if p.lower().endswith(exts) and (new := rewrite(data)) is not None
        }
        files = within_budget(files)
        if files:
            found.append(cls(files))
    before, after = file_bytes(pristine), file_bytes(oracle)
    committed = tuple(
        sorted(r for r, refs in repositories(before).items() if repositories(after).get(r) != refs)
    )
    if committed:
        found.append(GarbageCollected(committed))
    dbs = tuple(sorted(p for p in outputs if posixpath.splitext(p)[1].lower() in DB_EXTS))
    if dbs:
        found.append(VacuumedSqlite(dbs))
    return tuple(found)
