"""Files in and out, diff, snapshot and restart of a sandbox."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from envfactory.core.errors import SandboxFileNotFound
from envfactory.core.models import Purpose, StateKind
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
    with docker_engine.sandbox(ref.image, purpose=Purpose.TEST) as again:
        assert again.read_file("/workspace/answer.txt") == b"42"
    docker_engine.remove_image(ref.image)


def test_restart_kills_a_background_process_and_keeps_files(sandbox: DockerSandbox) -> None:
    sandbox.write_file("/workspace/keep.txt", "kept")
    sandbox.exec("nohup python3 -c 'import time; time.sleep(1000)' >/dev/null 2>&1 &")
    assert sandbox.exec("pgrep -f 'time.slee[p]'").exit_code == 0
    sandbox.restart()
    assert sandbox.exec("pgrep -f 'time.slee[p]'").exit_code == 1
    assert sandbox.read_file("/workspace/keep.txt") == b"kept"


def test_the_fast_diff_agrees_with_the_daemons_diff(sandbox: DockerSandbox) -> None:
    sandbox.exec(
        "mkdir -p /workspace/a/b && echo 1 > /workspace/a/b/f && echo x >> /etc/hosts.allow; "
        "rm -rf /usr/share/doc/git /etc/issue.net; touch /usr/bin/python3; "
        "ln -s /tmp /workspace/link; chmod 700 /opt; echo y > /usr/local/lib/new.py"
    )
    fast = sandbox.diff()
    assert fast == sandbox.diff(via_daemon=True)
    assert ("/usr/share/doc/git", "D") in {(c.path, c.kind) for c in fast}


def test_the_diff_falls_back_to_the_daemon_for_a_replaced_directory(sandbox: DockerSandbox) -> None:
    sandbox.exec("rm -rf /usr/share/doc && mkdir /usr/share/doc && echo z > /usr/share/doc/new")
    changes = {(c.path, c.kind) for c in sandbox.diff()}
    assert {("/usr/share/doc/new", "A"), ("/usr/share/doc/git", "D")} <= changes


def test_the_fast_diff_agrees_on_a_snapshot_whose_layers_delete_files(
    docker_engine: DockerEngine, sandbox: DockerSandbox
) -> None:
    sandbox.exec("rm -rf /etc/issue.net /usr/share/doc/git && mkdir -p /workspace/w")
    ref = sandbox.snapshot(StateKind.PARTIAL, with_diff=False)
    try:
        with docker_engine.sandbox(ref.image, purpose=Purpose.TEST) as again:
            again.exec(
                "echo back > /etc/issue.net; mkdir -p /usr/share/doc/git; rm -r /workspace/w"
            )
            fast = {(c.path, c.kind) for c in again.diff()}
            assert fast == {(c.path, c.kind) for c in again.diff(via_daemon=True)}
            assert ("/etc/issue.net", "A") in fast and ("/workspace/w", "D") in fast
    finally:
        docker_engine.remove_image(ref.image)


def test_files_can_be_given_to_a_non_root_user(sandbox: DockerSandbox, tmp_path: Path) -> None:
    sandbox.write_file("/home/agent/notes.txt", "a", uid=65534, gid=65534)
    (tmp_path / "t.txt").write_text("t")
    sandbox.put_dir(tmp_path, "/home/agent/tests", uid=65534, gid=65534)
    res = sandbox.exec(
        "echo b >> notes.txt && echo u >> tests/t.txt && cat notes.txt tests/t.txt",
        user="nobody",
        workdir="/home/agent",
    )
    assert res.stdout == "a" + "b\n" + "t" + "u\n", res.stderr


CHANGES = (
    "set -e; mkdir -p /workspace/src/pkg && echo 'print(1)' > /workspace/src/pkg/m.py; "
    "echo more >> /etc/motd; rm /etc/issue.net; rm -r /usr/share/doc/git; "
    "mv /usr/share/doc/bash /opt/bashdoc; ln -s /workspace/src /workspace/link; "
    "ln /workspace/src/pkg/m.py /workspace/hard.py; mkfifo /workspace/fifo; chmod 700 /opt; "
    "rm -rf /usr/share/doc/tzdata && mkdir /usr/share/doc/tzdata; "
    "echo z > /usr/share/doc/tzdata/new; head -c 2000000 /dev/urandom > /workspace/blob"
)
_FIND = (
    "find {roots} -xdev \\( -path /proc -o -path /sys -o -path /etc/hostname -o -path /etc/hosts "
    "-o -path /etc/resolv.conf \\) -prune -o -printf '%p %y %m %U %G %s %n %l\\n' | sort"
)
LISTING = (  # the whole tree as a digest, the changed parts in full (readable on failure)
    _FIND.format(roots="/")
    + " | md5sum; "
    + _FIND.format(roots="/workspace /etc /opt /usr/share/doc")
    + "; find /workspace /etc /opt /usr/share/doc -xdev -type f ! -path '/etc/host*' "
    + "! -path /etc/resolv.conf -exec md5sum {} + | sort"
)


def test_a_layer_snapshot_holds_exactly_what_docker_commit_holds(
    docker_engine: DockerEngine, sandbox: DockerSandbox
) -> None:
    res = sandbox.exec(CHANGES)
    assert res.exit_code == 0, res.stderr
    sandbox.write_file("/workspace/owned.txt", "o", uid=65534, gid=65534)
    fast = sandbox.snapshot(StateKind.PARTIAL, method="layer", with_diff=False)
    slow = sandbox.snapshot(StateKind.PARTIAL, method="commit", with_diff=False)
    try:
        seen = []
        for ref in (fast, slow):
            with docker_engine.sandbox(ref.image, purpose=Purpose.TEST) as sb:
                res = sb.exec(LISTING, timeout=120)
                assert res.exit_code == 0, res.stderr
                seen.append(res.stdout)
        assert seen[0] == seen[1]
        assert "/workspace/src/pkg/m.py f 644" in seen[0]  # the listing saw the changes
        labels = docker_engine.client.images.get(fast.image).labels
        assert labels["envfactory.kind"] == "state" and labels["envfactory.owner"] == "envfactory"
    finally:
        docker_engine.remove_image(fast.image)
        docker_engine.remove_image(slow.image)


def test_a_layer_snapshot_of_a_layer_snapshot_keeps_both_changes(
    docker_engine: DockerEngine, sandbox: DockerSandbox
) -> None:
    sandbox.write_file("/workspace/one.txt", "1")
    first = sandbox.snapshot(StateKind.PARTIAL, method="layer")
    with docker_engine.sandbox(first.image, purpose=Purpose.TEST) as sb:
        sb.exec("echo 2 > /workspace/two.txt && rm /workspace/one.txt")
        second = sb.snapshot(StateKind.PARTIAL, method="layer")
    with docker_engine.sandbox(second.image, purpose=Purpose.TEST) as sb:
        assert sb.exec("ls /workspace").stdout.split() == ["two.txt"]
    docker_engine.remove_image(second.image)
    docker_engine.remove_image(first.image)
