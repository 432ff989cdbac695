"""Hypothesis strategies for hostile input: YAML and TOML documents that are malformed or
well-formed with the wrong types, and file names a filesystem allows but a loader may not
expect. Shared by the seed and task-format fuzz tests.

The documents are text, not Python values dumped by a library, so they can hold what a
library would never write: explicit tags on values that do not fit them (`!!int abc`),
dates that do not exist, escapes of lone surrogates, complex keys, anchors and aliases,
numbers past every limit. `refused_or_accepted` is the one property every loader must
keep: it returns a value or raises one of the project's own errors, with a message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from hypothesis import strategies as st

from envfactory.core.errors import EnvFactoryError

T = TypeVar("T")

#: one fuzz test's budget: the fuzz modules together run in well under a minute on 2 cores
EXAMPLES = 100

#: YAML scalars that each break some constructor, limit or assumption
NASTY_YAML = (
    "2001-13-45",
    "2001-02-30",
    "0000-01-01",
    "2001-01-01 25:61:61",
    "!!timestamp nonsense",
    "!!timestamp ''",
    "!!int abc",
    "!!int ''",
    "!!int _",
    "!!int 0x",
    "!!int 0b2",
    "!!int 0o9",
    "!!int '1:x'",
    "!!float abc",
    "!!float ''",
    "!!float '.'",
    "!!float 1e",
    "!!float '1:x'",
    "!!bool maybe",
    "!!null x",
    "!!binary '@@@'",
    "!!binary 'é'",
    "!!binary aGVsbG8=",
    "!!str {a: 1}",
    "!!seq x",
    "!!map x",
    "!!set x",
    "!!set {a, b}",
    "!!omap x",
    "!!omap [a: 1, b: 2]",
    "!!pairs [a: 1, a: 2]",
    "!!python/object/apply:os.system [true]",
    "!custom x",
    ".nan",
    ".inf",
    "-.inf",
    "1e999",
    "-1e999",
    "9" * 4301,
    "-" + "9" * 4300,
    "0x" + "f" * 5000,
    ":".join(["59"] * 2200),
    "1:30",
    "1_000",
    "0o17",
    "~",
    "null",
    "yes",
    "off",
    "''",
    '"\\ud800"',
    '"a\\udcff.txt"',
    '"\\U0010ffff"',
    '"a\\0b"',
    '"\\e[2J\\rx"',
    '"\\u202eevil"',
    '"\\x85"',
    "'" + "x" * 3000 + "'",
    "<<",
    "*nowhere",
    "[",
    "{",
    "? [a, b]",
    "|",
    "'unterminated",
    "@reserved",
    "`tick",
    "%TAG",
    "- x",
    "a: b: c",
)

_ANCHORS = ("a", "b")


def _quoted(text: str, ascii_only: bool) -> str:
    """A double-quoted YAML (and TOML basic) string: JSON's escapes are valid in both."""
    return json.dumps(text, ensure_ascii=ascii_only)


_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)

#: text with the odd characters: controls, bidi overrides, and (escaped) lone surrogates
odd_text = st.text(
    alphabet=st.one_of(st.characters(), _SURROGATES, st.sampled_from("\0\x1b\r\n\t\u202e\x85")),
    max_size=40,
)


def _scalar_text(t: str, ascii_only: bool) -> str:
    return _quoted(t, ascii_only or any(0xD800 <= ord(c) <= 0xDFFF for c in t))


yaml_scalars: st.SearchStrategy[str] = st.one_of(
    st.sampled_from(NASTY_YAML),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.floats().map(repr),
    st.builds(_scalar_text, odd_text, st.booleans()),
    # plain, often not valid YAML (raw control characters are in NASTY_YAML's escapes)
    st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs")), max_size=30),
    st.sampled_from(("title", "x", "data", "job.py", "python", "debian", "60", "0.5")),
)


def _flow_list(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def _flow_map(pairs: list[tuple[str, str]]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"


def _decorate(value: str, mark: str, anchor: str) -> str:
    if mark == "anchor":
        return f"&{anchor} {value}"
    if mark == "alias":
        return f"*{anchor}"
    return value


def _with_anchors(base: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        _decorate,
        base,
        st.sampled_from(("plain",) * 6 + ("anchor", "alias")),
        st.sampled_from(_ANCHORS),
    )


#: a YAML value in flow style: scalars, lists and mappings (complex keys included)
yaml_values: st.SearchStrategy[str] = st.recursive(
    _with_anchors(yaml_scalars),
    lambda inner: _with_anchors(
        st.one_of(
            st.lists(inner, max_size=4).map(_flow_list),
            st.lists(st.tuples(inner, inner), max_size=4).map(_flow_map),
        )
    ),
    max_leaves=12,
)


def yaml_documents(keys: Sequence[str], nested: dict[str, Sequence[str]]) -> st.SearchStrategy[str]:
    """Block mappings whose keys are mostly the right ones (`keys`, and `nested` sections
    with theirs), whose values are anything."""
    key = st.one_of(st.sampled_from(list(keys)), yaml_scalars)

    def section(name: str) -> st.SearchStrategy[str]:
        inner = st.lists(st.tuples(st.sampled_from(list(nested[name])), yaml_values), max_size=5)
        return inner.map(lambda pairs: f"{name}:\n" + "".join(f"  {k}: {v}\n" for k, v in pairs))

    line = st.builds(lambda k, v: f"{k}: {v}\n", key, yaml_values)
    part = st.one_of(line, line, *(section(n) for n in nested))
    return st.lists(part, max_size=8).map("".join)


json_values: st.SearchStrategy[object] = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**40), max_value=10**40),
        st.floats(),  # NaN and Infinity too: JSON's own spelling, which YAML reads as text
        odd_text,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _json(doc: object, ascii_only: bool) -> str:
    text = json.dumps(doc, ensure_ascii=ascii_only)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only its escape can be written
        text = json.dumps(doc)
    return text


def json_documents(keys: Sequence[str], nested: dict[str, Sequence[str]]) -> st.SearchStrategy[str]:
    """JSON objects (JSON is YAML) of the right keys, mostly, with values of any type."""
    sections = [
        st.tuples(st.just(name), st.dictionaries(st.sampled_from(list(sub)), json_values))
        for name, sub in nested.items()
    ]
    pairs = st.lists(
        st.one_of(
            st.tuples(st.one_of(st.sampled_from(list(keys)), odd_text), json_values), *sections
        ),
        max_size=8,
    )
    return st.builds(_json, pairs.map(dict), st.booleans())


#: TOML values: numbers past every limit, inf/nan, sizes, dates, strings with escapes,
#: arrays and inline tables, and nesting deep enough to recurse
toml_scalars: st.SearchStrategy[str] = st.one_of(
    st.sampled_from(
        (
            "inf",
            "-inf",
            "nan",
            "1e400",
            "-1e400",
            "1e-400",
            "0",
            "-1",
            "0.0",
            "9" * 4301,
            "9" * 400,
            "true",
            "1979-05-27",
            "1979-05-27T07:32:00Z",
            "07:32:00",
            '""',
            '"full-state"',
            '"workspace"',
            '"/app"',
            '"app"',
            '"a/"',
            '["envfactory"]',
            '["x"]',
            "[]",
            "{}",
            "[" * 1100 + "]" * 1100,
            '"\\ud800"',
        )
    ),
    # Harbor's sizes ("2G"), past every bound and none at all
    st.sampled_from(
        ("infG", "-infG", "1e400G", "nanG", "-5G", "0.01G", "1K", "G", "2G", "9" * 400)
    ).map(lambda size: f'"{size}"'),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.builds(_scalar_text, odd_text, st.booleans()),
)

toml_values: st.SearchStrategy[str] = st.recursive(
    toml_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(_flow_list),
        st.dictionaries(st.sampled_from(("a", "B", "1x", "PATH")), inner, max_size=3).map(
            lambda d: "{" + ", ".join(f'"{k}" = {v}' for k, v in d.items()) + "}"
        ),
    ),
    max_leaves=8,
)


def toml_documents(tables: dict[str, Sequence[str]]) -> st.SearchStrategy[str]:
    """`[table]` sections with the right keys (mostly) and values of any type."""

    def table(name: str) -> st.SearchStrategy[str]:
        key = st.one_of(st.sampled_from(list(tables[name])), st.sampled_from(("x", "1a")))
        body = st.lists(st.tuples(key, toml_values), max_size=5, unique_by=lambda kv: kv[0])
        return body.map(lambda kvs: f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in kvs))

    top = st.builds(lambda k, v: f"{k} = {v}\n", st.sampled_from(list(tables)), toml_values)
    parts = st.lists(st.one_of(*(table(n) for n in tables)), max_size=len(tables), unique=True).map(
        "".join
    )
    return st.builds(lambda head, body: head + body, st.lists(top, max_size=2).map("".join), parts)


def _fs_ok(name: bytes) -> bool:
    return b"/" not in name and b"\0" not in name and name not in (b".", b"..") and len(name) <= 255


#: one path component the filesystem accepts: any bytes (not UTF-8 too), or any text
file_names: st.SearchStrategy[str] = st.one_of(
    st.binary(min_size=1, max_size=24).filter(_fs_ok),
    st.text(min_size=1, max_size=24).map(lambda t: t.encode("utf-8")).filter(_fs_ok),
    st.sampled_from(
        (b" ", b" a.txt", b"a.txt ", b"-rf", b"..a", b"caf\xe9.csv", b"\xff\xfe", b"n" * 255)
    ),
).map(os.fsdecode)

#: a relative path of one to three components
relative_paths: st.SearchStrategy[str] = st.lists(file_names, min_size=1, max_size=3).map("/".join)


def refused_or_accepted(
    call: Callable[[], T], errors: type[EnvFactoryError] | tuple[type[EnvFactoryError], ...]
) -> T | None:
    """`call()`'s value, or None when it raised one of `errors` with a message a user can
    read. Any other exception propagates: that is the bug a fuzz test looks for."""
    try:
        return call()
    except errors as exc:
        assert exc.message.strip(), f"{type(exc).__name__} with an empty message"
        return None


def deep_tree(top: Path, levels: int, name: str = "d") -> Path:
    """`levels` directories called `name` nested under `top`, one file at the bottom; made
    step by step, so the whole path may pass PATH_MAX. Returns `top`."""
    here = os.getcwd()
    os.chdir(top)
    try:
        for _ in range(levels):
            os.mkdir(name)
            os.chdir(name)
        Path("leaf.txt").write_text("x\n")
    finally:
        os.chdir(here)
    return top


def remove_deep(top: Path) -> None:
    """Remove what `deep_tree(top.parent, n)` made under `top`, bottom up: `shutil.rmtree`
    recurses past Python's stack on a tree that deep."""
    here = os.getcwd()
    os.chdir(top)
    try:
        depth = 0
        while os.path.isdir(top.name):
            os.chdir(top.name)
            depth += 1
        for _ in range(depth + 1):
            for name in os.listdir("."):
                os.unlink(name) if not os.path.isdir(name) else os.rmdir(name)
            os.chdir("..")
        os.rmdir(top.name)
    finally:
        os.chdir(here)
