"""The runner's invariants, on the real Docker engine."""

from __future__ import annotations

import pytest

from envfactory.core.models import Purpose, StateKind, VerifyScope
from tests.native_view import skip_unless_native
from verifiers.runner import (
    KILLS_ALL,
    PreparedState,
    Replay,
    native_usr_places,
    verifier_tar,
    verify_prepared,
    verify_state,
)
from verifiers.tamper import FIXED_PATH, VERIFIER_DIR_PREFIX

from .sumtask import SPEC, make_verifier, sound_verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]

FULL = SPEC.model_copy(update={"verify_scope": "full-state"})
MARK = "envfactory-solver-bg-7f3a"
LIVE = "pgrep -f '[e]nvfactory-solver-bg-7f3a'"  # the bracket keeps pgrep's own shell out


@pytest.fixture(scope="module")
def solver_state(docker_engine, sum_image):  # type: ignore[no-untyped-def]
    """A committed solver state: correct outputs, a background process still running, a
    forged reward file, a pre-planted guess at the verifier directory."""
    with docker_engine.sandbox(sum_image, purpose=Purpose.TEST) as box:
        for step in SPEC.reference_solution:
            assert box.exec(step.script, workdir="/workspace").ok
        box.exec(f"setsid nohup bash -c 'exec -a {MARK} sleep 1000' >/dev/null 2>&1 &")
        box.exec(
            "mkdir -p /logs/verifier /run/envfactory-verifier-guess && echo 1 > /logs/verifier/reward.txt"
            " && echo 'exit 0' > /run/envfactory-verifier-guess/test.sh"
        )
        assert box.exec(LIVE).ok
        ref = box.snapshot(StateKind.SOLVER, label="solver")
    yield ref
    docker_engine.remove_image(ref.image)


def _verify(engine, image, state, spec, verifier, files):  # type: ignore[no-untyped-def]
    return verify_state(
        engine,
        state_image=state.image,
        pristine_image=image,
        spec=spec,
        verifier=verifier,
        files=files,
        state_diff=state.diff,
    )


@pytest.mark.parametrize("spec", [SPEC, FULL], ids=["workspace", "full-state"])
def test_no_solver_process_survives_into_verification(
    docker_engine, sum_image, solver_state, files, spec
):  # type: ignore[no-untyped-def]
    clean = spec.model_copy(update={"workspace_paths": ("/workspace", "/logs", "/run")})
    v = make_verifier(files, f"! {LIVE} && test -s /workspace/out/total.txt")
    assert _verify(docker_engine, sum_image, solver_state, clean, v, files).reward == 1


@pytest.mark.parametrize("spec", [SPEC, FULL], ids=["workspace", "full-state"])
def test_a_reward_file_written_by_the_solver_does_not_count(
    docker_engine, sum_image, solver_state, files, spec
):  # type: ignore[no-untyped-def]
    v = make_verifier(files, "echo checking; exit 1")
    res = _verify(docker_engine, sum_image, solver_state, spec, v, files)
    assert (res.reward, res.exit_code) == (0, None if spec is FULL else 1)


def test_the_verifier_directory_is_fresh_random_and_absent_from_the_solver_state(
    docker_engine, sum_image, solver_state, files
):  # type: ignore[no-untyped-def]
    v = make_verifier(files, 'echo "$VERIFIER_DIR"; ls -A "$VERIFIER_DIR"')
    seen = [
        _verify(docker_engine, sum_image, solver_state, SPEC, v, files).stdout.split()
        for _ in range(2)
    ]
    dirs = [s[0] for s in seen]
    assert all(d.startswith(VERIFIER_DIR_PREFIX) for d in dirs) and dirs[0] != dirs[1]
    assert seen[0][1:] == ["pytest.ini", "test_outputs.py"]  # only the verifier's own files
    with docker_engine.sandbox(solver_state.image, purpose=Purpose.TEST) as box:
        assert box.exec(f"ls -d {dirs[0]} {dirs[1]}").exit_code != 0


def test_the_entry_runs_with_a_clean_environment_and_the_fixed_path(
    docker_engine, sum_image, files
):  # type: ignore[no-untyped-def]
    v = make_verifier(
        files,
        f'test "$PATH" = "{FIXED_PATH}" && test -z "$PIP_CERT$ENVFACTORY_EXEC_ID$PYTHONUNBUFFERED" && env',
    )
    res = verify_state(
        docker_engine,
        state_image=sum_image,
        pristine_image=sum_image,
        spec=SPEC,
        verifier=v,
        files=files,
    )
    assert res.reward == 1, res.stdout + res.stderr
    assert sorted(line.split("=")[0] for line in res.stdout.split()) == [
        "HOME",
        "LANG",
        "LC_ALL",
        "PATH",
        "PWD",
        "VERIFIER_DIR",
    ]


def test_a_timeout_is_reward_zero(docker_engine, sum_image, files):  # type: ignore[no-untyped-def]
    v = make_verifier(files, "sleep 30; exit 0", timeout_s=2)
    res = verify_state(
        docker_engine,
        state_image=sum_image,
        pristine_image=sum_image,
        spec=SPEC,
        verifier=v,
        files=files,
    )
    assert (res.reward, res.timed_out) == (0, True)
    assert res.command_s < 15


def test_a_missing_command_is_reward_zero(docker_engine, sum_image, files):  # type: ignore[no-untyped-def]
    v = make_verifier(files, "no-such-command-envfactory")
    res = verify_state(
        docker_engine,
        state_image=sum_image,
        pristine_image=sum_image,
        spec=SPEC,
        verifier=v,
        files=files,
    )
    assert (res.reward, res.exit_code) == (0, 127)


def test_the_sound_verifier_accepts_the_solved_state_and_rejects_the_pristine_one(
    docker_engine, sum_image, solver_state, files
):  # type: ignore[no-untyped-def]
    v = sound_verifier(files)
    assert _verify(docker_engine, sum_image, solver_state, SPEC, v, files).reward == 1
    res = verify_state(
        docker_engine,
        state_image=sum_image,
        pristine_image=sum_image,
        spec=SPEC,
        verifier=v,
        files=files,
    )
    assert res.reward == 0 and res.exit_code == 1


@pytest.fixture(scope="module")
def hijacked_state(docker_engine, sum_image):  # type: ignore[no-untyped-def]
    """Wrong outputs, and python3 in /usr/local/bin replaced by `exit 0`."""
    with docker_engine.sandbox(sum_image, purpose=Purpose.TEST) as box:
        box.exec(
            "mkdir -p out && echo 1 > out/total.txt && echo 1 > out/count.txt", workdir="/workspace"
        )
        box.exec(
            "rm /usr/local/bin/python3 && printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/python3 && chmod +x /usr/local/bin/python3"
        )
        ref = box.snapshot(StateKind.SOLVER, label="hijack")
    yield ref
    docker_engine.remove_image(ref.image)


def test_workspace_scope_verifies_with_the_pristine_interpreter(
    docker_engine, sum_image, hijacked_state, files
):  # type: ignore[no-untyped-def]
    res = _verify(docker_engine, sum_image, hijacked_state, SPEC, sound_verifier(files), files)
    assert res.reward == 0 and res.exit_code == 1
    assert "/usr/local/bin/python3" in {t.path for t in res.tamper}


@pytest.mark.parametrize("with_diff", [True, False], ids=["recorded-diff", "computed-diff"])
def test_full_state_scope_turns_tamper_evidence_into_reward_zero(
    docker_engine, sum_image, hijacked_state, files, with_diff
):  # type: ignore[no-untyped-def]
    state = hijacked_state if with_diff else hijacked_state.model_copy(update={"diff": ()})
    res = verify_state(
        docker_engine,
        state_image=state.image,
        pristine_image=sum_image,
        spec=FULL,
        verifier=sound_verifier(files),
        files=files,
        state_diff=state.diff or None,
    )
    assert res.reward == 0
    assert "/usr/local/bin/python3" in {t.path for t in res.tamper}


def test_a_workspace_too_big_for_the_exec_arguments_is_copied_by_archive(
    docker_engine, sum_image, files
):  # type: ignore[no-untyped-def]
    with docker_engine.sandbox(sum_image, purpose=Purpose.TEST) as box:
        for step in SPEC.reference_solution:
            assert box.exec(step.script, workdir="/workspace").ok
        assert box.exec("head -c 3000000 /dev/urandom > /workspace/big.bin").ok
        ref = box.snapshot(StateKind.SOLVER, label="big")
    try:
        v = make_verifier(
            files,
            "test $(wc -c < /workspace/big.bin) = 3000000 && test -s /workspace/out/count.txt",
        )
        assert _verify(docker_engine, sum_image, ref, SPEC, v, files).reward == 1
    finally:
        docker_engine.remove_image(ref.image)


@pytest.mark.parametrize("ended", [True, False])
def test_a_harbor_replay_ends_what_it_left_running_before_the_verifier_runs(
    docker_engine, sum_image, files, ended
) -> None:  # type: ignore[no-untyped-def]
    # The kill entry runs in the same exec as the entry before it: a writer the probe left
    # behind must be dead before the verifier starts (the control, without the kill entry,
    # shows the writer would reach the verifier).
    writer = Replay(
        ("/bin/sh", "-c", "(sleep 1; echo late > /workspace/late.txt) >/dev/null 2>&1 &"), "/"
    )
    replay = (writer, KILLS_ALL) if ended else (writer,)
    prepared = PreparedState(sum_image, VerifyScope.FULL_STATE, replay=replay, semantics="harbor")
    v = make_verifier(files, "sleep 2.5; test ! -e /workspace/late.txt")
    res = verify_prepared(
        docker_engine, prepared, spec=SPEC, verifier=v, verifier_files=verifier_tar(v, files)
    )
    assert res.reward == (1 if ended else 0)


def test_an_image_without_base64_gets_the_verifier_by_archive(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    # The small-state path unpacks the files from the exec's arguments with base64 and tar;
    # an image lacking one gets them by the engine's archive instead, and still verifies.
    with docker_engine.sandbox(sum_image, purpose=Purpose.TEST) as box:
        assert box.exec("rm -f /usr/bin/base64 && ! command -v base64").ok
        ref = box.snapshot(StateKind.SOLVER, label="no-base64")
    try:
        v = make_verifier(files, "test -s test_outputs.py && test -d /workspace/data")
        res = verify_prepared(
            docker_engine,
            PreparedState(ref.image, VerifyScope.WORKSPACE),
            spec=SPEC,
            verifier=v,
            verifier_files=verifier_tar(v, files),
        )
        assert res.reward == 1, (res.stderr, res.notes)
    finally:
        docker_engine.remove_image(ref.image)


@pytest.mark.parametrize("mount_path", ["/tests", "/workspace/tests"])
def test_the_verifier_directory_holds_the_verifiers_files_alone_wherever_it_is_mounted(
    docker_engine, sum_image, files, mount_path
) -> None:  # type: ignore[no-untyped-def]
    # /tests is unpacked in place beside the workspace; /workspace/tests lies inside the
    # workspace, whose own tests/ the state brings: placed after it, the verifier's
    # files replace it. Either way the reward directory starts empty.
    with docker_engine.sandbox(sum_image, purpose=Purpose.TEST) as box:
        assert box.exec(
            f"mkdir -p {mount_path} /logs/verifier && echo planted > {mount_path}/planted.py"
            " && echo 1 > /logs/verifier/reward.txt"
        ).ok
        ref = box.snapshot(StateKind.SOLVER, label="planted")
    try:
        v = make_verifier(
            files,
            'test "$(ls -A | sort | tr "\\n" " ")" = "pytest.ini test_outputs.py " '
            "&& test -s /workspace/data/nums.txt && ! ls -A /logs/verifier | grep -q .",
        ).model_copy(update={"mount_path": mount_path})
        res = _verify(docker_engine, sum_image, ref, SPEC, v, files)
        assert res.reward == 1, (res.stdout, res.stderr, res.notes)
    finally:
        docker_engine.remove_image(ref.image)


def test_workspace_verifications_read_usr_through_kernel_overlays_full_state_ones_do_not(
    docker_engine, sum_image, solver_state, files
):  # type: ignore[no-untyped-def]
    """sandboxes/native_usr.py: only where nothing reads the container's writable layer."""
    skip_unless_native(docker_engine)
    native = (
        "grep -q ' /usr/local overlay ' /proc/mounts && grep -q ' /usr/lib overlay ' /proc/mounts"
    )
    paths = {"workspace_paths": ("/workspace", "/logs", "/run")}
    for spec, expected in ((SPEC, 1), (FULL, 0)):
        v = make_verifier(files, native)
        res = _verify(
            docker_engine, sum_image, solver_state, spec.model_copy(update=paths), v, files
        )
        assert (res.reward, res.notes) == (expected, ()), res


def test_a_harbor_row_reads_usr_through_kernel_overlays_and_its_verifier_sees_what_the_replay_wrote_there(
    docker_engine, sum_image, files
):  # type: ignore[no-untyped-def]
    """Harbor's runtime: the recipe runs in the verification's own container, so what it
    writes under /usr/local or /usr/lib is the state the verifier judges (and only in
    that container: the next row starts from the image's files)."""
    skip_unless_native(docker_engine)
    plant = Replay(
        (
            "/bin/sh",
            "-c",
            "printf '#!/bin/sh\\necho planted\\n' > /usr/local/bin/tool && chmod 755 "
            "/usr/local/bin/tool && echo lib > /usr/lib/envfactory-planted.txt",
        ),
        "/",
    )
    check = make_verifier(
        files,
        "grep -q ' /usr/local overlay ' /proc/mounts && grep -q ' /usr/lib overlay ' /proc/mounts"
        ' && test "$(/usr/local/bin/tool)" = planted'
        ' && test "$(cat /usr/lib/envfactory-planted.txt)" = lib',
    )
    absent = make_verifier(
        files, "! test -e /usr/local/bin/tool && ! test -e /usr/lib/envfactory-planted.txt"
    )
    for recipe, v in (((plant,), check), ((), absent)):
        prepared = PreparedState(
            sum_image, VerifyScope.FULL_STATE, replay=recipe, semantics="harbor"
        )
        res = verify_prepared(
            docker_engine, prepared, spec=SPEC, verifier=v, verifier_files=verifier_tar(v, files)
        )
        assert (res.reward, res.notes) == (1, ()), res
    # a verifier mounted under /usr/local keeps the storage driver's view (copied in there)
    v = make_verifier(files, "! grep -q ' /usr/local overlay ' /proc/mounts")
    v = v.model_copy(update={"mount_path": "/usr/local/share/tests"})
    prepared = PreparedState(sum_image, VerifyScope.FULL_STATE, replay=(), semantics="harbor")
    res = verify_prepared(
        docker_engine, prepared, spec=SPEC, verifier=v, verifier_files=verifier_tar(v, files)
    )
    assert res.reward == 1, res


def test_no_kernel_overlay_where_the_runner_copies_something_in(
    docker_engine, sum_image, solver_state, files
):  # type: ignore[no-untyped-def]
    """A workspace (or verifier, or reward) directory under /usr/local or /usr/lib, or
    over them, keeps the storage driver's view: what is copied in moves as without it."""
    v = make_verifier(files, "! grep -q ' /usr/local overlay ' /proc/mounts")
    for paths in (("/workspace", "/usr/local/share/ws"), ("/workspace", "/usr/local")):
        spec = SPEC.model_copy(update={"workspace_paths": paths})
        assert not native_usr_places(spec, v)
        assert _verify(docker_engine, sum_image, solver_state, spec, v, files).reward == 1
    for where in ({"mount_path": "/usr/lib/tests"}, {"reward_dir": "/usr/local/reward"}):
        assert not native_usr_places(SPEC, v.model_copy(update=where))
    assert native_usr_places(SPEC.model_copy(update={"workspace_paths": ("/usr/libexec",)}), v)
