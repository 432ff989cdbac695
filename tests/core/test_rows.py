"""Row identities, finding rules and sandbox purposes: one spelling each, read back by
one parser, and nothing else in the code splitting or prefix-matching their names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from envfactory.core.models import FindingRule, Purpose, RowId, RowKind, Rule

ROOT = Path(__file__).resolve().parents[2]

STORED_NAMES = [
    "no-op",
    "oracle",
    "prefix-2",
    "without-step-3",
    "partial:half-done",
    "partial:x@y",  # an authored name may hold the probe separator
    "regression:sha256:0123456789ab",
    "probe:conftest-pass@no-op",
    "probe:truncated-outputs@oracle",
    "probe:inputs-minimal+reference@no-op",
    "probe:reward-file@partial:half-done",
    "harbor:oracle",
    "harbor:no-op",
    "harbor:probe:reward-file@no-op",
]


@pytest.mark.parametrize("name", STORED_NAMES)
def test_every_stored_row_name_reads_back_as_itself(name: str) -> None:
    assert str(RowId.parse(name)) == name


def test_a_parsed_row_knows_its_parts() -> None:
    row = RowId.parse("harbor:probe:reward-file@partial:half-done")
    assert row.kind == RowKind.PROBE and row.probe == "reward-file"
    assert row.semantics == "harbor"
    assert row.base == RowId.partial("half-done")
    assert str(row.state) == "probe:reward-file@partial:half-done"
    assert row.family == "probe:reward-file"
    assert RowId.parse("regression:sha256:ab").label == "sha256:ab"


def test_the_constructors_spell_what_the_parser_reads() -> None:
    built = [
        RowId.noop(),
        RowId.prefix(2),
        RowId.omission(3),
        RowId.probe_on("empty-tests", RowId.prefix(1)),
        RowId.probe_on("x", RowId.noop()).under("harbor"),
    ]
    assert [RowId.parse(str(r)) for r in built] == built


@pytest.mark.parametrize(
    "name", ["", "probe:x", "probe:@no-op", "prefix-", "harbor:", "noop", "probe:a@probe:b@no-op"]
)
def test_a_malformed_row_name_is_refused_with_the_name(name: str) -> None:
    with pytest.raises(ValueError, match="gate row"):
        RowId.parse(name)


def test_a_row_matches_its_name_and_its_family() -> None:
    row = RowId.parse("harbor:probe:conftest-pass@prefix-1")
    assert row.matches("harbor:probe:conftest-pass@prefix-1")
    assert row.matches("harbor:probe:conftest-pass")
    assert not row.matches("probe:conftest-pass")  # that names the primary rows
    assert RowId.parse("probe:conftest-pass@no-op").matches("probe:conftest-pass")


@pytest.mark.parametrize(
    "text",
    [
        "probe:reward-file",
        "harbor:probe:reward-file",
        "regression",
        "tamper:interpreter,path",
        "edits-tests",
        "red-team-rewarded",
        "mutation:weak-battery",
        "model:reads-expected-output",
    ],
)
def test_every_rule_reads_back_as_itself(text: str) -> None:
    assert str(Rule.parse(text)) == text


def test_an_unknown_rule_is_refused_naming_the_known_families() -> None:
    with pytest.raises(ValueError, match=r"unknown finding rule 'probes:x'.*tamper"):
        Rule.parse("probes:x")
    with pytest.raises(ValueError, match="needs a detail"):
        Rule(FindingRule.PROBE)
    with pytest.raises(ValueError, match="takes no detail"):
        Rule(FindingRule.EDITS_TESTS, "x")


def test_heuristic_rules_are_the_ones_that_do_not_prove_a_shortcut() -> None:
    assert Rule(FindingRule.SHORT_SOLUTION).heuristic
    assert not Rule(FindingRule.PROBE, "reward-file").heuristic


def test_an_unknown_sandbox_purpose_is_refused_naming_the_known_ones() -> None:
    assert Purpose.of("verify") is Purpose.VERIFY
    with pytest.raises(ValueError, match=r"unknown sandbox purpose 'verfy'.*verify"):
        Purpose.of("verfy")


#: splitting, partitioning or prefix-matching a row or rule name, or spelling a runtime
#: prefix by hand: each belongs in envfactory/core/models/rows.py alone
_BY_HAND = re.compile(
    r"""\b\w*(name|rule|row|check)\w*\.(r?split|r?partition)\(["'][:@]["']"""
    r"""|\.startswith\(["']((probe|harbor|regression|partial)[:"']|prefix-|without-step|no-op|oracle)"""
    r"""|f?["']harbor:"""
)


def test_no_code_outside_the_parser_takes_a_row_or_rule_name_apart() -> None:
    offenders = []
    for package in ("envfactory", "verifiers", "workflows", "sandboxes"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "envfactory/core/models/rows.py":
                continue
            for n, line in enumerate(path.read_text().splitlines(), start=1):
                if _BY_HAND.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == [], "use RowId / Rule instead:\n" + "\n".join(offenders)


def test_the_pattern_catches_what_it_is_for() -> None:
    for line in (
        'rule = check.name.split("@", 1)[0]',
        'if name.startswith("probe:"):',
        'head = row_name.partition(":")[0]',
        'f"harbor:{name}"',
    ):
        assert _BY_HAND.search(line), line
