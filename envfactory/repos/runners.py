"""Test runners as a table of plug-ins: which test files each runs, how its image is built.

A runner is chosen for a commit by the first row whose `runs` accepts one of the test
files the commit touched; that runner then runs every touched test file it accepts.
Adding an ecosystem is adding a row: its test-file predicate, the Dockerfile lines that
install its toolchain and the repository's own dependencies (from PyPI or Debian at build
time), the interpreter that runs check.py in that image, and how test files map to what
check.py runs (`targets`). check.py (check_script.py) holds the matching run function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from sandboxes.builds import PYTHONS

from .conventions import is_test_path
from .declared import ProjectFiles, python_installs, python_ladder

WORKSPACE = "/app"
#: the workspace at the parent: the bundle holds one branch whose tip is the parent; the
#: clone's origin, its remote-tracking refs and reflog are removed and every unreachable
#: object pruned, so nothing after the parent is in the image
CLONE_LINES = (
    "COPY repo.bundle /tmp/repo.bundle",
    f"RUN git clone -q -b main /tmp/repo.bundle {WORKSPACE} && rm /tmp/repo.bundle"
    f" && cd {WORKSPACE} && git remote remove origin"
    " && git reflog expire --expire=now --all && git gc -q --prune=now"
    " && git config user.name solver && git config user.email solver@localhost",
    f"WORKDIR {WORKSPACE}",
)
#: the Pythons a `python:X.Y` FROM line reaches here (each a local Debian base that ships
#: it), in the order tried when a project declares nothing
AVAILABLE_PYTHONS: tuple[str, ...] = tuple(dict.fromkeys(PYTHONS.values()))


@dataclass(frozen=True)
class Toolchain:
    """The toolchain an image is built with ("3.11" for pytest) and why it was chosen."""

    version: str
    why: str
    label: str  # how a reason names it: "Python 3.11"


@dataclass(frozen=True)
class TestRunner:
    name: str
    runs: Callable[[str], bool]  # a test file path this runner runs
    python: str  # the interpreter that runs check.py in the runner's image
    dockerfile: Callable[[ProjectFiles, Toolchain], str]  # the parent's tree → Dockerfile
    targets: Callable[[list[str]], list[str]]  # test files → what check.py runs
    #: the toolchains to build with, first choice first (the next after a failed build)
    toolchains: Callable[[ProjectFiles], list[Toolchain]]
    #: what the image installs and where it was declared, one line each
    installs: Callable[[ProjectFiles], tuple[str, ...]]


def _pytest_runs(path: str) -> bool:
    name = PurePosixPath(path).name
    return is_test_path(path) and (fnmatchcase(name, "test_*.py") or name.endswith("_test.py"))


def _pytest_dockerfile(files: ProjectFiles, python: Toolchain) -> str:
    lines = [
        f"FROM python:{python.version}-slim",
        'RUN pip install -q --no-cache-dir "pytest>=8,<9"',
    ]
    lines += CLONE_LINES
    plan = python_installs(files)
    # Not quiet: pip's "Collecting X" / "Processing X" lines name the package a failed
    # build was installing (buildlog.py).
    pip = "pip install --no-cache-dir --progress-bar off"
    if plan.requirements:
        lines.append("RUN " + " && ".join(f"{pip} -r {r}" for r in plan.requirements))
    if plan.editable:
        extras = f"[{','.join(plan.extras)}]" if plan.extras else ""
        lines.append(f'RUN {pip} -e ".{extras}"')
    return "\n".join(lines) + "\n"


def _pytest_toolchains(files: ProjectFiles) -> list[Toolchain]:
    return [
        Toolchain(c.version, c.why, f"Python {c.version}")
        for c in python_ladder(files, AVAILABLE_PYTHONS)
    ]


def _go_dockerfile(files: ProjectFiles, go: Toolchain) -> str:
    lines = [
        "FROM debian:12",
        "RUN apt-get update -q && apt-get install -y -q --no-install-recommends golang-go"
        " && rm -rf /var/lib/apt/lists/*",
        *CLONE_LINES,
    ]
    return "\n".join(lines) + "\n"


def _go_targets(files: list[str]) -> list[str]:
    dirs = {str(PurePosixPath(f).parent) for f in files}
    return sorted(d if d != "." else "" for d in dirs)


RUNNERS: tuple[TestRunner, ...] = (
    TestRunner(
        name="pytest",
        runs=_pytest_runs,
        python="/usr/local/bin/python3",
        dockerfile=_pytest_dockerfile,
        targets=lambda files: sorted(files),
        toolchains=_pytest_toolchains,
        installs=lambda files: python_installs(files).notes,
    ),
    TestRunner(
        name="go",
        runs=lambda path: path.endswith("_test.go"),
        python="/usr/bin/python3",
        dockerfile=_go_dockerfile,
        targets=_go_targets,
        toolchains=lambda files: [Toolchain("go", "golang-go of Debian 12", "go")],
        installs=lambda files: (),
    ),
)


def runner_for(test_files: list[str]) -> TestRunner | None:
    """The first runner that runs one of `test_files`."""
    return next((r for r in RUNNERS if any(r.runs(f) for f in test_files)), None)
