"""Candidates without Docker: tests split from the fix by convention, the fix's hunks and
the partial states made from them, the templated instruction, and the parent bundle that
carries no later object."""

from __future__ import annotations

import subprocess
from pathlib import Path

from envfactory.repos import history as h
from envfactory.repos.check_script import node_ids
from envfactory.repos.conventions import is_doc_path, is_test_path, split_paths
from envfactory.repos.miner import RESTORED_MAX, restored
from envfactory.repos.patches import partial_states, subset_patch
from envfactory.repos.runners import runner_for
from envfactory.repos.taskdir import instruction

from .made_repos import python_repo


def test_test_files_are_told_from_the_fix_by_the_conventions_table() -> None:
    paths = ["calc.py", "tests/data/x.json", "pkg/test_io.py", "pkg/io_test.go", "web/a.spec.ts",
             "conftest.py", "src/testing_utils.py", "docs/test-plan.md"]  # fmt: skip
    tests, rest = split_paths(paths)
    assert tests == ["tests/data/x.json", "pkg/test_io.py", "pkg/io_test.go", "web/a.spec.ts",
                     "conftest.py"]  # fmt: skip
    assert rest == ["calc.py", "src/testing_utils.py", "docs/test-plan.md"]
    assert not is_test_path("contest.py")


def test_the_runner_is_chosen_from_the_plug_in_table_by_the_test_files() -> None:
    assert runner_for(["tests/test_calc.py"]).name == "pytest"  # type: ignore[union-attr]
    assert runner_for(["mathx/mathx_test.go"]).name == "go"  # type: ignore[union-attr]
    assert runner_for(["tests/data/x.json"]) is None


def test_a_fix_of_two_hunks_gives_each_hunk_alone_once(tmp_path: Path) -> None:
    repo = python_repo(tmp_path / "calc")
    bare = tmp_path / "calc" / ".git"
    info = h.commit_info(bare, repo.commits["clamp-fix"])
    assert info.parent == repo.commits["docs"]
    patches = h.file_patches(bare, info.parent, info.commit, ["calc.py"])
    assert len(patches[0].hunks) == 2
    states = partial_states(2, info.commit, hunk_max=6)
    # hunk-1-only is without-hunk-2: one state, named once
    assert [(s.name, s.hunks, s.missing) for s in states] == [
        ("hunk-1-only", (1,), (2,)),
        ("without-hunk-1", (2,), (1,)),
    ]
    only_first = subset_patch(patches, {1})
    subprocess.run(["git", "-C", str(repo.path), "checkout", "-q", info.parent], check=True)
    subprocess.run(
        ["git", "-C", str(repo.path), "apply", "-"], input=only_first.encode(), check=True
    )
    text = (repo.path / "calc.py").read_text()
    assert "min(hi, max(lo, x))" in text and '"not positive"' in text


def test_past_the_bound_the_hunks_are_sampled_the_same_way_each_time() -> None:
    a = partial_states(20, "abc", hunk_max=3)
    assert a == partial_states(20, "abc", hunk_max=3)
    assert len(a) == 6
    assert partial_states(1, "abc", hunk_max=3) == []


def test_the_instruction_is_the_commit_message_said_to_be_templated_and_never_a_diff() -> None:
    message = (
        "Fix sub\n\nIt was wrong.\ndiff --git a/calc.py b/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n"
    )
    text = instruction("0123456789abcdef", message)
    assert text.startswith("# Fix sub\n\nIt was wrong.")
    assert "diff --git" not in text and "+++" not in text and "@@" not in text
    assert "written by a template" in text and "0123456789ab" in text


def test_the_parent_bundle_holds_no_object_of_later_history(tmp_path: Path) -> None:
    repo = python_repo(tmp_path / "calc")
    bare = tmp_path / "calc" / ".git"
    bundle = h.parent_bundle(bare, repo.commits["root"], tmp_path / "p.bundle")
    subprocess.run(
        ["git", "clone", "-q", "-b", "main", str(bundle), str(tmp_path / "ws")], check=True
    )
    objects = subprocess.run(
        ["git", "-C", str(tmp_path / "ws"), "cat-file", "--batch-all-objects", "--batch-check"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    fix_blobs = {
        repo.blob(c, p) for c in ("sub-fix", "clamp-fix") for p in ("calc.py", "tests/test_calc.py")
    }
    assert all(b not in objects for b in fix_blobs)
    assert repo.blob("root", "calc.py") in objects


def test_a_merge_commit_is_titled_by_its_branchs_first_line() -> None:
    text = instruction("f" * 40, "Merge pull request #12 from ann/fix\n\nRaise for negative n\n")
    assert text.startswith("# Raise for negative n\n")


def test_a_verification_runs_the_expected_tests_alone_by_their_pytest_node_ids() -> None:
    cfg = {
        "targets": ["tests/test_more.py", "tests/test_calc.py"],
        "expect": ["tests.test_more.SlicedTests::test_negative", "tests.test_calc::test_add[1-2]"],
    }
    assert node_ids(cfg) == [
        "tests/test_more.py::SlicedTests::test_negative",
        "tests/test_calc.py::test_add[1-2]",
    ]
    # a test no target file holds: the whole files run, so it is reported as not passed
    assert node_ids({"targets": ["tests/test_calc.py"], "expect": ["other::x"]}) == [
        "tests/test_calc.py"
    ]


def test_documentation_is_told_apart_so_partial_states_always_keep_it() -> None:
    assert [is_doc_path(p) for p in ("docs/versions.rst", "README.md", "CHANGES", "pkg/x.py")] == [
        True,
        True,
        True,
        False,
    ]
    assert is_doc_path("more_itertools/more.pyi") and not is_doc_path("pkg/stubs.py")


def test_every_conftest_and_test_helper_of_the_commit_is_restored_not_only_the_touched_tests():
    tree = frozenset(
        {
            "pkg/mod.py",
            "tests/conftest.py",
            "tests/test_mod.py",
            "tests/helpers.py",
            "tests/data/sample.txt",
            "README.md",
        }
    )
    files = restored(["tests/test_mod.py"], tree, lambda p: f"at the commit: {p}".encode())
    assert sorted(files) == ["tests/conftest.py", "tests/helpers.py", "tests/test_mod.py"]
    assert files["tests/conftest.py"] == b"at the commit: tests/conftest.py"


def test_past_the_bound_only_the_touched_tests_and_the_conftests_are_restored():
    helpers = {f"tests/test_{i}.py" for i in range(RESTORED_MAX + 1)}
    tree = frozenset({"tests/conftest.py", *helpers})
    files = restored(["tests/test_0.py"], tree, lambda p: b"x")
    assert sorted(files) == ["tests/conftest.py", "tests/test_0.py"]


def test_the_fixs_documentation_and_stubs_are_written_as_ungraded(tmp_path: Path) -> None:
    from envfactory.repos.runners import RUNNERS
    from envfactory.repos.taskdir import TaskParts, write_task
    from envfactory.store import ArtifactStore
    from verifiers.formats import load_task

    bundle = tmp_path / "repo.bundle"
    bundle.write_bytes(b"not read here")
    parts = TaskParts(
        name="calc-0123456789ab", commit="0123456789ab" * 3, message="Fix f", runner=RUNNERS[0],
        dockerfile="FROM python:3.11-slim\nWORKDIR /app\n", bundle=bundle,
        patch="--- a/calc.py\n+++ b/calc.py\n", test_files={}, conftests=[], targets=[],
        ungraded=["docs/versions.rst", "calc.pyi"],
    )  # fmt: skip
    task = load_task(write_task(tmp_path / "task", parts), ArtifactStore(tmp_path / "a"))
    assert task.spec.ungraded_paths == ("/app/docs/versions.rst", "/app/calc.pyi")
