"""superset-lines' padding, without Docker: look-alikes of the output's own lines, found
in the inputs, never already there, the order kept and the header in place."""

from __future__ import annotations

from verifiers.archives import tar_of
from verifiers.probes.superset import MAX_ADDED, padded, shape, superset_lines

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


def _ws(files: dict[str, bytes]) -> list[tuple[str, bytes | None]]:
    return [("/app", tar_of({f"app/{p}": (d, 0o644) for p, d in files.items()}))]


def test_outputs_are_padded_and_an_input_the_reference_rewrote_is_not() -> None:
    inputs = {"data/a.csv": b"eu,5\nna,7\n", "data/b.csv": b"eu;3\n", "logs/x.log": LOG.encode()}
    oracle = {**inputs, "data/b.csv": b"eu,3\n", "out/hosts.txt": b"203.0.113.5\n"}
    (probe,) = superset_lines(
        _ws(oracle),
        _ws(inputs),
        "Fix the format of the exports in /app/data/ and list the attackers in /app/out/hosts.txt.",
        "/app",
    )
    # the export whose format the reference fixed is an input (its directory is named,
    # not the file): padding it would leave every output right
    assert set(probe.files) == {"/app/out/hosts.txt"}
    assert probe.files["/app/out/hosts.txt"].startswith(b"10.0.0.12\n")
