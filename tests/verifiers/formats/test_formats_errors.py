"""A broken or unknown task layout is refused with an error naming what is wrong."""

from __future__ import annotations

import os

import pytest

from envfactory.core.errors import InvalidInput, InvalidTask
from verifiers.formats import load_task

#: Nine levels of nine aliases each: 387 million values once expanded.
BOMB = "".join(
    f"{k}: &{k} [{', '.join([f'*{p}'] * 9)}]\n" if p else f"{k}: &{k} [{', '.join(['x'] * 9)}]\n"
    for k, p in zip("abcdefghi", ["", *"abcdefgh"], strict=True)
)

HARBOR_CASES = {
    "missing instruction.md": ({"instruction.md": None}, ["instruction.md", "missing"]),
    "empty instruction.md": ({"instruction.md": "  \n"}, ["instruction.md is empty"]),
    "missing task.toml": ({"task.toml": None}, ["task.toml", "missing"]),
    "missing tests/test.sh": ({"tests/test.sh": None}, ["tests/test.sh", "exit 0 iff"]),
    "missing Dockerfile": ({"environment/Dockerfile": None}, ["environment/Dockerfile"]),
    "missing solve.sh": ({"solution/solve.sh": None}, ["solution/solve.sh"]),
    "bad TOML": ({"task.toml": "version = \n[verifier"}, ["task.toml", "invalid TOML"]),
    "TOML table of wrong type": ({"task.toml": "verifier = 3\n"}, ["[verifier]", "table"]),
    "bad verifier timeout": (
        {"task.toml": '[verifier]\ntimeout_sec = "soon"\n'},
        ["[verifier].timeout_sec"],
    ),
    "unknown envfactory key": (
        {"task.toml": "[envfactory]\nverify_scop = 'workspace'\n"},
        ["[envfactory].verify_scop"],
    ),
    "bad verify scope": (
        {"task.toml": "[envfactory]\nverify_scope = 'everything'\n"},
        ["verify_scope"],
    ),
    "conflicting scopes": (
        {
            "task.toml": "[verifier]\nverify_scope = 'full-state'\n[envfactory]\n"
            "verify_scope = 'workspace'\n"
        },
        ["[verifier].verify_scope", "keep one"],
    ),
    "bad memory size": ({"task.toml": "[environment]\nmemory = 'lots'\n"}, ["memory", "'2G'"]),
    "relative workspace path": (
        {"task.toml": "[envfactory]\nworkspace_paths = ['app']\n"},
        ["not an absolute path"],
    ),
    "a workspace of / named": (
        {"task.toml": "[envfactory]\nworkspace_paths = ['/app', '/']\n"},
        ["would be '/'", "workspace_paths"],
    ),
    "a workdir of / named, the workspace left to it": (
        {"task.toml": "[envfactory]\nworkdir = '/'\n"},
        ["would be '/'"],
    ),
    "extra solution file": ({"solution/patch.diff": "x"}, ["patch.diff", "inline"]),
    "heredoc never closed": (
        {"environment/Dockerfile": "FROM x\nWORKDIR /app\nRUN cat > f <<'EOF'\nbody\n"},
        ["environment/Dockerfile line 3", "<<'EOF' is never closed"],
    ),
    "RUN flag the classic builder lacks": (
        {"environment/Dockerfile": "FROM x\nWORKDIR /app\nRUN --mount=type=ssh git pull\n"},
        ["environment/Dockerfile line 3", "--mount=type=ssh needs BuildKit"],
    ),
    "empty step": (
        {"solution/solve.sh": "# step 1\necho a\n# step 2\n\n"},
        ["step 2 (line 3)", "no commands"],
    ),
    "solution without commands": (
        {"solution/solve.sh": "#!/bin/bash\n# nothing\n"},
        ["no commands"],
    ),
    # issue 15: bounded parsing of task files; each once ended in a RecursionError or hung
    "deeply nested TOML": (
        {"task.toml": "x = " + "[" * 3000 + "]" * 3000 + "\n"},
        ["task.toml", "nested too deeply"],
    ),
    "compose alias bomb": (
        {"environment/docker-compose.yaml": BOMB},
        ["docker-compose.yaml", "through aliases"],
    ),
    "NUL in the instruction": (
        {"instruction.md": "count the\x00errors\n"},
        ["instruction must not contain NUL"],
    ),
    "integer of 5000 digits in TOML": (
        {"task.toml": "[verifier]\ntimeout_sec = " + "9" * 5000 + "\n"},
        ["task.toml", "a value cannot be read", "4300 digits"],
    ),
    "compose key that is a list": (
        {"environment/docker-compose.yaml": "services:\n  ? [a, b]\n  : {}\n"},
        ["docker-compose.yaml", "mapping key must be a plain value"],
    ),
}


@pytest.mark.parametrize("changes,expected", HARBOR_CASES.values(), ids=HARBOR_CASES.keys())
def test_a_broken_harbor_task_is_refused_naming_the_problem(
    harbor_task, artifacts, changes, expected
):
    with pytest.raises(InvalidTask) as err:
        load_task(harbor_task(changes), artifacts)
    for fragment in expected:
        assert fragment in str(err.value)
    assert err.value.hint  # every refusal says how to fix it


def test_every_missing_harbor_file_is_named_at_once(harbor_task, artifacts):
    path = harbor_task({"instruction.md": None, "tests/test.sh": None})
    with pytest.raises(InvalidTask, match=r"missing instruction\.md .*; tests/test\.sh"):
        load_task(path, artifacts)


TB_CASES = {
    "missing Dockerfile": ({"Dockerfile": None}, ["Dockerfile", "missing"]),
    "missing run-tests.sh": ({"run-tests.sh": None}, ["run-tests.sh"]),
    "missing tests/": ({"tests": None}, ["tests (create the tests/ directory"]),
    "missing solution.sh": ({"solution.sh": None}, ["solution.sh"]),
    "solution.yaml only": (
        {"solution.sh": None, "solution.yaml": "- command: ls\n"},
        ["solution.yaml", "convert"],
    ),
    "bad YAML": ({"task.yaml": "instruction: [unclosed\n"}, ["task.yaml", "invalid YAML"]),
    "YAML not a mapping": ({"task.yaml": "- a\n- b\n"}, ["mapping"]),
    "no instruction": ({"task.yaml": "difficulty: easy\n"}, ["no instruction"]),
    "bad timeout": (
        {"task.yaml": "instruction: x\nmax_test_timeout_sec: -1\n"},
        ["max_test_timeout_sec"],
    ),
    "run-tests.sh twice": ({"tests/run-tests.sh": "exit 0\n"}, ["clashes"]),
    "task.yaml alias bomb": (
        {"task.yaml": BOMB + "instruction: x\n"},
        ["task.yaml", "expands to more than", "an alias bomb"],
    ),
    "deeply nested task.yaml": (
        {"task.yaml": "instruction: " + "[" * 3000 + "]" * 3000},
        ["task.yaml", "nesting deeper than 50 levels"],
    ),
    "task.yaml key that is a mapping": (
        {"task.yaml": "instruction: x\n? {a: 1}\n: 2\n"},
        ["task.yaml", "mapping key must be a plain value"],
    ),
    "integer of 5000 digits in task.yaml": (
        {"task.yaml": "instruction: x\nmax_test_timeout_sec: " + "9" * 5000 + "\n"},
        ["task.yaml", "more than 4300 digits"],
    ),
    "NUL escape in task.yaml": (
        {"task.yaml": 'instruction: "count\\0errors"\n'},
        ["task.yaml: instruction must not contain NUL"],
    ),
}


@pytest.mark.parametrize("changes,expected", TB_CASES.values(), ids=TB_CASES.keys())
def test_a_broken_terminal_bench_task_is_refused_naming_the_problem(
    tb_task, artifacts, changes, expected
):
    with pytest.raises(InvalidTask) as err:
        load_task(tb_task(changes), artifacts)
    for fragment in expected:
        assert fragment in str(err.value)


def test_an_unknown_layout_lists_what_was_found_and_both_expected_layouts(tmp_path, artifacts):
    task = tmp_path / "task"
    (task / "src").mkdir(parents=True)
    (task / "README.md").write_text("hi")
    with pytest.raises(InvalidTask) as err:
        load_task(task, artifacts)
    text = str(err.value)
    assert "unknown task layout" in text and "README.md, src/" in text
    assert "tests/test.sh" in text and "run-tests.sh" in text


def test_a_directory_with_both_layouts_is_refused(harbor_task, artifacts):
    path = harbor_task({"task.yaml": "instruction: x\n"})
    with pytest.raises(InvalidTask, match="mixes a Harbor layout"):
        load_task(path, artifacts)


def test_a_file_instead_of_a_directory_is_refused(tmp_path, artifacts):
    file = tmp_path / "task.toml"
    file.write_text("")
    with pytest.raises(InvalidTask, match="not a directory"):
        load_task(file, artifacts)


def test_a_symlink_in_the_build_context_is_refused(harbor_task, artifacts):
    path = harbor_task()
    os.symlink("/etc/passwd", path / "environment" / "passwd")
    with pytest.raises(InvalidTask, match="symlinks are not imported"):
        load_task(path, artifacts)


def test_invalid_task_is_terminal_user_input_error():
    assert issubclass(InvalidTask, InvalidInput) and InvalidTask.retryable is False


def test_a_hard_link_to_a_file_outside_the_task_is_refused(harbor_task, artifacts, tmp_path):
    secret = tmp_path / "outside" / "shadow"
    secret.parent.mkdir()
    secret.write_text("root:$6$hash\n")
    path = harbor_task()
    os.link(secret, path / "environment" / "shadow")
    with pytest.raises(InvalidTask, match="hard link to a file that has another name outside"):
        load_task(path, artifacts)


def test_two_names_of_one_file_inside_the_task_are_imported(harbor_task, artifacts):
    path = harbor_task()
    (path / "environment" / "a.txt").write_text("same\n")
    os.link(path / "environment" / "a.txt", path / "environment" / "b.txt")
    task = load_task(path, artifacts)
    names = {f.path for f in task.spec.build.files}
    assert {"a.txt", "b.txt"} <= names
