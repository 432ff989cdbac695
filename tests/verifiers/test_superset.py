"""superset-lines' padding, without Docker: look-alikes of the output's own lines, found
in the inputs, never already there, the order kept and the header in place."""

from __future__ import annotations

from verifiers.probes.superset import MAX_ADDED, padded, shape

LOG = """Jan 1 sshd[1]: Failed password for root from 203.0.113.5 port 22 ssh2
Jan 1 sshd[2]: Accepted password for deploy from 10.0.0.7 port 51234 ssh2
Jan 1 sshd[3]: Failed password for admin from 192.0.2.200 port 22 ssh2
Jan 1 sshd[4]: Connection closed by 10.0.0.12 (version 1.2.3.4-beta)
"""


def test_a_shape_keeps_punctuation_and_generalises_runs() -> None:
    assert shape("203.0.113.5") == r"\d+\.\d+\.\d+\.\d+"
    assert shape("eu,40") == r"[A-Za-z]+,\d+"
    assert shape("a b") == "[A-Za-z]+[ \\t]+[A-Za-z]+"


def test_a_sorted_list_gets_the_inputs_look_alikes_and_stays_sorted() -> None:
    out = padded("192.0.2.200\n203.0.113.5\n", frozenset(), [LOG])
    # both deploy hosts added; an address inside a longer dotted token is not one
    assert out == "10.0.0.12\n10.0.0.7\n192.0.2.200\n203.0.113.5\n"


def test_an_unsorted_list_is_appended_to_and_the_header_stays_first() -> None:
    out = padded("region,total\nna,12\neu,40\n", frozenset({"region,total"}), ["apac,7\nna,12\n"])
    assert out == "region,total\nna,12\neu,40\napac,7\n"


def test_nothing_alike_in_the_inputs_leaves_the_file_as_it_was() -> None:
    assert padded('{"total": 3}\n', frozenset(), ["no numbers here"]) == '{"total": 3}\n'
    assert padded("", frozenset(), [LOG]) == ""


def test_the_padding_is_bounded() -> None:
    many = "\n".join(f"10.1.{i // 250}.{i % 250}" for i in range(500))
    out = padded("10.9.9.9\n", frozenset(), [many])
    assert len(out.splitlines()) == 1 + MAX_ADDED
