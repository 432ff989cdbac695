"""`envfactory repo mine` on a repository it cannot read: exit 1, the error named, and
with --json one JSON object saying which error and why; nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.cli import app


@pytest.mark.parametrize("as_json", [True, False])
def test_an_unreadable_repository_exits_1_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_json: bool
) -> None:
    monkeypatch.setenv("ENVFACTORY_HOME", str(tmp_path / "home"))
    missing = str(tmp_path / "no-such-repo")
    args = ["repo", "mine", missing] + (["--json"] if as_json else [])
    res = CliRunner().invoke(app, args, catch_exceptions=False)
    assert res.exit_code == 1
    if as_json:
        body = json.loads(res.stdout)
        assert body["error"] == "InvalidRepository"
        assert missing in body["message"] and "no such file" in body["message"]
    else:
        assert f"repository '{missing}': no such file or directory" in res.output
    artifacts = tmp_path / "home" / "artifacts"
    assert not artifacts.exists() or not [p for p in artifacts.rglob("*") if p.is_file()]


@pytest.mark.parametrize(
    ("revision", "says"),
    [
        ("--output=/tmp/pwned", "starts with '-'"),
        ("A..B..C", "is not a range A..B"),
        ("HEAD\n..HEAD", "control character"),
    ],
)
def test_a_bad_revision_is_refused_before_anything_is_cloned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, revision: str, says: str
) -> None:
    from tests.repos.made_repos import python_repo

    repo = python_repo(tmp_path / "calc")
    monkeypatch.setenv("ENVFACTORY_HOME", str(tmp_path / "home"))
    args = ["repo", "mine", str(repo.path), "--range", revision, "--json"]
    res = CliRunner().invoke(app, args, catch_exceptions=False)
    assert res.exit_code == 1 and says in json.loads(res.stdout)["message"]
    assert not (tmp_path / "home" / "artifacts").exists() or not [
        p for p in (tmp_path / "home" / "artifacts").rglob("*") if p.is_file()
    ]


def test_a_limit_below_one_is_a_usage_error_not_a_traceback(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["repo", "mine", str(tmp_path), "--limit", "0"])
    assert res.exit_code == 2, res.output  # a traceback would exit 1
    assert "--limit" in res.output


def test_a_non_utf8_repository_path_is_refused_with_a_message_not_a_traceback(
    tmp_path: Path,
) -> None:
    import os
    import subprocess
    import sys

    raw = os.fsencode(tmp_path) + b"/caf\xe9"
    os.mkdir(raw)
    env = {**os.environ, "ENVFACTORY_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-m", "envfactory.cli", "repo", "mine", raw, "--limit", "1"],
        capture_output=True, env=env, timeout=120,
    )  # fmt: skip
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1, err
    assert "Traceback" not in err
    assert "repository" in err and "caf\ufffd' is not UTF-8" in err
    assert not (tmp_path / "home" / "artifacts").exists()


def test_a_commits_subject_and_build_output_are_printed_with_control_characters_escaped() -> None:
    import io

    from rich.console import Console

    from envfactory.cli.repo import _print_row
    from envfactory.core.models.repos import CandidateResult

    r = CandidateResult(
        commit="a" * 40, subject="fix \x1b[31mred", outcome="dropped", stage="buildable",
        reason="build failed: \x1b]0;title\x07 at step 3",
    )  # fmt: skip
    buf = io.StringIO()
    _print_row(Console(file=buf, force_terminal=True, highlight=False), 0, 1, r)
    printed = buf.getvalue().replace("\x1b[33m", "").replace("\x1b[0m", "")  # our colour
    assert "\x1b" not in printed and "\x07" not in printed
    assert "fix \\x1b[31mred" in printed and "\\x1b]0;title\\x07" in printed
