"""Record order and multiplicity: the oracle's list outputs with their records reordered,
or one record duplicated.

A list output is a sequence of records: the lines of a text file (a table's rows below its
header), the items of a JSON array, the rows of an SQLite table. A verifier that compares
sets (``sort -u`` before comparing, ``set(lines) == expected``) rewards a list in any order
and with repeats. Whether that is a shortcut depends on the task, and the gates decide it
from the instruction's own words by one plain rule (`order_required`,
`uniqueness_required`):

- order is required when the instruction says so in any common phrasing (`ORDER_PHRASES`:
  *sorted by*, *keep the row order*, *in the same order*, *in the order they appear*,
  *in ascending order*, *order must not change*, *newest first*…), once the phrasings
  that free the order or mean something else (*in any order*, *order does not matter*,
  *order of operations*, *purchase orders*) are set aside;
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

#: How instructions say that records keep an order (True), or that their order is free or
#: a word for something else (False): the False phrasings of a text are blanked first, so
#: "in any order" or "the order of operations" never reads as "in order" / "order of".
ORDER_PHRASES: tuple[tuple[str, bool], ...] = (
    (
        r"(?:in\s+)?(?:any|an?\s+arbitrary|arbitrary|no\s+(?:particular|specific)|random)\s+order",
        False,
    ),
    (
        r"order\s+(?:does\s*n[o']?t|do\s+not|need\s*n[o']?t|is\s*n[o']?t|will\s*not|won't)\s+"
        r"(?:matter|important|significant|relevant|checked|count|be\s+(?:checked|preserved|kept))",
        False,
    ),
    (r"(?:regardless|irrespective|independent)\s+of\s+(?:the\s+)?(?:\w+\s+)?order", False),
    (
        r"un-?ordered|un-?sorted|order[-\s](?:in)?sensitive|order[-\s](?:in)?dependent|"
        r"order[-\s]agnostic",
        False,
    ),
    (
        r"(?:need|does|do|must|should)\s*(?:n[o']?t|not)\s+(?:be\s+)?(?:sorted|ordered|in\s+order)",
        False,
    ),
    (
        r"order\s+of\s+(?:operations|magnitude|precedence|evaluation|execution|business)|"
        r"in\s+order\s+(?:to|for)\b|(?:purchase|sales|work|customer|pending|open|restraining)\s+"
        r"orders?|order\s+(?:id|ids|number|numbers|total|totals|date|status|line|lines|items?)\b",
        False,
    ),
    (r"sort(?:ed|s|ing)?", True),
    (
        r"(?:keep|keeps|keeping|preserve[sd]?|preserving|maintain(?:s|ed|ing)?|retain(?:s|ed|ing)?|"
        r"respect(?:s|ed|ing)?)\s+(?:the\s+|their\s+|its\s+)?(?:\w+\s+){0,2}order(?:ing)?",
        True,
    ),
    (
        r"(?:the\s+)?(?:same|original|given|input|existing|source|file|row|line|record|current)\s+"
        r"order",
        True,
    ),
    (r"in\s+(?:the\s+)?order\s+(?:they|it|that|in\s+which|of|given|listed|shown)", True),
    (r"in\s+(?:\w+\s+)?order\b", True),
    (
        r"(?:ascending|descending|increasing|decreasing|reverse|alphabetical|chronological|"
        r"numerical|lexicographic(?:al)?)\s+order",
        True,
    ),
    (
        r"ascending(?:ly)?|descending(?:ly)?|alphabetic(?:al(?:ly)?)?|chronological(?:ly)?|"
        r"lexicographic(?:al(?:ly)?)?",
        True,
    ),
    (r"order(?:ed)?\s+by|ordered|ranked|rank\s+them", True),
    (
        r"order\s+(?:must|should|shall|has\s+to|needs?\s+to)\s+(?:not\s+change|stay|remain|be\s+"
        r"(?:kept|preserved|maintained|the\s+same|unchanged))|order\s+(?:is|are)\s+(?:preserved|"
        r"kept|significant|important)|order\s+(?:matters|counts)",
        True,
    ),
    (r"(?:not|never|n't)\s+(?:be\s+)?re-?order(?:ed)?|without\s+re-?ordering", True),
    (
        r"(?:oldest|newest|largest|smallest|highest|lowest|earliest|latest|biggest|most\s+\w+)\s+"
        r"first",
        True,
    ),
)
_ORDER_FREE = re.compile("|".join(rf"\b(?:{p})\b" for p, asks in ORDER_PHRASES if not asks), re.I)
_ORDER = re.compile("|".join(rf"\b(?:{p})\b" for p, asks in ORDER_PHRASES if asks), re.I)
_UNIQUE = re.compile(
    r"\b(?:unique(?:ly)?|duplicates?|de-?duplicat\w*|distinct|(?:exactly|only)\s+once|"
    r"exactly\s+one)\b",
    re.I,
)
LINE_EXTS = (".txt", ".csv", ".tsv", ".jsonl", ".ndjson", ".lst", ".list", ".out", ".dat")
_HEADED = (".csv", ".tsv")


def order_required(instruction: str) -> bool:
    """Whether the instruction asks for an order (`ORDER_PHRASES`, module docstring)."""
    return _ORDER.search(_ORDER_FREE.sub(" ", instruction)) is not None


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
