"""`envfactory validate`'s last line: how many sound tasks were accepted and broken ones
rejected as expected (issue 17: a glob over examples/tasks mixes both)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from envfactory.cli.validate import _skipped_lines, summary_line
from envfactory.core.models import SkippedCheck


def _result(passed: bool, as_expected: bool | None) -> Any:
    return SimpleNamespace(passed=passed, rejected_as_expected=as_expected)


def test_sound_and_broken_on_purpose_are_counted_apart() -> None:
    results = [_result(True, None), _result(False, True), _result(False, True)]
    assert summary_line(results) == "1 sound accepted, 2 broken rejected as expected"


def test_what_went_otherwise_is_named() -> None:
    results = [_result(False, None), _result(True, False), None]
    assert summary_line(results) == (
        "0 sound accepted, 0 broken rejected as expected, 2 not as expected, "
        "1 could not be imported or built"
    )


def test_rows_skipped_for_one_reason_are_one_line() -> None:
    why = "harbor:probe:conftest-pass@no-op failed: the task is already unsafe under harbor"
    skipped = [
        SkippedCheck(name="harbor:probe:git-reset@no-op", why=why),
        SkippedCheck(name="prefix-2", why="the oracle settled the verdict"),
        SkippedCheck(name="harbor:probe:empty-tests@no-op", why=why),
    ]
    assert _skipped_lines(skipped) == [
        f"skipped, {why}: 2 checks (harbor:probe:git-reset@no-op, harbor:probe:empty-tests@no-op)",
        "skipped, the oracle settled the verdict: prefix-2",
    ]


def test_a_long_group_of_skipped_rows_names_its_first_few() -> None:
    why = "prefix-1 failed: the verdict is a rejection under every runtime"
    skipped = [SkippedCheck(name=f"harbor:probe:p{i}@no-op", why=why) for i in range(23)]
    (line,) = _skipped_lines(skipped)
    assert line == (
        f"skipped, {why}: 23 checks (harbor:probe:p0@no-op, harbor:probe:p1@no-op, "
        "harbor:probe:p2@no-op and 20 more)"
    )
