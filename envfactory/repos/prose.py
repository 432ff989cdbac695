"""Hunks of a Python fix that change only its prose: docstrings and comments.

No test can tell such a hunk apart from its absence, so a partial state without it is
not an unsolved state: like a changelog line (`conventions.is_doc_path`), it goes into
every partial state. A hunk is prose when the file with that hunk alone applied parses to
the same syntax tree as the file before, docstrings left out (comments are not in the
tree). Anything that does not parse, or a hunk that does not apply where it says, is code.
"""

from __future__ import annotations

import ast
import re

from .patches import FilePatch

_HEAD = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def apply_hunk(old: str, hunk: str) -> str | None:
    """`old` with this one hunk applied at the lines it names, or None when its old side
    is not there."""
    lines = hunk.splitlines(keepends=True)
    head = _HEAD.match(lines[0]) if lines else None
    if head is None:
        return None
    start, count = int(head.group(1)), int(head.group(2) or "1")
    body = [ln for ln in lines[1:] if not ln.startswith("\\")]
    before = [ln[1:] for ln in body if ln[:1] in (" ", "-")]
    after = [ln[1:] for ln in body if ln[:1] in (" ", "+")]
    text = old.splitlines(keepends=True)
    at = start - 1 if count else start
    if [ln.rstrip("\n") for ln in text[at : at + count]] != [ln.rstrip("\n") for ln in before]:
        return None
    return "".join(text[:at] + after + text[at + count :])


def _shape(source: str) -> str | None:
    """The syntax tree without docstrings, dumped; None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return ast.dump(tree, include_attributes=False)


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def prose_hunks(patch: FilePatch, old: str) -> tuple[FilePatch | None, FilePatch | None]:
    """(the patch's code hunks, its prose hunks) for a Python file whose text before the
    fix is `old`; either is None when it holds no hunk."""
    shape = _shape(old)
    code: list[str] = []
    prose: list[str] = []
    for hunk in patch.hunks:
        applied = apply_hunk(old, hunk)
        same = shape is not None and applied is not None and _shape(applied) == shape
        (prose if same else code).append(hunk)
    return (
        FilePatch(patch.path, patch.header, tuple(code)) if code else None,
        FilePatch(patch.path, patch.header, tuple(prose)) if prose else None,
    )
