"""The rewrites behind the correct alternatives, without Docker: each keeps the values a
reader loads and changes the bytes, or builds nothing."""

from __future__ import annotations

import yaml

from verifiers.probes.alternatives import yaml_reserialised


def test_yaml_is_rewritten_with_its_keys_reversed_and_loads_to_the_same_values() -> None:
    data = b"total: 22\nregions:\n  north: 17\n  south: 5\nwhen: 2001-12-14\n"
    out = yaml_reserialised(data)
    assert out is not None and out != data
    assert yaml.safe_load(out) == yaml.safe_load(data)
    assert out.splitlines()[0] == b"when: 2001-12-14"


def test_a_yaml_scalar_or_a_document_that_does_not_parse_builds_no_alternative() -> None:
    assert yaml_reserialised(b"just a sentence\n") is None
    assert yaml_reserialised(b"a: [1, 2\n") is None
    assert yaml_reserialised(b"\xff\xfe not text") is None


def test_a_yaml_alias_bomb_builds_no_alternative() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    assert yaml_reserialised(bomb.encode()) is None
