"""The verification script's quoting and markers, as behaviour: the generated shell is run
here, by bash and by dash, on hostile values, without Docker.

Nothing here runs the kill in the reward tail or the replay (`processes.KILL_STRAYS`
walks /proc and would end every process of this machine it may): the tests run
`print_reward_file`, the tail's part after the kill, and assert the tail is that part
behind the kill. Every path a script touches lies under the test's own tmp_path, and the
scripts start there, so even a broken quote could only reach files of the test.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from envfactory.core.models import ExecResult, Provenance, Verifier, VerifyScope
from verifiers import archives
from verifiers.prepare import KILLS_ALL, PreparedState, Replay
from verifiers.processes import KILL_ALL_BUT_INIT, KILL_STRAYS
from verifiers.verify_script import (
    LOG_BYTES,
    LOG_FILES,
    NO_INLINE_MARK,
    NO_REWARD_FILE,
    REWARD_MARK,
    SETUP_FAILED,
    SETUP_FAILED_MARK,
    inline_chunks,
    inline_unavailable,
    print_logs,
    print_reward_file,
    replay_lines,
    replay_then_kill,
    reward_tail,
    script_argv,
    setup_failed,
    setup_script,
    split_logs,
    split_reward_tail,
    staged_tar,
)

from .sumtask import SPEC

#: a path component a task could name: spaces, both quotes, command substitution both
#: ways, a backslash, a newline, a glob, a variable and the shell's operators
HOSTILE = (
    "we ird 'sq' \"dq\" $(touch injected1) `touch injected2` back\\slash\nnew*line $HOME ;&|<>"
)
SHELLS = [s for s in ("bash", "dash") if shutil.which(s)]
needs_tools = pytest.mark.skipif(
    not (Path("/usr/bin/timeout").exists() and Path("/usr/bin/env").exists()),
    reason="the script runs the entry as /usr/bin/timeout … /usr/bin/env",
)


def _run(
    shell: str, script: str, *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`shell -c script [ARGV0 args…]`, as the runner execs it, never with a kill in it."""
    assert "kill -9" not in script, "the kill ends every process of this machine: not here"
    argv = [shell, *script_argv(script, *args)[1:]] if args else [shell, "-c", script]
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def _verifier(**update: object) -> Verifier:
    v = Verifier(env_id="env-x", files=(), entry="true", provenance=Provenance(author="human:t"))
    return v.model_copy(update=update)


def _no_injection(root: Path) -> None:
    assert not [p for p in root.rglob("injected*")], "a value ran as a command"


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("semantics", ["envfactory", "harbor"])
@pytest.mark.parametrize("reward", [False, True])
def test_every_generated_script_parses(shell: str, semantics: str, reward: bool) -> None:
    """Syntax only (`-n` runs nothing): every variant, tail and replay included."""
    place = f"/tmp/{HOSTILE}"
    prepared = PreparedState(
        image="img",
        scope=VerifyScope.WORKSPACE,
        workspace=((place + "/ws", b"tar"), (place + "/gone", None)),
        semantics=semantics,  # type: ignore[arg-type]
    )
    replay = (Replay(argv=("sh", "-c", "echo", HOSTILE), workdir=place), KILLS_ALL)
    before, _ = replay_lines(replay, SPEC)
    v = _verifier(mount_path=place + "/tests", reward_dir=place + "/logs", cwd=place)
    for inline in (False, True):
        script = setup_script(
            prepared,
            v,
            place + "/tests",
            f"/.envfactory-stage-{HOSTILE}",
            30,
            inline=inline,
            reward_dir=v.reward_dir if reward else None,
            before=before,
        )
        res = subprocess.run(
            [shell, "-n", "-c", script], capture_output=True, text=True, check=False
        )
        assert res.returncode == 0, res.stderr
    tail = replay_then_kill(("if", HOSTILE, "A=b"))
    assert subprocess.run([shell, "-n", "-c", tail], check=False).returncode == 0


def _hostile_state(tmp: Path, semantics: str) -> tuple[PreparedState, Verifier, dict[str, Path]]:
    """A workspace of two hostile paths (one the state holds, one it lacks), a verifier at a
    hostile mount path, with a hostile cwd and reward directory, each pre-filled with what
    a pristine image or a solver might have left there."""
    places = {
        "ws": tmp / "ws" / HOSTILE,
        "gone": tmp / "gone" / HOSTILE,
        "vdir": tmp / "tests" / HOSTILE,
        "cwd": tmp / "cwd" / HOSTILE,
        "logs": tmp / "logs" / HOSTILE,
        "out": tmp / "out",
    }
    for key in ("ws", "gone", "vdir", "cwd", "logs", "out"):
        places[key].mkdir(parents=True)
    for key in ("ws", "gone", "vdir", "logs"):
        (places[key] / "pristine.txt").write_text("left here before")
    ws_tar = archives.tar_of({f"{HOSTILE}/state.txt": (b"from the state", 0o644)})
    prepared = PreparedState(
        image="img",
        scope=VerifyScope.WORKSPACE,
        workspace=((str(places["ws"]), ws_tar), (str(places["gone"]), None)),
        semantics=semantics,  # type: ignore[arg-type]
    )
    out = shlex.quote(str(places["out"]))
    entry = (
        f'printf %s "$VERIFIER_DIR" > {out}/vdir; pwd -P > {out}/cwd; '
        f'cat "$VERIFIER_DIR/check.sh" > {out}/v'
    )
    verifier = _verifier(
        mount_path=str(places["vdir"]),
        cwd=str(places["cwd"]),
        reward_dir=str(places["logs"]) if semantics == "envfactory" else None,
        entry=entry,
    )
    return prepared, verifier, places


@needs_tools
@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("semantics", ["envfactory", "harbor"])
@pytest.mark.parametrize("inline", [True, False])
def test_hostile_paths_reach_the_verifier_exactly(
    tmp_path: Path, shell: str, semantics: str, inline: bool
) -> None:
    prepared, verifier, places = _hostile_state(tmp_path, semantics)
    stage = str(tmp_path / "stage")
    staged = staged_tar(prepared, stage, {"check.sh": (b"the verifier's own\n", 0o755)})
    chunks = inline_chunks(staged) if inline else None
    if not inline:  # what `put_archive` does for an exec'd verification
        subprocess.run(["tar", "-x", "-f", "-", "-C", "/"], input=staged, check=True)
    vdir = verifier.mount_path or ""
    # reward_dir=None: the reward directory is prepared, but no tail (its kill) is run
    script = setup_script(prepared, verifier, vdir, stage, 30, inline=inline, reward_dir=None)
    res = _run(shell, script, verifier.entry, *(chunks or ()), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = places["out"]
    assert (out / "vdir").read_text() == str(places["vdir"])  # VERIFIER_DIR, exactly
    assert (out / "cwd").read_text() == os.path.realpath(places["cwd"]) + "\n"
    assert (out / "v").read_text() == "the verifier's own\n"
    assert (places["ws"] / "state.txt").read_text() == "from the state"
    assert not (places["ws"] / "pristine.txt").exists()  # the workspace was swapped, not merged
    assert not places["gone"].exists()  # a path the state lacks is absent
    assert not Path(stage).exists()
    if semantics == "envfactory":
        assert not (places["vdir"] / "pristine.txt").exists()
        assert places["logs"].is_dir() and not any(places["logs"].iterdir())
    else:  # Harbor's upload: copied over what is there
        assert (places["vdir"] / "pristine.txt").exists()
    _no_injection(tmp_path)


@pytest.mark.parametrize("shell", SHELLS)
def test_a_setup_failure_names_the_hostile_path_exactly(tmp_path: Path, shell: str) -> None:
    """The failure message quotes the path too: it once went into single quotes unescaped,
    so a path with a ' broke the script (or ran the rest of the name as a command)."""
    (tmp_path / "afile").write_text("a file, not a directory")
    path = str(tmp_path / "afile" / HOSTILE)  # its parent cannot be made: the move fails
    prepared = PreparedState(image="img", scope=VerifyScope.WORKSPACE, workspace=((path, b"tar"),))
    script = setup_script(
        prepared, _verifier(), str(tmp_path / "v"), "/nonexistent", 5, inline=False
    )
    res = _run(shell, script, "true", cwd=tmp_path)
    assert res.returncode == SETUP_FAILED
    assert res.stderr.endswith(f"{SETUP_FAILED_MARK}: placing {path}\n")
    assert setup_failed(ExecResult(exit_code=res.returncode, stderr=res.stderr))
    _no_injection(tmp_path)


def test_an_image_without_base64_is_told_apart_from_a_failing_verifier(tmp_path: Path) -> None:
    prepared = PreparedState(image="img", scope=VerifyScope.WORKSPACE)
    hide = "command() { return 1; }"  # `command -v base64` finds nothing
    script = setup_script(
        prepared, _verifier(), str(tmp_path / "v"), "/x", 5, inline=True, before=[hide]
    )
    res = _run("bash", script, "true", "Y2h1bms=", cwd=tmp_path)
    found = ExecResult(exit_code=res.returncode, stderr=res.stderr)
    assert res.stderr == NO_INLINE_MARK + "\n"
    assert inline_unavailable(found) and not setup_failed(found)
    assert not inline_unavailable(ExecResult(exit_code=SETUP_FAILED, stderr="no such mark"))


@needs_tools
@pytest.mark.parametrize("shell", SHELLS)
def test_a_replayed_recipe_entry_gets_its_hostile_argv_and_workdir(
    tmp_path: Path, shell: str
) -> None:
    workdir = tmp_path / HOSTILE
    workdir.mkdir()
    out = tmp_path / "out"
    body = 'printf %s "$1" > "$2"; pwd -P > "$3"'
    entry = Replay(
        argv=("sh", "-c", body, "sh", HOSTILE, f"{out}-arg", f"{out}-pwd"), workdir=str(workdir)
    )
    lines, budget = replay_lines([entry], SPEC)
    res = _run(shell, "\n".join(lines), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert Path(f"{out}-arg").read_text() == HOSTILE
    assert Path(f"{out}-pwd").read_text() == os.path.realpath(workdir) + "\n"
    assert budget > SPEC.limits.exec_timeout_s
    _no_injection(tmp_path)


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("name", ["if", "A=b", HOSTILE])
def test_an_exec_replay_runs_the_command_it_names(tmp_path: Path, shell: str, name: str) -> None:
    """The command name is quoted even where shlex would leave it bare: a bare `if` is a
    reserved word (a syntax error), a bare `A=b` an assignment (nothing run, status 0)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    prog = bindir / name
    prog.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {shlex.quote(str(tmp_path / 'args'))}\n")
    prog.chmod(0o755)
    script = replay_then_kill((name, HOSTILE, "x y"))
    assert script.endswith("\n" + KILL_STRAYS)  # the kill is not run here
    command = script.removesuffix("\n" + KILL_STRAYS)
    res = _run(shell, command, cwd=tmp_path, env={"PATH": f"{bindir}:/usr/bin:/bin"})
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "args").read_text() == f"{HOSTILE}\nx y\n"
    _no_injection(tmp_path)


def test_the_reward_tail_is_the_kill_then_the_logs_then_the_read() -> None:
    d = f"/logs/{HOSTILE}"
    assert reward_tail(d, "$rc") == (
        f"{KILL_ALL_BUT_INIT}\n{print_logs(d)}\n{print_reward_file(d, '$rc')}"
    )


@pytest.mark.parametrize("shell", SHELLS)
def test_the_tail_prints_the_verifiers_other_files_bounded_and_the_parser_splits_them_off(
    tmp_path: Path, shell: str
) -> None:
    rd = tmp_path / HOSTILE
    (rd / "sub").mkdir(parents=True)
    (rd / "reward.txt").write_text("0\n")
    (rd / "test-stdout.txt").write_text("1 failed, 2 passed\n")
    (rd / "sub" / "big.json").write_text(("y" * 99 + "\n") * 100)
    (rd / "link").symlink_to(rd / "test-stdout.txt")
    for i in range(LOG_FILES + 3):
        (rd / f"z{i:02}.log").write_text(f"{i}\n")
    script = f"echo verifier said this; rc=0\n{print_logs(str(rd))}\n"
    script += print_reward_file(str(rd), "$rc")
    out = _run(shell, script, cwd=tmp_path)
    res, text, _ = split_reward_tail(ExecResult(exit_code=out.returncode, stdout=out.stdout))
    own, logs = split_logs(res)
    assert own.stdout == "verifier said this\n" and text == "reward.txt\n0\n"
    assert logs is not None and f"=== {rd}/test-stdout.txt\n1 failed, 2 passed" in logs
    assert "reward.txt" not in logs and "=== " + str(rd / "link") not in logs
    assert logs.count("=== ") == LOG_FILES  # at most that many files ...
    assert len(logs) < LOG_FILES * (LOG_BYTES + 200)  # ... each bounded


def _tail_output(
    shell: str, reward_dir: Path, *, forged: str = "", rc: int = 0
) -> tuple[ExecResult, int]:
    read = print_reward_file(str(reward_dir) + "/", "$rc")
    res = _run(shell, f"printf %s {shlex.quote(forged)}; rc={rc}\n{read}", cwd=reward_dir)
    return ExecResult(exit_code=res.returncode, stdout=res.stdout), res.returncode


@pytest.mark.parametrize("shell", SHELLS)
def test_the_parser_reads_the_reward_file_the_tail_prints(tmp_path: Path, shell: str) -> None:
    rd = tmp_path / HOSTILE
    rd.mkdir()
    (rd / "reward.json").write_text('{"reward": 0}')
    (rd / "reward.txt").write_text("1\n")
    forged = f"verifier output\n{REWARD_MARK}reward.txt\n0\n"  # a marker the verifier printed
    res, status = _tail_output(shell, rd, forged=forged, rc=3)
    assert status == 3  # the tail exits with the entry's status
    own, text, read = split_reward_tail(res)
    # reward.json first, as Harbor reads it; the last marker
    assert (text, read) == ('reward.json\n{"reward": 0}\n', True)
    assert own.stdout == forged
    (rd / "reward.json").unlink()
    assert split_reward_tail(_tail_output(shell, rd)[0])[1:] == ("reward.txt\n1\n", True)
    (rd / "reward.txt").write_text("x" * 5000)
    text = split_reward_tail(_tail_output(shell, rd)[0])[1]
    assert text is not None and len(text) <= len("reward.txt\n") + 4096 + 1


@pytest.mark.parametrize("shell", SHELLS)
def test_the_parser_tells_no_reward_file_from_no_tail(tmp_path: Path, shell: str) -> None:
    rd = tmp_path / HOSTILE
    rd.mkdir()
    (rd / "reward.txt").mkdir()  # not a regular file: not a reward
    res, _ = _tail_output(shell, rd)
    assert res.stdout == f"\n{REWARD_MARK}{NO_REWARD_FILE}\n"
    assert split_reward_tail(res)[1:] == (None, True)
    cut = ExecResult(exit_code=None, stdout="output cut before the tail")
    assert split_reward_tail(cut) == (cut, None, False)
