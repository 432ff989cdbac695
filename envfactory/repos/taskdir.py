"""A mined candidate written as a Harbor task directory, so the importer and every gate
run it like any task.

    instruction.md          the commit message through a template (never the diff)
    task.toml               limits, [envfactory] name, workspace /app, success criteria
    environment/            Dockerfile (the runner's) + repo.bundle (history up to the parent)
    solution/solve.sh       the fix's non-test diff, applied with `git apply`
    solution/partial/*.sh   subsets of its hunks (hunk-N-only, without-hunk-N)
    tests/                  test.sh → check.py (+ check_guard.py), expected.json, pytest.ini, files/ (the
                            test files at the fix commit, restored at verification time)
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .runners import WORKSPACE, TestRunner
from .wording import Written

CHECK_SCRIPT = Path(__file__).with_name("check_script.py")
#: loaded by check.py into the tests' process before the workspace's code (check_guard.py)
CHECK_GUARD = Path(__file__).with_name("check_guard.py")
#: lines of a commit message that look like a diff are left out of the instruction
_MERGE = re.compile(r"^Merge (pull request|branch|remote-tracking branch) ")
_DIFF_LINE = re.compile(r"^(diff --git |\+\+\+ |--- |@@ |index [0-9a-f]+\.\.)")


@dataclass
class TaskParts:
    name: str
    commit: str
    message: str
    runner: TestRunner
    dockerfile: str
    bundle: Path
    patch: str
    test_files: dict[str, bytes]  # rel path → content at the commit (restored)
    conftests: list[str]  # every conftest.py the commit's tree has
    targets: list[str]
    expect: list[str] = field(default_factory=list)
    partials: dict[str, str] = field(default_factory=dict)  # name → patch
    timeout_s: int = 300
    #: the instruction a model wrote (wording.py); None: the template's
    written: Written | None = None
    #: repository paths of the fix's documentation and type stubs: no test reads them,
    #: so the task does not grade them (`ungraded` in task.toml)
    ungraded: list[str] = field(default_factory=list)


def instruction(commit: str, message: str) -> str:
    """The model-free instruction: the commit message, diff-like lines left out."""
    lines = [ln for ln in message.strip().splitlines() if not _DIFF_LINE.match(ln)]
    subject, body = (lines[0] if lines else "Fix the bug"), "\n".join(lines[1:]).strip()
    if _MERGE.match(subject) and body:  # a merge's title is its branch's first line
        subject, _, body = body.partition("\n")
        body = body.strip()
    return (
        f"# {subject}\n\n{body + chr(10) + chr(10) if body else ''}{_WHERE}"
        f"_This instruction was written by a template from the message of commit "
        f"{commit[:12]}; no model wrote it._\n"
    )


_WHERE = (
    f"Work in {WORKSPACE}, a git repository checked out at the commit before this "
    "change. Make the change described above, in the repository's code. When your work "
    "is checked, the repository's tests for this change are run in their maintainers' "
    "version.\n\n"
)


def written_instruction(commit: str, written: Written) -> str:
    """A model's instruction (wording.py), with where to work and who wrote it."""
    return (
        f"{written.text.strip()}\n\n{_WHERE}"
        f"_This instruction was written by the model {written.model} from the message of "
        f"commit {commit[:12]}; the model never saw the change itself._\n"
    )


def write_task(dest: Path, parts: TaskParts) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "environment").mkdir(parents=True)
    text = (
        written_instruction(parts.commit, parts.written)
        if parts.written
        else instruction(parts.commit, parts.message)
    )
    (dest / "instruction.md").write_text(text)
    (dest / "task.toml").write_text(_task_toml(parts))
    (dest / "environment" / "Dockerfile").write_text(parts.dockerfile)
    shutil.copyfile(parts.bundle, dest / "environment" / "repo.bundle")
    _write_solution(dest / "solution", parts)
    _write_tests(dest / "tests", parts)
    return dest


def _task_toml(parts: TaskParts) -> str:
    tests = ", ".join(parts.expect) or "none"
    criteria = f"the repository's tests pass at the fix commit's version: {tests}"
    return (
        'version = "1.0"\n\n[verifier]\n'
        f"timeout_sec = {float(parts.timeout_s + 60)}\n\n"
        "[agent]\ntimeout_sec = 1800.0\n\n"
        "[environment]\ncpus = 1\nmemory_mb = 2048\n\n"
        "[envfactory]\n"
        f"name = {json.dumps(parts.name)}\n"
        'verify_scope = "workspace"\n'
        f"workspace_paths = [{json.dumps(WORKSPACE)}]\n"
        f"success_criteria = {json.dumps(criteria)}\n"
        f"hidden_state_notes = {json.dumps('mined from commit ' + parts.commit)}\n"
        + (f"ungraded = {json.dumps([f'{WORKSPACE}/{p}' for p in parts.ungraded])}\n"
           if parts.ungraded else "")
    )  # fmt: skip


def _apply_script(patch: str, title: str) -> str:
    tag = "ENVFACTORY_PATCH_" + hashlib.sha256(patch.encode()).hexdigest()[:16]
    body = patch if patch.endswith("\n") else patch + "\n"
    return (
        f"#!/bin/bash\nset -euo pipefail\ncd {WORKSPACE}\n# step 1: {title}\n"
        f"git apply --whitespace=nowarn <<'{tag}'\n{body}{tag}\n"
    )


def _write_solution(sol: Path, parts: TaskParts) -> None:
    (sol / "partial").mkdir(parents=True)
    (sol / "solve.sh").write_text(_apply_script(parts.patch, "apply the fix"))
    for name, patch in parts.partials.items():
        (sol / "partial" / f"{name}.sh").write_text(_apply_script(patch, name))


def _write_tests(tests: Path, parts: TaskParts) -> None:
    (tests / "files").mkdir(parents=True)
    for rel, data in parts.test_files.items():
        (tests / "files" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tests / "files" / rel).write_bytes(data)
    shutil.copyfile(CHECK_SCRIPT, tests / "check.py")
    shutil.copyfile(CHECK_GUARD, tests / "check_guard.py")
    (tests / "pytest.ini").write_text("[pytest]\n")
    config = {
        "runner": parts.runner.name,
        "python": parts.runner.python,
        "workspace": WORKSPACE,
        "restore": sorted(parts.test_files),
        "conftests": parts.conftests,
        "targets": parts.targets,
        "expect": parts.expect,
        "timeout": parts.timeout_s,
    }
    (tests / "expected.json").write_text(json.dumps(config, indent=1) + "\n")
    (tests / "test.sh").write_text(
        f"#!/bin/bash\n# Reward = check.py's exit status: every expected test passed.\n"
        f'cd /tests || exit 1\nexec {parts.runner.python} -I /tests/check.py "$@"\n'
    )
