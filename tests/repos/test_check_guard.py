"""check.py against code under test that forges the verdict from inside pytest's process.

Each forgery of tests/repos/forgeries.py is appended to the module under test of a small
workspace whose fix is not done (two of its tests fail). A weak verifier — pytest run in
the process that imports the workspace, its exit status the verdict — is fooled by the
forgeries that target it; check.py, whose tests run in a child process under the guard
and whose verdict is only the guard's signed records, gives 1 to the fixed workspace and
0 to every forgery. Real processes (the interpreter running these tests and its pytest),
no Docker.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envfactory.repos import check_script
from envfactory.repos.taskdir import CHECK_GUARD, CHECK_SCRIPT

from .forgeries import BEYOND_THE_GUARD, FORGERIES

CALC = '''"""A small calculator."""


def add(a, b):
    return a + b


def sub(a, b):
    return b - a
'''
TESTS = {
    "tests/test_calc.py": (
        "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_sub():\n    assert sub(5, 3) == 2\n"
    ),
    "tests/test_more.py": "from calc import sub\n\n\ndef test_sub_more():\n    assert sub(9, 4) == 5\n",
    "tests/test_unit.py": (
        "import unittest\n\nfrom calc import sub\n\n\nclass TestSub(unittest.TestCase):\n"
        "    def test_sub_unit(self):\n        self.assertEqual(sub(7, 2), 5)\n"
    ),
}
EXPECT = [
    "tests.test_calc::test_add",
    "tests.test_calc::test_sub",
    "tests.test_more::test_sub_more",
    "tests.test_unit.TestSub::test_sub_unit",
]
#: forgeries that turn at least one failing test into a pass for the weak verifier (the
#: others are shown against check.py's own channel: its records, its restored files)
FOOLS_THE_WEAK = {
    "borrowed-function", "call-and-report", "frames-plugin", "function-runtest", "gc-and-ctypes", "module-swap",
    "records-and-exit", "rewrite-tests", "thread-items", "unittest-result",
}  # fmt: skip


def _task(root: Path, appended: str = "", fixed: bool = False) -> Path:
    ws, tests = root / "ws", root / "tests"
    code = CALC.replace("return b - a", "return a - b") if fixed else CALC
    for rel, text in {"calc.py": code + appended, **TESTS}.items():
        for base in (ws, tests / "files"):
            if base == ws or rel in TESTS:
                (base / rel).parent.mkdir(parents=True, exist_ok=True)
                (base / rel).write_text(text)
    shutil.copyfile(CHECK_SCRIPT, tests / "check.py")
    shutil.copyfile(CHECK_GUARD, tests / "check_guard.py")
    (tests / "pytest.ini").write_text("[pytest]\n")
    cfg = {
        "runner": "pytest",
        "python": sys.executable,
        "workspace": str(ws),
        "restore": sorted(TESTS),
        "conftests": [],
        "targets": sorted(TESTS),
        "expect": EXPECT,
        "timeout": 60,
    }
    (tests / "expected.json").write_text(json.dumps(cfg))
    return root


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "check.py"],
        cwd=root / "tests",
        capture_output=True,
        text=True,
        timeout=120,
    )


def _weak(root: Path) -> int:
    """How many tests fail under a weak verifier: pytest in the process that imports the
    workspace, its exit status and summary believed (3 fail in the unfixed workspace)."""
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root / "ws",
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    if res.returncode == 0:
        return 0
    found = re.search(r"(\d+) failed", res.stdout)
    return int(found.group(1)) if found else 3


def test_check_passes_the_fixed_workspace_and_fails_the_unfixed_one(tmp_path: Path) -> None:
    fixed = _check(_task(tmp_path / "fixed", fixed=True))
    assert fixed.returncode == 0, fixed.stdout
    undone = _check(_task(tmp_path / "undone"))
    assert undone.returncode == 1
    assert "not passed: tests.test_calc::test_sub failed" in undone.stdout
    assert "tests.test_calc::test_add" not in undone.stdout.split("not passed", 1)[1]


def test_the_report_mode_names_each_test_as_junit_did(tmp_path: Path) -> None:
    root = _task(tmp_path / "t")
    out = tmp_path / "report.json"
    res = subprocess.run(
        [sys.executable, "-I", "check.py", "--report", str(out)],
        cwd=root / "tests",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout
    assert json.loads(out.read_text()) == {
        "tests.test_calc::test_add": "passed",
        "tests.test_calc::test_sub": "failed",
        "tests.test_more::test_sub_more": "failed",
        "tests.test_unit.TestSub::test_sub_unit": "failed",
    }


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_forgery_from_the_module_under_test_gets_no_reward_from_check(
    tmp_path: Path, name: str
) -> None:
    root = _task(tmp_path / name, FORGERIES[name])
    if name in FOOLS_THE_WEAK:
        assert _weak(root) < 3, f"{name} should fool a verifier without the guard"
    res = _check(root)
    assert res.returncode == 1, res.stdout


def test_the_tests_own_comparisons_are_beyond_the_guard(tmp_path: Path) -> None:
    """The limit the docs state: an object whose ``==`` is always true passes a test that
    compares with ``==``; only tests that check the value's type or use it (mutants, the
    pass-to-pass set) can tell."""
    res = _check(_task(tmp_path / "eq", BEYOND_THE_GUARD["always-equal"]))
    assert res.returncode == 0, res.stdout


def test_records_the_guard_did_not_sign_fail_every_test() -> None:
    key = b"k" * 32
    body = b"1\t" + b"tests/test_calc.py::test_add".hex().encode() + b"\tpassed"
    good = body + b"\t" + check_script._mac(key, body) + b"\n"
    assert check_script.guard_results(good, key) == {"tests.test_calc::test_add": "passed"}
    assert check_script.guard_results(good, b"x" * 32) == {}
    forged = good + b"2\t" + b"tests/test_calc.py::test_sub".hex().encode() + b"\tpassed\t00\n"
    assert check_script.guard_results(forged, key) == {"tests.test_calc::test_add": "failed"}
