"""Record order and multiplicity: the oracle's list outputs with their records reordered,
or one record duplicated.

A list output is a sequence of records: the lines of a text file (a table's rows below its
header), the items of a JSON array, the rows of an SQLite table. A verifier that compares
sets (``sort -u`` before comparing, ``set(lines) == expected``) rewards a list in any order
and with repeats. Whether that is a shortcut depends on the task, and the gates decide it
from the instruction's own words by one plain rule (`order_required`,
`uniqueness_required`):

- order is required when the instruction says *sorted*, *sort*, *order* (``in order``,
  ``in the order``, ``ordered by``), *ascending*, *descending*, *alphabetical*,
  *chronological*, *ranked*, *oldest first* or *newest first*;
- uniqueness is required when it says *unique*, *duplicate* (``no duplicates``,
  ``without duplicates``, ``deduplicate``), *distinct*, *exactly once*, *only once* or
  *exactly one*.

A required property makes the probe an ordinary one (expected 0, a 1 is a shortcut);
otherwise it is a *tolerance* (`CheckKind.TOLERANCE`): a verifier that rewards it is
shown a warning on the report and the review page, never rejected — a reviewer decides
whether the task needed the order. The rule reads, for each output, the sentences that
name it (by path, or by its file name) and the sentences that name no file at all; an
order word in a sentence about another file does not make this one's order required.
When no sentence names the output, the whole instruction is read. A probe holds the
outputs whose property is required; only when none is does it hold them all, as a
tolerance.

Outputs probed: the files the reference created, or changed and the instruction names,
that hold records (no sentence of prose: a report's paragraphs are not a list); at least
two different records to reorder, one to duplicate. Reordering reverses the records; the
duplicate is the first record again, right after itself (a sorted list stays sorted, so
only uniqueness is tested). In SQLite tables a row's place means nothing without ORDER BY,
so only the duplicate applies there (the last row the reference inserted or changed,
copied under a new rowid where the schema allows it).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from typing import Any

from envfactory.core.models import EnvironmentSpec

from .database import DatabaseChanges, rewritten
from .history import OracleEdit
from .numbers import MAX_FILE_BYTES, file_entries, is_prose, named, within_budget, written
from .rows import FilesWrittenOver, duplicate_row
from .workspace import SQLITE_MAGIC, Workspace, mentioned_paths

_ORDER = re.compile(
    r"\b(?:sort(?:ed|s|ing)?|(?:in|the|same|chronological|reverse|alphabetical)\s+order|"
    r"order(?:ed)?\s+by|ascending|descending|alphabetic(?:al(?:ly)?)?|chronological(?:ly)?|"
    r"ranked|(?:oldest|newest|largest|smallest|highest|lowest)\s+first)\b",
    re.I,
)
_UNIQUE = re.compile(
    r"\b(?:unique(?:ly)?|duplicates?|de-?duplicat\w*|distinct|(?:exactly|only)\s+once|"
    r"exactly\s+one)\b",
    re.I,
)
LINE_EXTS = (".txt", ".csv", ".tsv", ".jsonl", ".ndjson", ".lst", ".list", ".out", ".dat")
_HEADED = (".csv", ".tsv")


def order_required(instruction: str) -> bool:
    """Whether the instruction asks for an order (module docstring)."""
    return _ORDER.search(instruction) is not None


def uniqueness_required(instruction: str) -> bool:
    """Whether the instruction asks for each record once (module docstring)."""
    return _UNIQUE.search(instruction) is not None


def _sentences(instruction: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", instruction) if s.strip()]


def _names(path: str, mentioned: list[str]) -> bool:
    base = posixpath.basename(path)
    return named(path, mentioned) or any(posixpath.basename(m) == base for m in mentioned)


def about(path: str, instruction: str, workdir: str) -> str:
    """The part of the instruction that speaks of `path`'s records: the sentences naming
    it and those naming no file, or the whole instruction when none names it."""
    naming, general = [], []
    for sentence in _sentences(instruction):
        mentioned = mentioned_paths(sentence, workdir)
        if not mentioned:
            general.append(sentence)
        elif _names(path, mentioned):
            naming.append(sentence)
    return " ".join(naming + general) if naming else instruction


class RecordsReordered(FilesWrittenOver):
    """Applied to the oracle state: the records of every list output the reference
    solution wrote (lines below a table's header, a JSON array's items) in reverse order.
    A shortcut when the instruction asks for an order (``sorted``, ``in the order``…);
    otherwise a tolerance, shown on the report. Built per gate run (`record_probes`)."""

    name = "records-reordered"


class RecordDuplicated(FilesWrittenOver):
    """Applied to the oracle state: the first record of every list output the reference
    solution wrote appears twice (right after itself; in an SQLite table, the last row
    it inserted or changed copied under a new rowid). A shortcut when the instruction
    asks for uniqueness (``unique``, ``no duplicates``, ``exactly once``…); otherwise a
    tolerance, shown on the report. Built per gate run (`record_probes`)."""

    name = "record-duplicated"


def _split(path: str, text: str) -> tuple[list[str], list[str], str] | None:
    """(header lines, record lines, ending) of a line-per-record file; None when it is
    not one (prose, or no record)."""
    lines = text.splitlines()
    head = lines[:1] if path.lower().endswith(_HEADED) else []
    body = [ln for ln in lines[len(head) :] if ln.strip()]
    if not body or any(is_prose(ln) for ln in body):
        return None
    return head, body, "\n" if text.endswith("\n") else ""


def _lines(path: str, text: str, edit: Callable[[list[str]], list[str]]) -> str | None:
    parts = _split(path, text)
    if parts is None:
        return None
    head, body, end = parts
    new = edit(body)
    return None if new == body else "\n".join(head + new) + end


def _json(text: str, edit: Callable[[list[Any]], list[Any]]) -> str | None:
    """The JSON document with `edit` applied to its first array of records (the document
    itself, or the first array among a top-level object's values)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    indent = 2 if "\n" in text.strip() else None
    end = "\n" if text.endswith("\n") else ""
    if isinstance(doc, list):
        new: Any = edit(doc)
        return None if new == doc else json.dumps(new, indent=indent) + end
    if isinstance(doc, dict):
        for key, value in doc.items():
            if isinstance(value, list) and value and edit(value) != value:
                return json.dumps({**doc, key: edit(value)}, indent=indent) + end
    return None


def _reversed(items: list[Any]) -> list[Any]:
    return items[::-1]


def _doubled(items: list[Any]) -> list[Any]:
    return items[:1] + items if items else items


def _rewritten_lists(
    texts: dict[str, str], edit: Callable[[list[Any]], list[Any]]
) -> dict[str, bytes]:
    out = {}
    for path, text in texts.items():
        new = _json(text, edit) if path.lower().endswith(".json") else _lines(path, text, edit)
        if new is not None:
            out[path] = new.encode()
    return out


def list_outputs(
    oracle: Workspace, pristine: Workspace, instruction: str, workdir: str
) -> dict[str, str]:
    """The list-like text outputs (module docstring): path → text."""
    before = file_entries(pristine)
    names = mentioned_paths(instruction, workdir)
    out = {}
    for path, entry in written(oracle, pristine).items():
        if not path.lower().endswith((*LINE_EXTS, ".json")) or len(entry.data) > MAX_FILE_BYTES:
            continue
        if entry.data.startswith(SQLITE_MAGIC):
            continue
        if path in before and not named(path, names):
            continue
        try:
            out[path] = entry.data.decode()
        except UnicodeDecodeError:
            continue
    return out


def record_probes(
    oracle: Workspace,
    pristine: Workspace,
    spec: EnvironmentSpec,
    databases: tuple[DatabaseChanges, ...],
) -> tuple[tuple[OracleEdit, ...], tuple[OracleEdit, ...]]:
    """(the probes the instruction makes shortcuts, the tolerances) for the oracle's
    list outputs and databases."""
    texts = list_outputs(oracle, pristine, spec.instruction, spec.workdir)
    reordered = within_budget(_rewritten_lists(texts, _reversed))
    doubled = _rewritten_lists(texts, _doubled)
    for db in databases:
        data = rewritten(db, duplicate_row)
        if data is not None:
            doubled[db.path] = data
    doubled = within_budget(doubled)
    required: list[OracleEdit] = []
    tolerated: list[OracleEdit] = []
    for cls, files, rule in (
        (RecordsReordered, reordered, order_required),
        (RecordDuplicated, doubled, uniqueness_required),
    ):
        needed = {p: d for p, d in files.items() if rule(about(p, spec.instruction, spec.workdir))}
        if needed:
            required.append(cls(needed))
        elif files:
            tolerated.append(cls(files))
    return tuple(required), tuple(tolerated)
