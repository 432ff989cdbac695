"""Mutants of a verifier: each one a copy of the verifier weakened in exactly one place.

The mutation score (`verifiers.mutation`) asks whether the gate battery notices a weaker
verifier; this module only writes the weaker verifiers. Python files are mutated through
their AST (`verifiers.python_mutants`: pick one node, render its replacement) and the
replacement is spliced into the original text at the node's position, so comments,
formatting and every other line stay byte-identical and the diff shows the one change.
Shell files are mutated line by line (`verifiers.shell_mutants`).

Invariants:
- one change per mutant, and it differs from the original; a Python mutant that does not
  parse is never handed out (checked when the cap takes it);
- imports are never mutated (no operator targets an import statement);
- the order is deterministic: files by path, candidates in source order, then a
  round-robin over operators (and, inside an operator, over files), so the `max_mutants`
  cap samples every operator and one huge file cannot crowd the others out;
- two candidates yielding the same text for the same file are one mutant.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from .python_mutants import python_edits
from .shell_mutants import is_shell, shell_edits

#: canonical operator order (the round-robin starts here)
OPERATORS = (
    "drop-assert",
    "drop-check",
    "compare-true",
    "eq-to-in",
    "relax-compare",
    "delete-test",
    "early-exit",
    "skip-file-check",
    "loosen-tolerance",
    "drop-check-line",
    "or-exit-true",
    "drop-set-e",
)


@dataclass(frozen=True)
class MutantFile:
    """One mutant: the file it changes, how, and the whole new text of that file."""

    file: str
    operator: str
    line: int
    text: bytes
    original: bytes = field(repr=False, default=b"")

    @property
    def diff(self) -> str:
        """The unified diff of the one change (computed on demand: most mutants are capped)."""
        return unified_diff(self.file, self.original, self.text)


def generate_mutants(files: Mapping[str, bytes], *, max_mutants: int = 40) -> list[MutantFile]:
    """Every mutant of the verifier's files, sampled round-robin down to `max_mutants`."""
    found = [m for path in sorted(files) for m in mutants_of_file(path, files[path])]
    return round_robin(found, max_mutants)


def mutants_of_file(path: str, data: bytes) -> list[MutantFile]:
    """All mutants of one file in source order; [] for a file we cannot mutate."""
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return []
    if path.endswith(".py"):
        edits = python_edits(text)
    elif is_shell(path, text):
        edits = shell_edits(text)
    else:
        return []
    out, seen = [], set()
    for e in edits:
        raw = data[: e.start] + e.text.encode() + data[e.end :]
        if raw == data or raw in seen:
            continue
        seen.add(raw)
        out.append(MutantFile(path, e.operator, e.line, raw, data))
    return out


def round_robin(mutants: list[MutantFile], cap: int) -> list[MutantFile]:
    """Take one per operator in turn (inside an operator, one per file in turn), skipping
    a Python mutant that does not parse (checked only for the ones taken: parsing is the
    expensive part)."""
    by_op: dict[str, list[MutantFile]] = {}
    for op in sorted({m.operator for m in mutants}, key=_op_rank):
        by_file: dict[str, list[MutantFile]] = {}
        for m in mutants:
            if m.operator == op:
                by_file.setdefault(m.file, []).append(m)
        by_op[op] = list(_interleave(list(by_file.values())))
    out: list[MutantFile] = []
    for m in _interleave(list(by_op.values())):
        if len(out) >= cap:
            break
        if _parses(m.file, m.text):
            out.append(m)
    return out


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    return "".join(
        difflib.unified_diff(
            before.decode().splitlines(keepends=True),
            after.decode().splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
            n=2,
        )
    )


def _interleave(queues: list[list[MutantFile]]) -> Iterator[MutantFile]:
    i = 0
    while any(i < len(q) for q in queues):
        for q in queues:
            if i < len(q):
                yield q[i]
        i += 1


def _op_rank(op: str) -> tuple[int, str]:
    return (OPERATORS.index(op) if op in OPERATORS else len(OPERATORS), op)


def _parses(path: str, raw: bytes) -> bool:
    if not path.endswith(".py"):
        return True
    try:
        ast.parse(raw)
    except (SyntaxError, ValueError):
        return False
    return True
