"""What a project declares, read statically: test extras, requirement files and the
Python ladder; build-log reasons; names the tests require that an instruction lacks;
test counts with collection errors apart; past tags and reverts in a made history."""

from __future__ import annotations

from pathlib import Path

from envfactory.repos.buildlog import build_error
from envfactory.repos.declared import ProjectFiles, python_installs, python_ladder
from envfactory.repos.history import commit_info, past_tags, reverted_commit
from envfactory.repos.miner import why_no_fail_to_pass
from envfactory.repos.quality import unsaid_names
from envfactory.repos.testruns import TestRuns

from .made_repos import init_repo


def files(texts: dict[str, str] | None = None) -> ProjectFiles:
    by_path = {k: v.encode() for k, v in (texts or {}).items()}
    return ProjectFiles(frozenset(by_path), lambda p: by_path[p])


def test_test_extras_are_read_from_pyproject_setup_cfg_and_setup_py() -> None:
    pyproject = '[project]\nname = "p"\n[project.optional-dependencies]\nTest = ["typeguard"]\ndocs = ["x"]\n'
    plan = python_installs(files({"pyproject.toml": pyproject}))
    assert (plan.editable, plan.extras) == (True, ("test",))
    assert "extra test (pyproject.toml)" in plan.notes
    cfg = "[options.extras_require]\ntesting =\n    pytest-mock\ndev = black\n"
    plan = python_installs(files({"setup.py": "from setuptools import setup\nsetup()\n", "setup.cfg": cfg}))  # fmt: skip
    assert plan.extras == ("testing", "dev")
    setup_py = (
        "import setuptools\nEXTRAS = {'tests': ['hypothesis'], 'speed': ['ujson']}\n"
        "setuptools.setup(name='p', extras_require=EXTRAS)\n"
    )
    assert python_installs(files({"setup.py": setup_py})).extras == ("tests",)
    assert python_installs(files({"setup.py": "setup(extras_require=dict(dev=[]))"})).extras == (
        "dev",
    )


def test_requirement_files_for_tests_are_installed_and_broken_declarations_are_skipped() -> None:
    plan = python_installs(
        files(
            {
                "requirements.txt": "a",
                "requirements_test.txt": "b",
                "requirements/dev.txt": "c",
                "docs/requirements.txt": "d",
                "pyproject.toml": "[project\nbroken",
            }
        )  # fmt: skip
    )
    assert plan.requirements == ("requirements.txt", "requirements_test.txt",
                                 "requirements/dev.txt")  # fmt: skip
    assert plan.extras == () and plan.editable


def test_the_python_ladder_follows_requires_python_and_the_versions_the_project_names() -> None:
    avail = ("3.11", "3.13")
    assert [c.version for c in python_ladder(files(), avail)] == ["3.11", "3.13"]
    only_new = files({"pyproject.toml": '[project]\nrequires-python = ">=3.12"\n'})
    (choice,) = python_ladder(only_new, avail)
    assert (choice.version, choice.why) == ("3.13", "requires-python >=3.12")
    named = files({
        "tox.ini": "[tox]\nenvlist = py39, py313\n",
        ".github/workflows/ci.yml": '    python-version: ["3.9", "3.13"]\n',
    })  # fmt: skip
    ladder = python_ladder(named, avail)
    assert [c.version for c in ladder] == ["3.13", "3.11"]
    assert ladder[0].why == "named by tox envlist, CI matrix"
    old = files({"setup.py": "setup(python_requires='>=3.6,<3.12')"})
    assert [c.version for c in python_ladder(old, avail)] == ["3.11"]
    none = python_ladder(files({"setup.py": "setup(python_requires='<3.8')"}), avail)
    assert [c.version for c in none] == ["3.11", "3.13"]
    assert "allows none of 3.11, 3.13" in none[0].why


def test_a_build_reason_is_the_package_and_its_first_error_never_pips_closing_note() -> None:
    log = """Step 5/6 : RUN pip install -r requirements.txt
Collecting PyYAML==5.4.1
  Installing build dependencies: finished with status 'done'
  error: subprocess-exited-with-error

  × Getting requirements to build wheel did not run successfully.
  │ exit code: 1
  ╰─> [62 lines of output]
      running egg_info
      AttributeError: 'build_ext' object has no attribute 'cython_sources'
      [end of output]

  note: This error originates from a subprocess, and is likely not a problem with pip.
error: subprocess-exited-with-error
The command '/bin/sh -c pip install -r requirements.txt' returned a non-zero code: 1"""
    assert build_error(log) == (
        "PyYAML==5.4.1: AttributeError: 'build_ext' object has no attribute 'cython_sources'"
    )
    missing = "ERROR: Could not find a version that satisfies the requirement nope==9 (from versions: none)"
    assert build_error("Collecting nope==9\n" + missing) == missing
    assert build_error("all fine\n") == ""


def test_names_the_tests_require_and_the_instruction_lacks_are_found() -> None:
    tests = {
        "tests/test_store.py": b"""import pytest
from store import get

def test_missing_key():
    with pytest.raises(LookupError, match="no such key"):
        get({}, "k")

class TestGet:
    def test_generic(self):
        with pytest.raises(Exception):
            get({}, "k")

    def test_typed(self):
        self.assertRaises((KeyError, errors.StoreError), get, {}, "k")
"""
    }
    ids = ["tests.test_store::test_missing_key", "tests.test_store::TestGet::test_generic",
           "tests.test_store::TestGet::test_typed"]  # fmt: skip
    found = unsaid_names(tests, ids, "# get: raise an exception for a missing key\n")
    assert found == ["LookupError", "'no such key'", "KeyError", "StoreError"]
    said = "# get raises LookupError (no such key) for a missing key; KeyError or StoreError"
    assert unsaid_names(tests, ids, said) == []


def test_counts_keep_collection_errors_apart_and_name_the_missing_module() -> None:
    log = (
        "==================================== ERRORS ====================================\n"
        "_______________________ ERROR collecting tests/test_t.py _______________________\n"
        "tests/test_t.py:1: in <module>\n    import typeguard\n"
        "E   ModuleNotFoundError: No module named 'typeguard'\n"
        "=========================== short test summary info ============================\n"
        "ERROR tests/test_t.py\n"
    )
    runs = TestRuns(
        parent={"::tests.test_t": "failed", "tests.test_a::test_x": "passed"},
        commit={
            "::tests.test_t": "failed",
            "tests.test_a::test_x": "passed",
            "tests.test_a::test_new": "failed",
        },  # fmt: skip
        commit_log=log,
    )
    parent, commit = runs.counts("parent"), runs.counts("commit")
    assert (parent.passed, parent.failed, parent.errors, parent.not_collected) == (1, 0, 1, 1)
    assert (commit.passed, commit.failed, commit.errors, commit.not_collected) == (1, 1, 1, 0)
    assert runs.collect_errors("commit") == [
        "tests/test_t.py: ModuleNotFoundError: No module named 'typeguard'"
    ]
    assert runs.fail_to_pass == set()


def test_past_tags_travel_and_a_revert_of_visible_history_is_found(tmp_path: Path) -> None:
    r = init_repo(tmp_path / "r")
    r.write("a.py", "x = 1\n")
    first = r.commit("first", "first")
    r.git("tag", "-a", "v1.0", "-m", "release 1.0")
    r.git("tag", "light")
    r.write("a.py", "x = 2\n")
    second = r.commit("second", "Make x two")
    r.git("tag", "v2.0")
    r.git("tag", "tree-tag", f"{second}^{{tree}}")
    assert sorted(past_tags(r.path, first)) == ["refs/tags/light", "refs/tags/v1.0"]
    assert sorted(past_tags(r.path, second)) == ["refs/tags/light", "refs/tags/v1.0",
                                                 "refs/tags/v2.0"]  # fmt: skip
    r.git("revert", "--no-edit", second)
    assert reverted_commit(r.path, commit_info(r.path, "HEAD")) == second
    r.write("a.py", "x = 3\n")
    r.commit("third", 'Revert "Make x two"\n\nby hand')
    assert reverted_commit(r.path, commit_info(r.path, "HEAD")) == second
    r.write("a.py", "x = 4\n")
    r.commit("fourth", f'Revert "not in history"\n\nThis reverts commit {"0" * 40}.')
    assert reverted_commit(r.path, commit_info(r.path, "HEAD")) is None
    assert first


def test_no_fail_to_pass_says_which_case_it_is() -> None:
    failing = TestRuns(parent={"t::a": "failed"}, commit={"t::a": "failed", "t::b": "failed"})
    drop = why_no_fail_to_pass(failing)
    assert drop.kind == "fails_at_commit"
    assert drop.reason == (
        "every touched test fails at the fix commit too (at the parent 0 passed, 1 failed, "
        "1 not collected; at the commit 0 passed, 2 failed)"
    )
    both = TestRuns(parent={"t::a": "passed"}, commit={"t::a": "passed"})
    assert why_no_fail_to_pass(both).kind == "no_fail_to_pass"
    broken = TestRuns(parent={}, commit={"::tests.test_x": "failed"})
    assert why_no_fail_to_pass(broken).reason == (
        "the tests do not collect at the commit: tests/test_x.py did not collect"
    )


def test_a_file_the_log_says_did_not_collect_gets_its_error_row_once() -> None:
    """The guarded check.py reports only tests that ran: a file that never collected has
    no row of its own, so the log's "ERROR collecting" section supplies it."""
    from envfactory.repos.testruns import TestRuns, with_collect_errors

    log = (
        "_____________ ERROR collecting tests/test_tax.py _____________\n"
        "E   ModuleNotFoundError: No module named 'typeguard'\n"
        "=========================== short test summary info ===\n"
    )
    got = with_collect_errors({"tests.test_a::t1": "passed"}, log)
    assert got == {"tests.test_a::t1": "passed", "::tests.test_tax": "failed"}
    assert with_collect_errors({"::tests.test_tax": "failed"}, log) == {
        "::tests.test_tax": "failed"
    }
    runs = TestRuns(parent=got, commit=got, parent_log=log, commit_log=log)
    assert runs.collect_errors("parent") == [
        "tests/test_tax.py: ModuleNotFoundError: No module named 'typeguard'"
    ]
    assert runs.counts("parent").errors == 1
