"""Export to the Harbor layout and back; build-context tars; materialising files."""

from __future__ import annotations

import io
import tarfile

import pytest

from envfactory.core.errors import InvalidTask
from envfactory.core.models import BuildContext, FileEntry
from verifiers.formats import context_tar, export_harbor, load_task, materialize

from .formats_helpers import EXAMPLES, TB_EXAMPLES, example_dirs

IGNORED = {"id", "created_at", "env_id"}


def comparable(task):
    spec = task.spec.model_dump(exclude={"id", "created_at"})
    verifier = task.verifier.model_dump(exclude={"env_id", "created_at"})
    return spec, verifier


@pytest.mark.parametrize("path", example_dirs(), ids=lambda p: p.name)
def test_load_export_load_gives_the_same_spec_and_verifier(path, artifacts, tmp_path):
    first = load_task(path, artifacts)
    out = export_harbor(first.spec, first.verifier, artifacts, tmp_path / path.name)
    second = load_task(out, artifacts)
    assert comparable(second) == comparable(first)
    assert second.spec.id == first.spec.id  # content ids survive the round trip


def test_a_round_trip_keeps_envfactory_only_settings(harbor_task, artifacts, tmp_path):
    toml = (
        'version = "1.0"\n[envfactory]\nname = "renamed"\nworkdir = "/srv"\n'
        'workspace_paths = ["/srv", "/data"]\nverify_scope = "full-state"\npids = 64\n'
        'verifier_entry = "bash test.sh -v"\nsuccess_criteria = """two\nlines"""\n'
        "[environment]\ncpus = 0.5\n"
    )
    first = load_task(
        harbor_task({"task.toml": toml, "solution/partial/half.sh": "echo hi\n"}), artifacts
    )
    out = export_harbor(first.spec, first.verifier, artifacts, tmp_path / "out")
    second = load_task(out, artifacts)
    assert comparable(second) == comparable(first)
    assert second.spec.name == "renamed" and second.spec.limits.pids == 64


def test_exporting_a_terminal_bench_task_writes_a_test_sh_that_runs_its_entry(artifacts, tmp_path):
    tb = load_task(TB_EXAMPLES / "error-summary", artifacts)
    out = export_harbor(tb.spec, tb.verifier, artifacts, tmp_path / "error-summary")
    wrapper = (out / "tests" / "test.sh").read_text()
    assert tb.verifier.entry in wrapper and 'exit "$status"' in wrapper
    harbor = load_task(out, artifacts)
    assert harbor.format == "harbor" and harbor.verifier.entry == "bash /tests/test.sh"
    assert harbor.spec.reference_solution == tb.spec.reference_solution
    assert {f.path for f in harbor.verifier.files} == {"run-tests.sh", "test_outputs.py", "test.sh"}


def test_export_refuses_a_non_empty_destination(artifacts, tmp_path):
    task = load_task(EXAMPLES / "csv-report", artifacts)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("")
    with pytest.raises(InvalidTask, match="not an empty directory"):
        export_harbor(task.spec, task.verifier, artifacts, tmp_path / "busy")


def test_exported_scripts_are_executable_and_marked_by_step(artifacts, tmp_path):
    task = load_task(EXAMPLES / "wal-replay", artifacts)
    out = export_harbor(task.spec, task.verifier, artifacts, tmp_path / "w")
    solve = (out / "solution" / "solve.sh").read_text()
    assert solve.startswith("#!/bin/bash\n# step 1: apply the committed")
    assert (out / "solution" / "solve.sh").stat().st_mode & 0o111
    assert (out / "tests" / "test.sh").stat().st_mode & 0o111
    assert (out / "solution" / "partial" / "include-torn.sh").is_file()


def test_context_tar_is_deterministic_and_keeps_modes(artifacts):
    task = load_task(EXAMPLES / "broken-python-from-path", artifacts)
    first = context_tar(task.spec.build, artifacts.get)
    shuffled = BuildContext(files=tuple(reversed(task.spec.build.files)))
    assert context_tar(shuffled, artifacts.get) == first
    members = {m.name: m for m in tarfile.open(fileobj=io.BytesIO(first)).getmembers()}
    assert set(members) == {"Dockerfile", "app/bin/fmt-title", "app/textutil.py"}
    assert members["app/bin/fmt-title"].mode == 0o755 and members["Dockerfile"].mode == 0o644
    assert all(m.mtime == 0 and m.uid == 0 for m in members.values())


def test_materialize_writes_files_with_modes(artifacts, tmp_path):
    entries = [
        FileEntry(path="a/run.sh", key=artifacts.put_bytes(b"echo"), mode=0o755),
        FileEntry(path="b.txt", key=artifacts.put_bytes(b"b"), mode=0o600),
    ]
    written = materialize(entries, artifacts.get, tmp_path / "dest")
    assert [p.relative_to(tmp_path / "dest").as_posix() for p in written] == ["a/run.sh", "b.txt"]
    assert (tmp_path / "dest" / "a" / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "dest" / "b.txt").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("bad", ["../escape", "/etc/passwd", "a/../../b", "a//b", "./a"])
def test_materialize_and_context_tar_refuse_paths_that_escape(artifacts, tmp_path, bad):
    entry = FileEntry(path=bad, key=artifacts.put_bytes(b"x"))
    with pytest.raises(InvalidTask):
        materialize([entry], artifacts.get, tmp_path / "dest")
    with pytest.raises(InvalidTask):
        context_tar(BuildContext(files=(entry,)), artifacts.get)
    assert not (tmp_path / "escape").exists()
