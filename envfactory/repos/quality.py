"""Names a task's tests require that its instruction does not give.

A fix commit's message makes the instruction; its fail-to-pass tests may require a name
the message never says: the exception class `pytest.raises(LookupError)` expects, a
`match=` message literal. A solver that does what the instruction says (raise an
exception) then scores 0 for a choice nobody told it about. The names are read from the
tests' syntax tree at the fix commit: `pytest.raises(X)`, `self.assertRaises(X)`,
`assertRaisesRegex(X, "m")` and `match="m"`; `Exception` and `BaseException` say nothing
beyond "an exception" and are not counted.
"""

from __future__ import annotations

import ast
import re

from .declared import dotted_tail

_RAISES = {"raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp"}
_GENERIC = {"Exception", "BaseException"}
#: a regex's escapes and anchors are not words the instruction would hold
_REGEX_NOISE = re.compile(r"\\(.)|[\^$]")


def unsaid_names(tests: dict[str, bytes], test_ids: list[str], instruction: str) -> list[str]:
    """The names (in test order, once each) the tests `test_ids` require that
    `instruction` does not contain; `tests` maps repository paths to their text."""
    out: list[str] = []
    for test_id in test_ids:
        for name in _required(tests, test_id):
            if name not in out and not _said(name, instruction):
                out.append(name)
    return out


def _said(name: str, instruction: str) -> bool:
    if name.startswith(("'", '"')):  # a message literal: its words, case aside
        words = _REGEX_NOISE.sub(r"\1", name[1:-1]).strip().lower()
        return words in instruction.lower()
    return re.search(rf"\b{re.escape(name)}\b", instruction) is not None


def _required(tests: dict[str, bytes], test_id: str) -> list[str]:
    owner, _, name = test_id.partition("::")
    parts = owner.split(".")
    for cut in range(len(parts), 0, -1):  # module path, then classes
        path = "/".join(parts[:cut]) + ".py"
        if path in tests:
            func = _find(_tree(tests[path]), [*parts[cut:], *name.split("::")])
            return _names(func) if func is not None else []
    return []


def _tree(data: bytes) -> ast.Module:
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError):
        return ast.Module(body=[], type_ignores=[])


def _find(scope: ast.AST, path: list[str]) -> ast.AST | None:
    head = path[0].split("[", 1)[0]  # a parametrized id names its function
    for node in getattr(scope, "body", []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == head:
                return node if len(path) == 1 else _find(node, path[1:])
    return None


def _names(func: ast.AST) -> list[str]:
    out: list[str] = []
    for node in ast.walk(func):
        if not isinstance(node, ast.Call) or dotted_tail(node.func) not in _RAISES:
            continue
        if node.args:
            out += [n for n in _classes(node.args[0]) if n not in _GENERIC]
        literals = [kw.value for kw in node.keywords if kw.arg in ("match", "expected_regex")]
        literals += node.args[1:2] if dotted_tail(node.func).startswith("assertRaisesRegex") else []
        out += [repr(v.value) for v in literals
                if isinstance(v, ast.Constant) and isinstance(v.value, str) and len(v.value) >= 4]  # fmt: skip
    return out


def _classes(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Tuple):
        return [n for e in node.elts for n in _classes(e)]
    name = dotted_tail(node)
    return [name] if name else []
