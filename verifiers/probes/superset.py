"""The oracle's list outputs padded with look-alike items taken from the task's inputs.

A verifier that checks that every expected item is in an output, but never that nothing
else is (``expected <= set(got)``, ``grep -q`` per item, Perl's ``$have{$ip}`` loop),
accepts an output holding every candidate the inputs offer: "block every address in the
log" passes a blocklist check that only looks for the attackers. The format checks such a
verifier adds (each line an IPv4 address, the list sorted, no duplicates) do not stop it,
so the padding must pass them too: each added item has the *shape* of the oracle's own
lines (digits, letters and punctuation in the same order: ``10.0.0.7`` for
``203.0.113.5``, ``bob,12`` for ``alice,40``), is found in an input the task started with,
is not in the output already, and the file keeps its order (sorted stays sorted). Every
added item is one the reference solution left out, so an exact check rejects the state.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from envfactory.core.models import EnvironmentSpec

from .base import Probe
from .history import OracleEdit
from .numbers import MAX_FILE_BYTES, embedded_writes, file_entries, named_texts, within_budget
from .workspace import Workspace, mentioned_paths

#: one item per line: tables and plain lists (nested formats break when lines are added)
LIST_EXTS = (".csv", ".tsv", ".txt", ".out", ".dat", ".lst", ".list", ".jsonl", ".ndjson")
#: at most this many items are added to one file (enough to show the check is one-sided)
MAX_ADDED = 50
#: inputs larger than this are not searched for candidates
MAX_INPUT_BYTES = MAX_FILE_BYTES
_PART = re.compile(r"\d+|[A-Za-z]+|\s+|.", re.S)


def shape(line: str) -> str:
    """A regular expression for lines like `line`: each run of digits, of letters and of
    spaces stands for any such run; every other character stands for itself."""
    out = []
    for m in _PART.finditer(line):
        t = m.group(0)
        if t.isdigit():
            out.append(r"\d+")
        elif t.isascii() and t.isalpha():
            out.append("[A-Za-z]+")
        elif t.isspace():
            out.append(r"[ \t]+")
        else:
            out.append(re.escape(t))
    return "".join(out)


def padded(text: str, keep: frozenset[str], inputs: Sequence[str]) -> str:
    """`text` with look-alikes of its own lines found in `inputs` added (`keep`: the
    lines the file started with, such as a header, which stay where they are)."""
    lines = text.splitlines()
    body = [ln for ln in lines if ln not in keep and ln.strip()]
    if not body:
        return text
    shapes = sorted({shape(ln) for ln in body}, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w.:/@-])(?:" + "|".join(shapes) + r")(?![\w.:/@-])")
    have, extra = set(lines), []
    for source in inputs:
        for m in pattern.finditer(source):
            item = m.group(0)
            if item not in have:
                have.add(item)
                extra.append(item)
                if len(extra) >= MAX_ADDED:
                    break
        if len(extra) >= MAX_ADDED:
            break
    if not extra:
        return text
    head = [ln for ln in lines if ln in keep or not ln.strip()]
    new_body = sorted(body + extra) if body == sorted(body) else body + extra
    end = "\n" if text.endswith("\n") else ""
    return "\n".join(head + new_body) + end


class SupersetLines(OracleEdit):
    """Applied to the oracle state: each list output the instruction names gets up to 50
    lines of its own lines' shape (``10.0.0.7`` for ``203.0.113.5``) found in the inputs the
    task started with and not in the output, its order kept (module docstring). Fools a
    verifier that checks that the expected items are present but not that nothing else is.
    Built per gate run (`superset_lines`); never in the default battery."""

    name = "superset-lines"

    def __init__(self, files: dict[str, bytes] | None = None) -> None:
        self.files = dict(files or {})

    @property
    def touched(self) -> tuple[str, ...]:
        return tuple(sorted(self.files))

    def edits(self, spec: EnvironmentSpec) -> str:
        return embedded_writes(self.files)


def superset_lines(
    oracle: Workspace, pristine: Workspace, instruction: str, workdir: str
) -> tuple[Probe, ...]:
    """`SupersetLines` for the list files the oracle created that the instruction names,
    where the inputs offer look-alikes of their lines; () when none does. Outputs only:
    files the task did not start with, or that the instruction names one by one (a stale
    report to regenerate). Padding an input the reference rewrote (an export in a named
    directory whose format it fixed) leaves the outputs right, and a verifier that checks
    only the outputs rightly accepts that state."""
    before, names = file_entries(pristine), set(mentioned_paths(instruction, workdir))
    texts = {
        path: entry
        for path, entry in named_texts(oracle, pristine, instruction, workdir).items()
        if (path not in before or path in names) and path.lower().endswith(LIST_EXTS)
    }
    if not texts:
        return ()
    inputs = _input_texts(pristine)
    files = {}
    for path, (text, keep) in texts.items():
        new = padded(text, keep, inputs)
        if new != text:
            files[path] = new.encode()
    files = within_budget(files)
    return (SupersetLines(files),) if files else ()


def _input_texts(pristine: Workspace) -> list[str]:
    """The UTF-8 text files the task started with (its inputs), in path order."""
    out = []
    for _path, entry in sorted(file_entries(pristine).items()):
        if len(entry.data) > MAX_INPUT_BYTES:
            continue
        try:
            out.append(entry.data.decode())
        except UnicodeDecodeError:
            continue
    return out
