"""YAML from users, parsed in bounded time and memory.

Seeds, Terminal-Bench task files, compose files and agent scripts are YAML that a user
(or a stranger's task suite) wrote. PyYAML's safe loader is safe against code execution
but not against size: a few hundred bytes of nested aliases ("billion laughs") expand to
billions of values the moment anything walks them (a `repr`, a validator), and deep
nesting overflows Python's stack inside the composer. This module is the one place those
files are parsed; it lives in core because the seed reader, the task formats and the
agent scripts sit side by side on one layer and must share it (PyYAML is its only
dependency beyond the standard library).

Invariants, checked on the node graph *before* any Python value is built:
- nesting is at most ``max_depth`` levels (counted while composing, so a 10 000-level
  document fails at level ``max_depth + 1``, not in a RecursionError);
- an alias may not refer to a node that contains it (a recursive document);
- the document's expanded size (every node once per path that reaches it, scalars
  weighted by their length) is at most ``2 * len(text) + alias_allowance``: a document
  without aliases always fits, aliases may add at most ``alias_allowance``;
- every mapping key is a plain scalar (``? [a, b]`` would build a key no dict can hold);
- an integer has at most ``MAX_INT_DIGITS`` digits (Python refuses to convert longer
  ones with a ValueError, which is no YAML error).

And while values are built: a value that does not fit its type (``!!int abc``, a date
``2001-13-45``, ``!!bool maybe``) is a YAML error, not the ValueError, KeyError or
IndexError PyYAML's constructors let through; a string may not hold a lone surrogate
(``"\\ud800"``, which is no character and cannot be written out as UTF-8), while an
escaped pair (``"\\ud83d\\ude00"``, as JSON writes it) is the one character it stands for.

A refusal is a ``YamlTooComplex`` (a ``yaml.MarkedYAMLError``, so callers that already
catch ``yaml.YAMLError`` keep working) whose message says what and where; a value that
does not fit its type is a ``YamlValueError`` (a ``ConstructorError``) naming it and its line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor


@dataclass(frozen=True)
class YamlLimits:
    max_depth: int = 50
    alias_allowance: int = 100_000


#: Python's own limit for converting a decimal string to an int (sys.int_info)
MAX_INT_DIGITS = 4300


class YamlTooComplex(yaml.MarkedYAMLError):
    """The document is too deep, recursive, or expands too far through aliases."""

    def __init__(self, problem: str, mark: yaml.Mark | None) -> None:
        super().__init__(problem=problem, problem_mark=mark)

    def __str__(self) -> str:
        where = f" (line {self.problem_mark.line + 1})" if self.problem_mark else ""
        return f"{self.problem}{where}"


class YamlValueError(ConstructorError):
    """A value does not fit its type: ``!!int abc``, a date ``2001-13-45``."""


class BoundedSafeLoader(yaml.SafeLoader):
    """A SafeLoader that counts nesting while it composes. Subclass it to add constructors."""

    max_depth = YamlLimits.max_depth

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > self.max_depth:
                # types-PyYAML leaves Parser.peek_event unannotated (its Event is typed)
                event: yaml.Event = self.peek_event()  # type: ignore[no-untyped-call]
                mark = event.start_mark if isinstance(event.start_mark, yaml.Mark) else None
                raise YamlTooComplex(
                    f"nesting deeper than {self.max_depth} levels is not accepted", mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    """An integer, refused past `MAX_INT_DIGITS` digits with the place it is at."""
    assert isinstance(node, yaml.ScalarNode)
    if sum(c.isalnum() for c in node.value) > MAX_INT_DIGITS:
        raise YamlTooComplex(
            f"an integer of more than {MAX_INT_DIGITS} digits is not accepted", node.start_mark
        )
    value: int = loader.construct_yaml_int(node)
    return value


Construct = Callable[[Any, Any], Any]  # (loader, node) -> value


def _fitting(kind: str, construct: Construct) -> Construct:
    """`construct`, with the errors PyYAML lets through for a value that does not fit its
    type (`int("abc")`, `date(2001, 13, 45)`, `"maybe".lower()` missing from a table)
    turned into a YAML error naming the value and its line."""

    def checked(loader: Any, node: yaml.Node) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, IndexError, KeyError, AttributeError, OverflowError) as exc:
            why = f" ({exc})" if kind == "date" and isinstance(exc, ValueError) else ""
            value = str(node.value)
            shown = repr(value if len(value) <= 40 else value[:40] + "…")
            raise YamlValueError(
                None, None, f"{shown} is not a valid {kind}{why}", node.start_mark
            ) from None

    return checked


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _construct_str(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    """A string; escaped surrogate pairs joined into their character, a lone one refused."""
    value: str = loader.construct_yaml_str(node)
    if not _SURROGATE.search(value):
        return value
    try:
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        raise ConstructorError(
            None,
            None,
            "a string holds an escape of a lone surrogate (\\ud800-\\udfff), which is no "
            "character; write the character itself",
            node.start_mark,
        ) from None


BoundedSafeLoader.add_constructor("tag:yaml.org,2002:int", _fitting("integer", _construct_int))
BoundedSafeLoader.add_constructor(
    "tag:yaml.org,2002:float", _fitting("number", SafeConstructor.construct_yaml_float)
)
BoundedSafeLoader.add_constructor(
    "tag:yaml.org,2002:bool",
    _fitting("boolean (true or false)", SafeConstructor.construct_yaml_bool),
)
BoundedSafeLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", _fitting("date", SafeConstructor.construct_yaml_timestamp)
)
BoundedSafeLoader.add_constructor("tag:yaml.org,2002:str", _construct_str)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def expanded_size(root: yaml.Node, cap: int) -> int:
    """Nodes reachable from `root`, counted once per path (scalars by length), computed
    once per distinct node; YamlTooComplex past `cap` or on a cycle. Iterative: no
    recursion however the graph is shaped."""
    size: dict[int, int] = {}
    open_: set[int] = set()  # nodes started but not finished: the current path
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_.discard(key)
            own = 1 + (len(node.value) if isinstance(node, yaml.ScalarNode) else 0)
            total = own + sum(size[id(c)] for c in _children(node))
            if total > cap:
                raise YamlTooComplex(
                    f"expands to more than {cap} values through aliases (an alias bomb?)",
                    node.start_mark,
                )
            size[key] = total
        elif key in open_:
            raise YamlTooComplex("an alias refers to a node that contains it", node.start_mark)
        elif key not in size:
            _check_keys(node)
            open_.add(key)
            stack.append((node, True))
            stack.extend((c, False) for c in _children(node) if id(c) not in size)
    return size[id(root)]


def _check_keys(node: yaml.Node) -> None:
    if not isinstance(node, yaml.MappingNode):
        return
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode):
            raise YamlTooComplex(
                "a mapping key must be a plain value (text or a number), not a list or a mapping",
                key.start_mark,
            )


def load(
    text: str,
    *,
    loader: type[BoundedSafeLoader] = BoundedSafeLoader,
    limits: YamlLimits | None = None,
) -> Any:
    """Parse one YAML document within `limits`; yaml.YAMLError (YamlTooComplex for a
    limit) on anything wrong. An empty document is None, as with yaml.safe_load."""
    limits = limits or YamlLimits()
    bounded = type("_Limited", (loader,), {"max_depth": limits.max_depth})
    instance = bounded(text)
    try:
        node = instance.get_single_node()
        if node is None:
            return None
        expanded_size(node, 2 * len(text) + limits.alias_allowance)
        return instance.construct_document(node)
    finally:
        instance.dispose()
