"""Bounded YAML: ordinary documents (aliases and merge keys included) load as with
yaml.safe_load; bombs, recursion and deep nesting are refused fast, naming the line."""

from __future__ import annotations

import time

import pytest
import yaml

from envfactory.core.bounded_yaml import YamlLimits, YamlTooComplex, YamlValueError, load

ORDINARY = """\
base: &base {image: python, turns: 40}
one: {<<: *base, name: one}
two: [*base, *base]
text: |
  several
  lines
"""


def test_an_ordinary_document_loads_like_safe_load():
    assert load(ORDINARY) == yaml.safe_load(ORDINARY)
    assert load("") is None


def test_a_large_document_without_aliases_always_fits():
    doc = "".join(f"k{i}: [{', '.join(['value'] * 20)}]\n" for i in range(2000))
    assert len(load(doc)) == 2000


def test_an_alias_bomb_is_refused_in_milliseconds():
    rows = ["a: &a [" + ", ".join(["lol"] * 9) + "]"]
    rows += [
        f"{n}: &{n} [" + ", ".join([f"*{p}"] * 9) + "]"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    start = time.monotonic()
    with pytest.raises(YamlTooComplex, match=r"expands to more than \d+ values .* \(line \d+\)"):
        load("\n".join(rows))
    assert time.monotonic() - start < 1.0


def test_aliases_are_allowed_up_to_the_allowance():
    doc = "a: &a [" + ", ".join(["x"] * 50) + "]\nb: [" + ", ".join(["*a"] * 100) + "]\n"
    assert len(load(doc)["b"]) == 100
    with pytest.raises(YamlTooComplex):
        load(doc, limits=YamlLimits(alias_allowance=10))


def test_a_recursive_alias_is_refused():
    with pytest.raises(YamlTooComplex, match="refers to a node that contains it"):
        load("a: &x {b: *x}")


@pytest.mark.parametrize("depth", [51, 5000])
def test_deep_nesting_is_refused_without_a_recursion_error(depth):
    with pytest.raises(YamlTooComplex, match="nesting deeper than 50 levels"):
        load("a: " + "[" * depth + "]" * depth)
    assert load("a: " + "[" * 48 + "]" * 48)  # within the limit


def test_a_refusal_is_a_yaml_error_for_callers_that_catch_those():
    assert issubclass(YamlTooComplex, yaml.YAMLError)


@pytest.mark.parametrize("text", ["? [a, b]\n: 1\n", "? {a: 1}\n: 2\n", "{[1]: 2}\n"])
def test_a_mapping_key_no_dict_can_hold_is_refused_with_its_line(text: str) -> None:
    with pytest.raises(YamlTooComplex, match=r"mapping key must be a plain value .*\(line 1\)"):
        load(text)


def test_an_integer_past_pythons_conversion_limit_is_a_yaml_error() -> None:
    with pytest.raises(yaml.YAMLError, match="more than 4300 digits"):
        load("a: 1\nb: " + "9" * 4301 + "\n")
    assert load("b: " + "9" * 4300 + "\n") == {"b": int("9" * 4300)}
    assert load("x: 0x1f\ny: 1_000\nz: -12\n") == {"x": 31, "y": 1000, "z": -12}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        # each raised a ValueError, IndexError, KeyError or AttributeError from PyYAML's
        # constructors, which no caller catches as a YAML error
        ("a: 2001-13-45\n", "'2001-13-45' is not a valid date (month must be in 1..12)"),
        ("2001-02-30: a\n", "'2001-02-30' is not a valid date (day is out of range"),
        ("a: !!int abc\n", "'abc' is not a valid integer"),
        ("a: !!int ''\n", "'' is not a valid integer"),
        ("a: !!float 1e\n", "'1e' is not a valid number"),
        ("a: !!bool maybe\n", "'maybe' is not a valid boolean"),
        ("a: !!timestamp soon\n", "'soon' is not a valid date"),
    ],
)
def test_a_value_that_does_not_fit_its_type_is_a_yaml_error_naming_it(text: str, says: str) -> None:
    with pytest.raises(YamlValueError) as info:
        load(text)
    assert says in str(info.value) and "line 1" in str(info.value)


def test_an_escaped_lone_surrogate_is_refused_and_an_escaped_pair_is_its_character() -> None:
    # a lone surrogate is no character: it cannot be written out as UTF-8 (a path, a hash)
    with pytest.raises(yaml.YAMLError, match="lone surrogate"):
        load('a: "x\\ud800"\n')
    with pytest.raises(yaml.YAMLError, match="lone surrogate"):
        load('"\\udcff": 1\n')
    assert load('a: "\\ud83d\\ude00"\n') == {"a": "\U0001f600"}  # as JSON writes it
