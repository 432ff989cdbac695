"""Malformed input through the command line. With `--json`, one case per input format (a
seed as YAML, as JSON, as a directory; a Harbor task.toml and compose file; a
Terminal-Bench task.yaml), each an input that once crashed a loader: the exit status is 1
and stdout is one JSON error naming the file or field, never a traceback. Without it, the
error is printed as written."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .conftest import REPO, Cli, as_json

HARBOR = REPO / "examples" / "tasks" / "csv-report"
TB = REPO / "examples" / "tasks-tb" / "error-summary"


def _seed_yaml(d: Path) -> Path:
    (d / "seed.yaml").write_text("title: 2001-13-45\ndescription: d\ndomain: x\n")
    return d


def _seed_json(d: Path) -> Path:
    (d / "seed.json").write_text('{"title": "t", "description": "d", "domain": "x\\ud800"}')
    return d / "seed.json"


def _seed_dir(d: Path) -> Path:
    (d / "seed.yaml").write_text("title: t\ndescription: d\ndomain: x\n")
    (Path(os.fsdecode(os.fsencode(d) + b"/caf\xe9.csv"))).write_text("x\n")
    return d


SEEDS = {
    "seed.yaml with a date that does not exist": (_seed_yaml, "'2001-13-45' is not a valid date"),
    "seed.json with an escaped lone surrogate": (_seed_json, "lone surrogate"),
    "seed directory with a file name that is not UTF-8": (_seed_dir, "is not UTF-8"),
}


@pytest.mark.parametrize("case", SEEDS, ids=list(SEEDS))
def test_a_malformed_seed_is_one_json_error_and_exit_1(cli: Cli, tmp_path: Path, case: str) -> None:
    make, says = SEEDS[case]
    d = tmp_path / "seed"
    d.mkdir()
    result = cli("seed", "submit", str(make(d)), "--json", "--no-start")
    assert result.exit_code == 1
    body = as_json(result)
    assert isinstance(body, dict) and body["error"] == "InvalidSeed"
    assert says in body["message"] and body["where"]


def _harbor(d: Path, rel: str, data: bytes) -> Path:
    task = shutil.copytree(HARBOR, d / "csv-report")
    (task / rel).write_bytes(data)
    return task


TASKS = {
    "Harbor task.toml with a size past float's range": (
        lambda d: _harbor(d, "task.toml", b'version = "1.0"\n[environment]\nmemory = "1e400G"\n'),
        "[environment].memory = '1e400G'",
    ),
    "Harbor compose file with a command of no list type": (
        lambda d: _harbor(
            d,
            "environment/docker-compose.yaml",
            b"services:\n  main: {build: .}\n  db: {build: ., command: 5}\n",
        ),
        "`command` must be a string or a list",
    ),
    "Terminal-Bench task.yaml that is not UTF-8": (
        lambda d: (
            t := shutil.copytree(TB, d / "error-summary"),
            (t / "task.yaml").write_bytes(b"instruction: caf\xe9\n"),
        )[0],
        "task.yaml: not UTF-8 text (byte 0xe9 on line 1)",
    ),
}


@pytest.mark.parametrize("case", TASKS, ids=list(TASKS))
def test_a_malformed_task_is_a_json_failure_and_exit_1(cli: Cli, tmp_path: Path, case: str) -> None:
    make, says = TASKS[case]
    result = cli("task", "import", str(make(tmp_path)), "--json")
    assert result.exit_code == 1
    body = as_json(result)
    assert isinstance(body, dict) and body["imported"] == []
    [failure] = body["failed"]
    assert failure["error"] == "InvalidTask" and says in failure["message"], failure


def test_an_import_error_holding_brackets_is_printed_as_written_not_as_markup(
    cli: Cli, tmp_path: Path
) -> None:
    """Regression: rich read `[environment]` in a message as markup and dropped it, and
    failed with MarkupError on a task's own `[/x]`."""
    bad_size = _harbor(tmp_path / "a", "task.toml", b'[environment]\nmemory = "infG"\n')
    bad_dir = _harbor(tmp_path / "b", "task.toml", b'[envfactory]\nworkdir = "a[/x]"\n')
    result = cli("task", "import", str(bad_size), str(bad_dir))
    assert result.exit_code == 1
    assert "task.toml [environment].memory = 'infG'" in result.stdout
    assert "[envfactory].workdir: 'a[/x]' is not an absolute path" in result.stdout
