"""`envfactory task import / list / show` on the example suites, as a user runs them:
every task stored (status imported) with its origin, idempotent, listed by suite, git
provenance recorded, and a bad task named while the good ones are stored."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from envfactory.core.settings import Settings
from envfactory.store import ArtifactStore

from .conftest import REPO, Cli, as_json

TASKS = REPO / "examples" / "tasks"
TASKS_TB = REPO / "examples" / "tasks-tb"
SOUND = {"config-drift", "csv-report", "interval-merge", "wal-replay"}


def _import(cli: Cli, *paths: Path | str) -> dict:
    result = cli("task", "import", *map(str, paths), "--json")
    return {"exit": result.exit_code, **as_json(result)}  # type: ignore[dict-item]


def test_importing_the_example_suites_stores_every_task_with_its_suite(cli: Cli) -> None:
    report = _import(cli, TASKS, TASKS_TB)
    assert report["exit"] == 0 and report["failed"] == []
    names = {e["name"] for e in report["imported"]}
    assert len(report["imported"]) == 12 and SOUND <= names and "error-summary" in names
    tasks = as_json(cli("task", "list", "--suite", "tasks", "--json"))
    tb = as_json(cli("task", "list", "--suite", "tasks-tb", "--json"))
    assert len(tasks) == 11 and {t["name"] for t in tb} == {"error-summary"}
    assert {t["status"] for t in tasks + tb} == {"imported"}
    assert {t["outcome"] for t in tasks} == {None}  # not validated yet
    assert len(as_json(cli("task", "list", "--status", "imported", "--json"))) == 12
    assert as_json(cli("task", "list", "--status", "published", "--json")) == []


def test_importing_the_same_unchanged_tasks_again_changes_nothing(cli: Cli) -> None:
    first = _import(cli, TASKS)
    second = _import(cli, TASKS)
    assert all(e["new"] for e in first["imported"])
    assert not any(e["new"] for e in second["imported"])
    ids = sorted(e["env_id"] for e in first["imported"])
    assert sorted(e["env_id"] for e in second["imported"]) == ids
    listed = as_json(cli("task", "list", "--json"))
    assert sorted(t["env_id"] for t in listed) == ids  # one row each, still version 1


def test_the_same_task_from_another_place_is_the_same_task(cli: Cli, tmp_path: Path) -> None:
    """The env id is the content's: origin (path, suite) is not part of it."""
    copy = tmp_path / "elsewhere" / "csv-report"
    shutil.copytree(TASKS / "csv-report", copy)
    [first] = _import(cli, TASKS / "csv-report")["imported"]
    [again] = _import(cli, copy)["imported"]
    assert again["env_id"] == first["env_id"] and not again["new"]
    assert again["suite"] == "tasks"  # the first import's origin stays the record


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_task_in_a_git_checkout_records_remote_commit_and_every_file_hash(
    cli: Cli, tmp_path: Path
) -> None:
    repo = tmp_path / "bench"
    task = repo / "tasks" / "csv-report"
    shutil.copytree(TASKS / "csv-report", task)
    _git(tmp_path, "init", "-q", str(repo))
    _git(repo, "remote", "add", "origin", "https://example.org/acme/bench.git")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "tasks")
    [entry] = _import(cli, repo)["imported"]
    detail = as_json(cli("task", "show", entry["env_id"], "--json"))
    origin = detail["origin"]
    assert origin["suite"] == "bench" and origin["path"] == str(task)
    assert origin["repository"] == "https://example.org/acme/bench.git"
    assert origin["commit"] == _git(repo, "rev-parse", "HEAD")
    artifacts = ArtifactStore(Settings(home=tmp_path / "home").artifacts_dir)
    hashes = json.loads(artifacts.get(origin["files_key"]))
    on_disk = {p.relative_to(task).as_posix(): p for p in task.rglob("*") if p.is_file()}
    assert set(hashes) == set(on_disk) and len(hashes) >= 5
    for rel, path in on_disk.items():
        assert hashes[rel] == hashlib.sha256(path.read_bytes()).hexdigest(), rel


def test_a_bad_task_among_good_ones_is_named_and_nothing_of_it_is_stored(
    cli: Cli, tmp_path: Path
) -> None:
    suite = tmp_path / "mixed"
    shutil.copytree(TASKS / "csv-report", suite / "csv-report")
    bad = suite / "half-written"
    shutil.copytree(TASKS / "interval-merge", bad)
    shutil.rmtree(bad / "tests")  # a Harbor task without its verifier
    report = _import(cli, suite)
    assert report["exit"] == 1
    [failed] = report["failed"]
    assert failed["path"] == str(bad) and failed["error"] == "InvalidTask"
    assert "tests" in failed["message"]
    assert [e["name"] for e in report["imported"]] == ["csv-report"]
    assert [t["name"] for t in as_json(cli("task", "list", "--json"))] == ["csv-report"]
    human = cli("task", "import", str(suite))
    assert human.exit_code == 1 and f"failed     {bad}" in human.output


def test_a_path_without_tasks_is_refused_with_a_hint(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "empty" / "docs").mkdir(parents=True)
    result = cli("task", "import", str(tmp_path / "empty"))
    assert result.exit_code == 1
    assert "no task directories found" in result.output and "task.toml" in result.output


def test_show_of_an_unknown_env_id_says_so(cli: Cli) -> None:
    result = cli("task", "show", "env-000000000000")
    assert result.exit_code == 1 and "env-000000000000" in result.output


def test_validate_needs_a_suite_or_env_ids_and_checks_they_are_stored(cli: Cli) -> None:
    neither = cli("task", "validate")
    assert neither.exit_code == 1 and "either --suite NAME or one or more ENV_IDs" in neither.output
    unknown = cli("task", "validate", "--suite", "nope")
    assert unknown.exit_code == 1 and "suite 'nope' has no stored tasks" in unknown.output
    missing = cli("task", "validate", "env-000000000000")
    assert missing.exit_code == 1 and "env-000000000000" in missing.output


#: the red team's file: 3 GiB that take nothing on the source disk
SPARSE_BYTES = 3 * 2**30


def _stored_blobs(tmp_path: Path) -> list[str]:
    arts = ArtifactStore.from_settings(Settings(home=tmp_path / "home", database_url=None))
    return list(arts.keys())


def test_a_task_with_a_sparse_file_over_the_file_limit_is_refused_naming_it_and_nothing_stored(
    cli: Cli, tmp_path: Path
) -> None:
    task = tmp_path / "suite" / "sparse"
    shutil.copytree(TASKS / "csv-report", task)
    big = task / "environment" / "blob.bin"
    with open(big, "wb") as f:
        f.truncate(SPARSE_BYTES)
    report = _import(cli, task)
    assert report["exit"] == 1 and report["imported"] == []
    [failed] = report["failed"]
    assert failed["error"] == "InvalidTask"
    assert f"{big}: {SPARSE_BYTES} bytes (a sparse file" in failed["message"]
    assert "MAX_FILE_BYTES" in failed["hint"]
    assert as_json(cli("task", "list", "--json")) == [] and _stored_blobs(tmp_path) == []


def test_a_task_over_the_file_count_or_total_size_is_refused_before_anything_is_stored(
    cli: Cli, tmp_path: Path, monkeypatch
) -> None:
    task = tmp_path / "suite" / "many"
    shutil.copytree(TASKS / "csv-report", task)
    for i in range(40):
        (task / "environment" / f"part-{i:02}.txt").write_text("x" * 1000)
    monkeypatch.setenv("ENVFACTORY_SANDBOX__TASK_FILES__MAX_FILES", "30")
    [failed] = _import(cli, task)["failed"]
    assert f"{task}: holds more than 30 files" in failed["message"]
    monkeypatch.setenv("ENVFACTORY_SANDBOX__TASK_FILES__MAX_FILES", "1000")
    monkeypatch.setenv("ENVFACTORY_SANDBOX__TASK_FILES__MAX_TOTAL_BYTES", "20000")
    [failed] = _import(cli, task)["failed"]
    assert "brings the task to" in failed["message"] and "more than 20000" in failed["message"]
    assert as_json(cli("task", "list", "--json")) == [] and _stored_blobs(tmp_path) == []


@pytest.mark.parametrize(
    ("cpus", "says"),
    [("0.0000001", "must be at least 0.01"), ("true", "not true/false"), ("0", "at least 0.01")],
)
def test_cpus_below_a_hundredth_or_a_boolean_is_refused_naming_the_field(
    cli: Cli, tmp_path: Path, cpus: str, says: str
) -> None:
    task = tmp_path / "suite" / "tiny-cpu"
    shutil.copytree(TASKS / "csv-report", task)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace("cpus = 1\n", f"cpus = {cpus}\n"))
    report = _import(cli, task)
    assert report["exit"] == 1 and report["imported"] == []
    [failed] = report["failed"]
    assert "cpus" in failed["message"] and says in failed["message"], failed
