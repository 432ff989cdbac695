"""Files in and out, diff, snapshot and restart of a sandbox."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from envfactory.core.errors import SandboxFileNotFound
from envfactory.core.models import StateKind
from sandboxes import DockerEngine, DockerSandbox

pytestmark = pytest.mark.docker


def test_a_written_file_reads_back_with_its_mode(sandbox: DockerSandbox) -> None:
    sandbox.write_file("/workspace/deep/run.sh", "#!/bin/sh\necho ran\n", mode=0o755)
    assert sandbox.read_file("/workspace/deep/run.sh") == b"#!/bin/sh\necho ran\n"
    assert sandbox.exec("/workspace/deep/run.sh").stdout == "ran\n"


def test_read_file_stops_at_max_bytes(sandbox: DockerSandbox) -> None:
    sandbox.exec("head -c 3000000 /dev/zero > /tmp/big")
    assert len(sandbox.read_file("/tmp/big", max_bytes=10)) == 10


def test_reading_a_missing_file_raises_file_not_found(sandbox: DockerSandbox) -> None:
    with pytest.raises(FileNotFoundError):
        sandbox.read_file("/nope/reward.txt")
    with pytest.raises(SandboxFileNotFound):
        sandbox.get_archive("/nope")


def test_put_dir_copies_a_host_tree_into_a_new_directory(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("A")
    (tmp_path / "sub" / "b.txt").write_text("B")
    sandbox.put_dir(tmp_path, "/opt/tests")
    assert sandbox.exec("cat /opt/tests/a.txt /opt/tests/sub/b.txt").stdout == "AB"


def test_get_archive_returns_a_tar_of_the_path(sandbox: DockerSandbox) -> None:
    sandbox.write_file("/workspace/x.txt", "x")
    with tarfile.open(fileobj=io.BytesIO(sandbox.get_archive("/workspace"))) as tar:
        assert "workspace/x.txt" in tar.getnames()


def test_diff_lists_exactly_the_changed_paths(sandbox: DockerSandbox) -> None:
    sandbox.exec(
        "mkdir /workspace && echo new > /workspace/new.txt && "
        "echo 13 > /etc/debian_version && rm /etc/issue.net"
    )
    assert {(c.path, c.kind) for c in sandbox.diff()} == {
        ("/etc", "C"),
        ("/etc/debian_version", "C"),
        ("/etc/issue.net", "D"),
        ("/workspace", "A"),
        ("/workspace/new.txt", "A"),
    }


def test_an_untouched_sandbox_has_an_empty_diff(sandbox: DockerSandbox) -> None:
    sandbox.exec("true")
    assert sandbox.diff() == []


def test_a_snapshot_starts_a_new_container_that_sees_the_same_files(
    docker_engine: DockerEngine, sandbox: DockerSandbox
) -> None:
    sandbox.write_file("/workspace/answer.txt", "42")
    ref = sandbox.snapshot(StateKind.ORACLE, label="oracle", env_id="env-test")
    assert ref.kind is StateKind.ORACLE and ref.env_id == "env-test"
    assert ("/workspace/answer.txt", "A") in {(c.path, c.kind) for c in ref.diff}
    labels = docker_engine.client.images.get(ref.image).labels
    assert labels["envfactory.owner"] == "envfactory" and labels["envfactory.kind"] == "state"
    with docker_engine.sandbox(ref.image, purpose="test") as again:
        assert again.read_file("/workspace/answer.txt") == b"42"
    docker_engine.remove_image(ref.image)


def test_restart_kills_a_background_process_and_keeps_files(sandbox: DockerSandbox) -> None:
    sandbox.write_file("/workspace/keep.txt", "kept")
    sandbox.exec("nohup python3 -c 'import time; time.sleep(1000)' >/dev/null 2>&1 &")
    assert sandbox.exec("pgrep -f 'time.slee[p]'").exit_code == 0
    sandbox.restart()
    assert sandbox.exec("pgrep -f 'time.slee[p]'").exit_code == 1
    assert sandbox.read_file("/workspace/keep.txt") == b"kept"
