"""Mutation operators for Python verifier files, on the AST.

Each operator finds nodes in the parsed file (`ast.parse`) and returns `Edit`s that replace
exactly one node's source span — a statement by `pass`, a comparison by a constant or by
the same operands with another operator, a tolerance by itself × 1000 — or insert one
statement (an early exit) before a function's first statement. Replacement text reuses
the operands' own source text, so nothing else in the file is re-rendered.

Operators: drop-assert (`assert`, unittest `self.assert*`), drop-check (`if …: fail()`
guards), compare-true (a comparison → the constant that lets its check pass: True under
`assert`, False in a failing guard's test, `not` flips), eq-to-in (`==` → `in`, `!=` →
`not in` against a string literal), relax-compare (`==` → `>=`, `<` → `<=`, `>` → `>=`),
delete-test, early-exit (`return` in a test, `raise SystemExit(0)` in `main` or before a
script's first action), skip-file-check (`exists`/`is_file`/`isdir`… → True),
loosen-tolerance (`abs(a-b) < eps`, `isclose(rel_tol=…)`, `approx(rel=…)` × 1000).
Comparisons are mutated only where they decide a check (assert / if / while / return);
import statements are never a target.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from .edits import Edit

_FAIL_CALLS = {"fail", "exit", "_exit", "quit", "abort", "die", "error", "fatal"}
_ERROR_LISTS = ("err", "fail", "problem", "issue", "wrong")
_FILE_CHECKS = {"exists", "lexists", "is_file", "is_dir", "isfile", "isdir"}
_TOLERANCES = {
    "isclose": ("rel_tol", "abs_tol", "rtol", "atol"),
    "approx": ("rel", "abs"),
    "allclose": ("rtol", "atol"),
    "assert_allclose": ("rtol", "atol"),
}
_LOOSEN = 1000
#: top-level statements of a script that do nothing yet (an early exit goes after them)
_PASSIVE = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
)


def python_edits(text: str) -> list[Edit]:
    """Candidate edits of a Python file, in source order; [] when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    src = _Source(text)
    want = _decisions(tree)
    edits: list[Edit] = []
    for rule in _RULES:
        edits += rule(tree, src, want)
    return sorted(edits, key=lambda e: (e.start, e.operator, e.end, e.text))


class _Source:
    """Byte offsets of AST positions (col_offset counts UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self.data = text.encode()
        self.lines = self.data.split(b"\n")
        self.starts = [0]
        for line in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def at(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.at(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.at(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def segment(self, node: ast.AST) -> str:
        a, b = self.span(node)
        return self.data[a:b].decode()

    def starts_line(self, node: ast.stmt) -> bool:
        return not self.lines[node.lineno - 1][: node.col_offset].strip()


def _replace(op: str, src: _Source, node: ast.AST, text: str) -> Edit:
    a, b = src.span(node)
    return Edit(op, node.lineno, a, b, text)  # type: ignore[attr-defined]


def _stmt_to_pass(op: str, src: _Source, node: ast.stmt) -> Edit:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    a, b = src.at(first, node.col_offset), src.at(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]
    return Edit(op, node.lineno, a, b, "pass")


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _statements(tree: ast.AST) -> Iterator[ast.stmt]:
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def _fails(body: list[ast.stmt]) -> bool:
    """Whether running `body` reports a failure (raise, exit non-zero, fail(), return False)."""
    for stmt in body:
        for node in _shallow_walk(stmt):
            if isinstance(node, ast.Raise):
                return True
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant):
                if node.value.value is False or (
                    type(node.value.value) is int and node.value.value != 0
                ):
                    return True
            if isinstance(node, ast.Call) and _failing_call(node):
                return True
    return False


def _failing_call(call: ast.Call) -> bool:
    name = _name(call.func)
    if name in ("exit", "_exit", "quit"):
        arg = call.args[0] if call.args else None
        return not (arg is None or (isinstance(arg, ast.Constant) and arg.value in (0, None)))
    if name in _FAIL_CALLS or name.startswith("fail"):
        return True
    if name in ("append", "add", "extend") and isinstance(call.func, ast.Attribute):
        target = call.func.value
        return isinstance(target, ast.Name) and any(w in target.id.lower() for w in _ERROR_LISTS)
    return False


def _shallow_walk(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk that does not enter nested functions, classes or lambdas."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for child in ast.iter_child_nodes(n):
            if not isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
            ):
                todo.append(child)


def _decisions(tree: ast.AST) -> dict[int, bool]:
    """For each expression that decides a check: the value that lets the check pass.

    `assert X` passes when X is True; `if X: fail()` passes when X is False; `not` flips;
    `and` / `or` pass the wanted value down to each operand.
    """
    want: dict[int, bool] = {}

    def visit(expr: ast.expr, value: bool) -> None:
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            visit(expr.operand, not value)
        elif isinstance(expr, ast.BoolOp):
            for v in expr.values:
                visit(v, value)
        else:
            want[id(expr)] = value

    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            visit(node.test, True)
        elif isinstance(node, ast.If):
            visit(node.test, not _fails(node.body) or _fails(node.orelse))
        elif isinstance(node, ast.While | ast.IfExp):
            visit(node.test, True)
        elif isinstance(node, ast.Return) and node.value is not None:
            visit(node.value, True)
    return want


def _is_dunder_name(node: ast.Compare) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == "__name__" for n in [node.left, *node.comparators]
    )


def _r_drop_assert(tree: ast.AST, src: _Source, want: dict[int, bool]) -> list[Edit]:
    out = []
    for s in _statements(tree):
        unittest_assert = (
            isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Call)
            and isinstance(s.value.func, ast.Attribute)
            and s.value.func.attr.startswith("assert")
        )
        if isinstance(s, ast.Assert) or unittest_assert:
            out.append(_stmt_to_pass("drop-assert", src, s))
    return out


def _r_drop_check(tree: ast.AST, src: _Source, want: dict[int, bool]) -> list[Edit]:
    return [
        _stmt_to_pass("drop-check", src, s)
        for s in _statements(tree)
        if isinstance(s, ast.If) and not s.orelse and _fails(s.body)
    ]


def _r_compares(tree: ast.AST, src: _Source, want: dict[int, bool]) -> list[Edit]:
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or id(node) not in want or _is_dunder_name(node):
            continue
        out.append(_replace("compare-true", src, node, str(want[id(node)])))
        out += _compare_ops(src, node)
    return out


def _compare_ops(src: _Source, node: ast.Compare) -> list[Edit]:
    """`==` → `in` / `!=` → `not in` (against a string literal), `==` → `>=`, `<` → `<=`."""
    out = []
    operands = [node.left, *node.comparators]
    for i, op in enumerate(node.ops):
        left, right = operands[i], operands[i + 1]
        strings = any(
            isinstance(x, ast.Constant) and isinstance(x.value, str) for x in (left, right)
        )
        swaps: list[tuple[str, ast.cmpop]] = []
        if isinstance(op, ast.Eq) and strings:
            swaps.append(("eq-to-in", ast.In()))
        if isinstance(op, ast.NotEq) and strings:
            swaps.append(("eq-to-in", ast.NotIn()))
        if isinstance(op, ast.Eq):
            swaps.append(("relax-compare", ast.GtE()))
        if isinstance(op, ast.Lt):
            swaps.append(("relax-compare", ast.LtE()))
        if isinstance(op, ast.Gt):
            swaps.append(("relax-compare", ast.GtE()))
        for name, new in swaps:
            ops = list(node.ops)
            ops[i] = new
            mutated = ast.Compare(left=node.left, ops=ops, comparators=node.comparators)
            out.append(_replace(name, src, node, _unparse_keeping(src, node, mutated)))
    return out


def _unparse_keeping(src: _Source, node: ast.Compare, mutated: ast.Compare) -> str:
    """The mutated comparison with each operand's own source text (not re-rendered)."""
    parts = [_operand(src, node.left)]
    for op, comp in zip(mutated.ops, node.comparators, strict=True):
        parts += [_OP_TEXT[type(op)], _operand(src, comp)]
    return " ".join(parts)


def _operand(src: _Source, node: ast.expr) -> str:
    text = src.segment(node)
    simple = isinstance(node, ast.Name | ast.Constant | ast.Attribute | ast.Call | ast.Subscript)
    return text if simple or text.startswith(("(", "[", "{")) else f"({text})"


_OP_TEXT: dict[type, str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}


def _test_functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in tree.body:
        scope = node.body if isinstance(node, ast.ClassDef) else [node]
        for fn in scope:
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and fn.name.startswith(
                "test"
            ):
                yield fn


def _r_delete_test(tree: ast.AST, src: _Source, want: dict[int, bool]) -> list[Edit]:
    assert isinstance(tree, ast.Module)
    return [_stmt_to_pass("delete-test", src, fn) for fn in _test_functions(tree)]


def _r_early_exit(tree: ast.AST, src: _Source, want: dict[int, bool]) -> list[Edit]:
    assert isinstance(tree, ast.Module)
    targets: list[tuple[ast.stmt, str]] = [(fn.body[0], "return") for fn in _test_functions(tree)]
    targets += [
        (fn.body[0], "raise SystemExit(0)")
        for fn in tree.body
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and fn.name == "main"
    ]
    if not targets:  # a plain script: exit before its first statement that does something
        acting = [s for s in tree.body[1:] if not isinstance(s, _PASSIVE)]
        targets += [(acting[0], "raise SystemExit(0)")] if acting else []
    out = []
    for first, text in targets:
        if src.starts_line(first):
            at = src.at(first.lineno, 0)
            indent = src.lines[first.lineno - 1][: first.col_offset].decode()
            out.append(Edit("early-exit", first.lineno, at, at, f"{indent}{text}\n"))
    return out


def _r_file_checks(tree: ast.AST, src: _Source, want: dict[int, bool]) -> list[Edit]:
    return [
        _replace("skip-file-check", src, node, str(want.get(id(node), True)))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _name(node.func) in _FILE_CHECKS
    ]


def _r_tolerance(tree: ast.AST, src: _Source, want: dict[int, bool]) -> list[Edit]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func) in _TOLERANCES:
            names = _TOLERANCES[_name(node.func)]
            out += [_loosen(src, kw.value) for kw in node.keywords if kw.arg in names]
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, op, right = node.left, node.ops[0], node.comparators[0]
            if _is_abs(left) and isinstance(op, ast.Lt | ast.LtE):
                out.append(_loosen(src, right))
            elif _is_abs(right) and isinstance(op, ast.Gt | ast.GtE):
                out.append(_loosen(src, left))
    return out


def _is_abs(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) in ("abs", "fabs")


def _loosen(src: _Source, value: ast.expr) -> Edit:
    text = src.segment(value)
    simple = isinstance(value, ast.Name | ast.Constant | ast.Attribute)
    return _replace(
        "loosen-tolerance", src, value, f"{text if simple else f'({text})'} * {_LOOSEN}"
    )


_Rule = Callable[[ast.AST, _Source, dict[int, bool]], list[Edit]]
_RULES: tuple[_Rule, ...] = (
    _r_drop_assert,
    _r_drop_check,
    _r_compares,
    _r_delete_test,
    _r_early_exit,
    _r_file_checks,
    _r_tolerance,
)
