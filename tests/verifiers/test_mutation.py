"""Mutation testing of the gate battery: the operators (no Docker), and with Docker a task
whose partial states are too few shows a surviving mutant that one more partial kills."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from envfactory.core.models import GateReport, Mutant, MutationScore
from verifiers.mutants import generate_mutants, mutants_of_file
from verifiers.mutation import mutation_findings, normalised, same_output
from verifiers.runner import VerifyResult

FIXTURE = Path(__file__).parent / "fixtures" / "mutation-gap"

PYTEST_FILE = b'''"""Tests of the report."""
import json
import math
import os.path
from os.path import exists
from pathlib import Path

import pytest

REPORT = Path("/app/out/report.json")


def test_report_exists():
    assert REPORT.is_file()
    assert os.path.exists("/app/out")


def test_totals():
    data = json.loads(REPORT.read_text())  # comment kept
    assert data["region"] == "eu"
    assert data["rows"] < 100
    assert abs(data["total"] - 12.5) < 0.01
    assert math.isclose(data["grand"], 99.0, rel_tol=1e-6)
    assert data["mean"] == pytest.approx(3.2, rel=1e-3)
'''

SCRIPT_FILE = b"""import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    if not exists_ok() or size() != 0:
        fail("not truncated")
    if name() != "eu":
        fail("wrong name")
    print("ok")


main()
"""

UNITTEST_FILE = b"""import unittest


class TestThing(unittest.TestCase):
    def test_value(self):
        self.assertEqual(compute(), 3)
"""

SHELL_FILE = b"""#!/bin/bash
set -euo pipefail
cd "$(dirname "$0")" || exit 1
test -f /app/out/report.json
grep -q total /app/out/report.json
python3 - <<'PY'
import sys
sys.exit(0)
PY
diff /app/out/a /app/expected/a || exit 2
echo done
"""


def by_op(path: str, data: bytes) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for m in mutants_of_file(path, data):
        out.setdefault(m.operator, []).append(_changed(m.diff))
    return out


def _changed(diff: str) -> str:
    """The changed lines of a one-hunk diff, as '-old / +new'."""
    lines = [ln for ln in diff.splitlines()[2:] if ln[:1] in "+-"]
    return " / ".join(lines)


def test_drop_assert_replaces_one_assert_by_pass() -> None:
    got = by_op("test_report.py", PYTEST_FILE)["drop-assert"]
    assert '-    assert data["region"] == "eu" / +    pass' in got
    assert len(got) == 7


def test_compare_true_picks_the_constant_that_lets_the_check_pass() -> None:
    py = by_op("test_report.py", PYTEST_FILE)["compare-true"]
    assert '-    assert data["region"] == "eu" / +    assert True' in py
    script = by_op("check.py", SCRIPT_FILE)["compare-true"]
    assert '-    if name() != "eu": / +    if False:' in script
    assert "-    if not exists_ok() or size() != 0: / +    if not exists_ok() or False:" in script


def test_equality_against_a_string_becomes_membership() -> None:
    assert by_op("test_report.py", PYTEST_FILE)["eq-to-in"] == [
        '-    assert data["region"] == "eu" / +    assert data["region"] in "eu"'
    ]
    assert by_op("check.py", SCRIPT_FILE)["eq-to-in"] == [
        '-    if name() != "eu": / +    if name() not in "eu":'
    ]


def test_relaxed_comparisons_turn_equal_into_at_least_and_less_into_at_most() -> None:
    got = by_op("test_report.py", PYTEST_FILE)["relax-compare"]
    assert '-    assert data["region"] == "eu" / +    assert data["region"] >= "eu"' in got
    assert '-    assert data["rows"] < 100 / +    assert data["rows"] <= 100' in got


def test_drop_check_removes_a_guard_whose_body_fails() -> None:
    got = by_op("check.py", SCRIPT_FILE)["drop-check"]
    assert got == [
        '-    if not exists_ok() or size() != 0: / -        fail("not truncated") / +    pass',
        '-    if name() != "eu": / -        fail("wrong name") / +    pass',
    ]


def test_delete_test_removes_pytest_functions_and_unittest_methods() -> None:
    assert len(by_op("test_report.py", PYTEST_FILE)["delete-test"]) == 2
    (method,) = by_op("test_thing.py", UNITTEST_FILE)["delete-test"]
    assert method.startswith("-    def test_value(self):") and method.endswith("+    pass")
    assert by_op("test_thing.py", UNITTEST_FILE)["drop-assert"] == [
        "-        self.assertEqual(compute(), 3) / +        pass"
    ]


def test_early_exit_returns_from_tests_and_exits_zero_from_main() -> None:
    tests = by_op("test_report.py", PYTEST_FILE)["early-exit"]
    assert tests == ["+    return", "+    return"]
    assert by_op("check.py", SCRIPT_FILE)["early-exit"] == ["+    raise SystemExit(0)"]
    plain = b'import sys\nX = 1\nif X != 1:\n    sys.exit(1)\nprint("ok")\n'
    assert by_op("plain.py", plain)["early-exit"] == ["+raise SystemExit(0)"]


def test_file_checks_are_skipped() -> None:
    got = by_op("test_report.py", PYTEST_FILE)["skip-file-check"]
    assert got == [
        "-    assert REPORT.is_file() / +    assert True",
        '-    assert os.path.exists("/app/out") / +    assert True',
    ]


def test_tolerances_are_loosened_a_thousandfold() -> None:
    got = by_op("test_report.py", PYTEST_FILE)["loosen-tolerance"]
    assert got == [
        '-    assert abs(data["total"] - 12.5) < 0.01 / +    assert abs(data["total"] - 12.5) < 0.01 * 1000',
        '-    assert math.isclose(data["grand"], 99.0, rel_tol=1e-6) / '
        '+    assert math.isclose(data["grand"], 99.0, rel_tol=1e-6 * 1000)',
        '-    assert data["mean"] == pytest.approx(3.2, rel=1e-3) / '
        '+    assert data["mean"] == pytest.approx(3.2, rel=1e-3 * 1000)',
    ]


def test_no_mutant_changes_an_import_line_or_a_comment() -> None:
    for m in mutants_of_file("test_report.py", PYTEST_FILE):
        removed = [ln[1:].strip() for ln in m.diff.splitlines()[2:] if ln.startswith("-")]
        assert not any(ln.startswith(("import ", "from ")) for ln in removed), m.diff
        if m.operator != "delete-test":  # deleting a test deletes its comments too
            assert "# comment kept" in m.text.decode()


def test_every_python_mutant_parses_and_differs_from_the_original_in_one_hunk() -> None:
    for path, data in (("t.py", PYTEST_FILE), ("c.py", SCRIPT_FILE), ("u.py", UNITTEST_FILE)):
        for m in mutants_of_file(path, data):
            ast.parse(m.text)
            assert m.text != data
            assert sum(ln.startswith("@@") for ln in m.diff.splitlines()) == 1, m.diff


def test_shell_operators_exit_early_drop_checks_and_swallow_failures() -> None:
    got = by_op("test.sh", SHELL_FILE)
    assert got["early-exit"] == ["+exit 0"] * 4  # test, grep, python3 (its opener), diff
    assert got["drop-check-line"] == [
        "-test -f /app/out/report.json / +:",
        "-grep -q total /app/out/report.json / +:",
        "-diff /app/out/a /app/expected/a || exit 2 / +:",
    ]
    assert got["or-exit-true"] == [
        '-cd "$(dirname "$0")" || exit 1 / +cd "$(dirname "$0")" || true',
        "-diff /app/out/a /app/expected/a || exit 2 / +diff /app/out/a /app/expected/a || true",
    ]
    assert got["drop-set-e"] == ["-set -euo pipefail / +set -uo pipefail"]


def test_shell_here_documents_and_their_openers_are_never_mutated() -> None:
    for m in mutants_of_file("test.sh", SHELL_FILE):
        assert "sys.exit" not in _changed(m.diff) and "<<" not in _changed(m.diff), m.diff


def test_set_e_is_kept_when_no_check_relies_on_it() -> None:
    script = b"#!/bin/bash\nset -e\ncd /app || exit 1\nexec python3 check.py\n"
    assert "drop-set-e" not in by_op("test.sh", script)


def test_mutants_are_deterministic_whatever_the_order_of_the_files() -> None:
    files = {"test.sh": SHELL_FILE, "check.py": SCRIPT_FILE, "t.py": PYTEST_FILE}
    again = dict(reversed(list(files.items())))
    a = [(m.file, m.operator, m.line, m.text) for m in generate_mutants(files)]
    b = [(m.file, m.operator, m.line, m.text) for m in generate_mutants(again)]
    assert a == b and len(a) == 40


def test_the_cap_samples_every_operator_and_every_file_before_repeating() -> None:
    huge = b"def test_many():\n" + b"".join(
        b"    assert f(%d) == %d\n" % (i, i) for i in range(200)
    )
    files = {"a_huge_test.py": huge, "test.sh": SHELL_FILE}
    got = generate_mutants(files, max_mutants=12)
    assert len(got) == 12
    assert {m.operator for m in got} >= {
        "drop-assert",
        "compare-true",
        "early-exit",
        "drop-check-line",
        "or-exit-true",
        "drop-set-e",
    }
    assert sum(m.file == "test.sh" for m in got) >= 4
    early = [m.file for m in got if m.operator == "early-exit"]
    assert early[:2] == ["a_huge_test.py", "test.sh"]  # one per file in turn


def test_output_comparison_ignores_the_verifier_dir_and_timings() -> None:
    a = VerifyResult(
        reward=0, exit_code=1, stdout="1 failed in 0.03s\n/run/envfactory-verifier-0a1b/x"
    )
    b = VerifyResult(
        reward=0, exit_code=1, stdout="1 failed in 1.20s\n/run/envfactory-verifier-ffee/x"
    )
    c = VerifyResult(reward=0, exit_code=1, stdout="2 failed in 1.20s")
    assert normalised(a.stdout) == normalised(b.stdout)
    assert same_output(a, [c, b]) and not same_output(c, [a])


def test_a_removed_check_that_no_state_ever_failed_is_a_survivor_not_an_equivalent() -> None:
    from verifiers.mutation import survivor_status

    assert survivor_status("drop-check", same_everywhere=True) == "survived"
    assert survivor_status("compare-true", same_everywhere=True) == "survived"
    assert survivor_status("relax-compare", same_everywhere=True) == "equivalent-suspected"
    assert survivor_status("or-exit-true", same_everywhere=True) == "equivalent-suspected"
    assert survivor_status("relax-compare", same_everywhere=False) == "survived"


def _report(killed: int, survived: int) -> GateReport:
    mutants = [
        Mutant(file="check.py", operator="drop-check", line=i, diff=f"-x{i}\n+pass", status=s)
        for i, s in enumerate(["killed"] * killed + ["survived"] * survived)
    ]
    score = MutationScore(killed=killed, survived=survived, mutants=tuple(mutants))
    return GateReport(env_id="env-1", verifier_version=2, checks=(), mutation=score)


def test_a_low_mutation_score_becomes_one_review_finding_with_the_survivors_diffs() -> None:
    (finding,) = mutation_findings(_report(killed=1, survived=3), min_score=0.8)
    assert finding.source == "mutation" and finding.env_id == "env-1"
    assert "0.25" in finding.evidence.summary and "-x3" in finding.evidence.verifier_output
    assert len(finding.evidence.commands) == 3
    assert mutation_findings(_report(killed=1, survived=3), 0.8)[0].id == finding.id
    assert mutation_findings(_report(killed=4, survived=1), min_score=0.8) == ()


# -- with Docker ---------------------------------------------------------------------------

ONLY_A = "#!/bin/bash\nset -euo pipefail\nmkdir -p /app/out\necho alpha > /app/out/a.txt\n"


def _score(docker_engine, path: Path, artifacts, *, omissions: bool = True):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from verifiers.mutation import battery, mutation_score
    from verifiers.validate import validate_task

    v = validate_task(
        docker_engine,
        path,
        artifacts,
        repeats=1,
        concurrency=2,
        probes=(),
        adjust=lambda inp: replace(inp, omissions=omissions),
    )
    assert v.passed, v.report.reasons
    ms = mutation_score(
        v.run,
        engine=docker_engine,
        spec=v.task.spec,
        verifier=v.task.verifier,
        files=artifacts.get,
        concurrency=2,
    )
    assert ms.verifications <= len(ms.mutants) * len(battery(v.run))
    return ms


def _drop_b(ms: MutationScore) -> Mutant:
    (m,) = [
        m for m in ms.mutants if m.operator == "drop-check" and '-    if not holds("b' in m.diff
    ]
    return m


@pytest.mark.docker
@pytest.mark.slow
def test_a_missing_partial_state_shows_a_surviving_mutant_and_adding_it_kills_it(
    docker_engine, base_image, artifacts, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    # the states the author listed only: the reference with step 1 left out (a state
    # with a and no b) is the missing partial state, so that family stays off here
    gap = _score(docker_engine, FIXTURE, artifacts, omissions=False)
    assert _drop_b(gap).status == "survived"
    assert '-    if not holds("b.txt", "beta"):' in _drop_b(gap).diff
    drop_a = [
        m for m in gap.mutants if m.operator == "drop-check" and '-    if not holds("a' in m.diff
    ]
    assert drop_a[0].status == "killed" and drop_a[0].killed_by == "prefix-1"

    closed = tmp_path / "mutation-gap"
    shutil.copytree(FIXTURE, closed)
    (closed / "solution" / "partial").mkdir()
    (closed / "solution" / "partial" / "only-a.sh").write_text(ONLY_A)
    fixed = _score(docker_engine, closed, artifacts, omissions=False)
    assert _drop_b(fixed).status == "killed"
    assert _drop_b(fixed).killed_by == "partial:only-a"
    assert fixed.score is not None and gap.score is not None and fixed.score > gap.score
    # the default battery leaves each step out by itself and finds the same state
    default = _score(docker_engine, FIXTURE, artifacts)
    assert _drop_b(default).status == "killed"
    assert _drop_b(default).killed_by == "without-step-1"


def test_the_cli_view_prints_counts_cost_and_each_survivors_diff() -> None:
    from rich.console import Console

    from envfactory.cli.mutation_view import mutation_json, print_mutation

    report = _report(killed=1, survived=2)
    out = Console(record=True, width=200)
    print_mutation(out, report)
    text = out.export_text()
    assert "mutation score: 0.33  killed 1 · survived 2 · equivalent-suspected 0" in text
    assert "survived: drop-check check.py:2" in text and "-x2\n+pass" in text
    assert mutation_json(report) == {"mutation_score": 1 / 3}
    out = Console(record=True, width=200)
    print_mutation(out, report.model_copy(update={"mutation": None}))
    assert "not run (the gates failed)" in out.export_text()


def test_the_battery_is_the_rows_the_original_passed_each_input_once_as_verified() -> None:
    from envfactory.core.models import CheckKind, GateCheck
    from verifiers.gates import GateRun
    from verifiers.mutation import battery
    from verifiers.runner import PreparedState

    def row(kind: CheckKind, name: str, expected: int, observed: int) -> GateCheck:
        return GateCheck(kind=kind, name=name, expected=expected, observed=(observed,))  # type: ignore[arg-type]

    rows = (
        row(CheckKind.ORACLE, "oracle", 1, 1),
        row(CheckKind.NOOP, "no-op", 0, 0),
        row(CheckKind.PROBE, "probe:a@no-op", 0, 0),
        row(CheckKind.PROBE, "probe:b@no-op", 0, 0),
        row(CheckKind.UNSOLVED, "prefix-1", 0, 1),
    )
    ok = VerifyResult(reward=0, exit_code=1)
    prepared = {r.name: PreparedState(image=f"img-{r.name}", scope="workspace") for r in rows}
    run = GateRun(
        report=GateReport(env_id="e", verifier_version=1, checks=rows),
        timings=[],
        states={},
        results={"oracle": [ok], "no-op": [ok], "probe:a@no-op": [ok], "prefix-1": [ok]},
        prepared=prepared,
    )
    got = [(t.name, t.expected, t.prepared.image) for t in battery(run)]
    # probe:b was verified as its twin probe:a; prefix-1 failed under the original verifier
    assert got == [
        ("oracle", 1, "img-oracle"),
        ("no-op", 0, "img-no-op"),
        ("probe:a@no-op", 0, "img-probe:a@no-op"),
    ]
