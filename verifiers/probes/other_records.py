"""The reference's in-place changes to a list file made to *other* records instead: the
same number of records changed, the same way, the wrong ones.

The file counterpart of `rows.OtherRecordsChanged`. A task that updates particular
records of a table file (mark these invoices paid, close those tickets) is checked by a
weak verifier that counts the changed records and checks each looks changed — never
which. Applied to the oracle's table files the reference changed in place (a CSV/TSV with
a header, or a JSON array of objects, the same number of records before and after, some
changed, the first column or the ``id`` key never among them): every changed record gets
its old content back, and as many other records get the changes instead, look-alikes
first (records whose changed fields held what a changed record's held before: another
``open`` invoice), then the rest in file order.

Lines of a CSV that the probe does not change keep their bytes (quoting, spacing); a
JSON document is written again with its indentation. Always a shortcut when rewarded, as
in SQLite: a task asks for particular records; one that let the solver pick any N of
them would have to say so.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .numbers import MAX_FILE_BYTES, file_entries, within_budget, written
from .rows import FilesWrittenOver
from .workspace import Workspace

Fields = dict[Any, Any]  # column index (CSV) or key (JSON) → value
_ID_KEYS = ("id", "_id", "uuid", "key")


class OtherRecordsInFile(FilesWrittenOver):
    """Applied to the oracle state: in every table file the reference solution changed in
    place (CSV/TSV rows, a JSON array's objects), the records it changed get their old
    content back and as many *other* records (look-alikes first) get its changes: the
    same counts, the wrong records. Fools a verifier that counts the changed records and
    checks each looks changed, never which. Always a shortcut when rewarded. Built per
    gate run (`other_records_probes`)."""

    name = "other-records-in-file"


def moved_changes(before: Sequence[Fields], after: Sequence[Fields]) -> dict[int, Fields] | None:
    """Record index → its new fields, for the state where the reference's changes went to
    other records (module docstring); None when the records cannot be paired or too few
    others are left."""
    if len(before) != len(after):
        return None
    changed = [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if b != a]
    if not changed:
        return None
    deltas = {i: {f: v for f, v in after[i].items() if before[i].get(f) != v} for i in changed}
    if any(f in _fixed(before[i]) for i in changed for f in deltas[i]):
        return None  # an identity changed: not an update in place
    others = _others(before, changed, deltas)
    if len(others) < len(changed):
        return None
    out: dict[int, Fields] = {i: dict(before[i]) for i in changed}
    for i, o in zip(changed, others, strict=False):
        out[o] = {**before[o], **deltas[i]}
    return out


def _fixed(record: Fields) -> set[Any]:
    """Fields that name a record: a CSV row's first column, a JSON object's id keys."""
    if 0 in record:
        return {0}
    return {k for k in record if isinstance(k, str) and k.lower() in _ID_KEYS}


def _others(
    before: Sequence[Fields], changed: list[int], deltas: Mapping[int, Fields]
) -> list[int]:
    """Unchanged records, look-alikes first: those whose fields the reference set held
    what a changed record's held before."""
    fields = sorted({f for d in deltas.values() for f in d}, key=str)
    old = {tuple(_key(before[i].get(f)) for f in fields) for i in changed}
    rest = [i for i in range(len(before)) if i not in deltas]
    alike = [i for i in rest if tuple(_key(before[i].get(f)) for f in fields) in old]
    return alike + [i for i in rest if i not in alike]


def _key(v: Any) -> str:
    return json.dumps(v, sort_keys=True)


# -- the two file kinds ---------------------------------------------------------------


def _csv(path: str, old: str, new: str) -> str | None:
    delimiter = "\t" if path.lower().endswith(".tsv") else ","
    before, after = old.splitlines(), new.splitlines()
    if len(before) < 3 or len(before) != len(after) or before[0] != after[0]:
        return None
    rows = [_row(line, delimiter) for line in (*before[1:], *after[1:])]
    if any(r is None for r in rows):
        return None
    n = len(before) - 1
    b = [dict(enumerate(r or ())) for r in rows[:n]]
    a = [dict(enumerate(r or ())) for r in rows[n:]]
    moved = moved_changes(b, a)
    if moved is None:
        return None
    lines = list(after)
    for i, fields in moved.items():
        lines[i + 1] = before[i + 1] if fields == b[i] else _line(fields, delimiter)
    end = "\r\n" if "\r\n" in new else "\n"
    return end.join(lines) + (end if new.endswith(("\n", "\r\n")) else "")


def _row(line: str, delimiter: str) -> list[str] | None:
    try:
        rows = list(csv.reader([line], delimiter=delimiter))
    except csv.Error:
        return None
    return rows[0] if len(rows) == 1 else None


def _line(fields: Fields, delimiter: str) -> str:
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="").writerow(
        [fields[i] for i in sorted(fields)]
    )
    return buf.getvalue()


def _json(old: str, new: str) -> str | None:
    try:
        b, a = json.loads(old), json.loads(new)
    except ValueError:
        return None
    path, before, after = _records(b, a)
    if before is None or after is None:
        return None
    moved = moved_changes(before, after)
    if moved is None:
        return None
    records = [moved.get(i, r) for i, r in enumerate(after)]
    doc: Any = records if path is None else {**a, path: records}
    indent = 2 if "\n" in new.strip() else None
    return json.dumps(doc, indent=indent, ensure_ascii=False) + ("\n" if new.endswith("\n") else "")


def _records(b: Any, a: Any) -> tuple[str | None, list[Fields] | None, list[Fields] | None]:
    """The arrays of objects to pair: the documents themselves, or the first key of a
    top-level object holding one in both."""
    if isinstance(b, list) and isinstance(a, list):
        return None, _objects(b), _objects(a)
    if isinstance(b, dict) and isinstance(a, dict):
        for key, value in a.items():
            if isinstance(value, list) and isinstance(b.get(key), list):
                return key, _objects(b[key]), _objects(value)
    return None, None, None


def _objects(items: list[Any]) -> list[Fields] | None:
    return items if items and all(isinstance(i, dict) for i in items) else None


def other_records_probes(oracle: Workspace, pristine: Workspace) -> tuple[OtherRecordsInFile, ...]:
    """The probe for the table files the reference changed in place (none where no file
    qualifies)."""
    before = file_entries(pristine)
    files = {}
    for path, entry in written(oracle, pristine).items():
        if path not in before or len(entry.data) > MAX_FILE_BYTES:
            continue
        try:
            old, new = before[path].data.decode(), entry.data.decode()
        except UnicodeDecodeError:
            continue
        lower = path.lower()
        text = (
            _csv(path, old, new)
            if lower.endswith((".csv", ".tsv"))
            else _json(old, new)
            if lower.endswith(".json")
            else None
        )
        if text is not None:
            files[path] = text.encode()
    files = within_budget(files)
    return (OtherRecordsInFile(files),) if files else ()
