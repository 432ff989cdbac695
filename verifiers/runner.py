"""The verifier runner: turns a saved state into a binary reward nobody but the runner decides.

Invariants (DESIGN.md, "Invariants of a trustworthy reward"):

1. Reward is 1 iff this process observed exit status 0 of the verifier's entry command,
   within its timeout. No file, output line or marker the solver could write is read.
2. No solver process survives: every verification runs in a *fresh* container started
   from an image (an image holds a filesystem, never a process); a state that is
   re-created by replaying its recipe is restarted before verification.
3. The verifier's files are copied in only now, into a random directory under
   ``/run/envfactory-verifier-`` that no image contains; the solver cannot have seen it.
4. The entry command runs under ``env -i`` with a fixed PATH, ``/bin/sh`` without
   profile files, from the verifier directory, with a hard timeout.
5. Scope ``workspace``: the container starts from the *pristine* environment image and
   only the task's declared workspace paths are copied in from the state, so
   interpreters, libraries and system files are the environment's own. Scope
   ``full-state``: the container holds the state itself and any tamper evidence
   (see `verifiers.tamper`) makes the reward 0 — the verifier is then not even run.

6. Harbor's reward contract (`Verifier.reward_dir`): just before the entry starts, the
   runner empties that directory (root-owned) in the fresh container; after the entry has
   exited, the runner's own shell (the entry's parent, in the same exec) kills every other
   process in the container and only then reads ``reward.json``, else ``reward.txt``, printing
   it after a marker: the last marker in the output is the runner's, since every other
   writer is dead by then, read with shell builtins only. When the command ends without
   it (output cut at the cap, setup failed), the file is read from the stopped container
   (a link is not followed), or, in an exec'd verification, by a second exec of the
   runner's own; an output cut at the cap is reward 0 whatever the file says. Reward 1 iff
   that value is 1; the exit status is recorded beside it and a disagreement is noted.
7. Semantics ``harbor`` (`PreparedState.semantics`): the runner reproduces the solver's
   own container instead — the state's recipe replayed with no restart (its processes
   live on), the verifier merged into `Verifier.mount_path` over whatever is there, the
   reward directory as the state left it but for ``reward.json`` / ``reward.txt``, which
   Harbor removes before each verification, no tamper veto. Gates use it to show what a
   verifier is worth under Harbor's runtime; envfactory never rewards a solver that way.
8. A sandbox that cannot run the verification at all (`SandboxBroken`: the runtime never
   started the command, the container died) gives no reward — not a 0 — and the error
   propagates: it is the engine's failure, and a 0 would *pass* every check that expects
   0 (no-op, probes). The one exception is the disk quota: writing past it is the
   state's or the verifier's doing, so it is reward 0 (`disk_exceeded`). Processes the
   entry leaves behind can exhaust the pids before the reward file is read: the runner
   then restarts the container (every process ends, files stay) and reads it again.

Cost: one verification is one container whose own command (`SandboxEngine.run`, no
exec: one saves a runtime process, a seccomp filter and three engine calls, ~45 ms of
CPU here) unpacks the workspace and verifier files (staged in a single tar, passed in
its arguments), swaps the workspace in, runs the entry command and reads the reward
file; a harbor row's replay runs first in the same command
(`verify_script.replay_lines`). When the command ends before its reward tail (output
cut, timeout), the file is read from the stopped container: every process ended with it. Two cases go by exec into a started
container (`_verify_in`, which a standby can start ahead of demand): a full-state recipe,
replayed then restarted and listed before the verifier runs, and an image without base64
or tar, or files too large for the arguments (one `put_archive`). Removal is left to the
caller's `remove` hook (gates do it in the background).
`prepare_state` extracts what a state contributes once, so gates can verify it many
times, concurrently.

This module is the front door: `verify_prepared` / `verify_state`, `VerifyResult`, and the
choice between one-shot and exec'd verification. The rest lives by concern, and the names
other modules use are re-exported here:

- `verifiers.prepare`: `PreparedState`, `Replay`, `prepare_state`, the native-/usr policy,
  extracting a state's workspace, `verifier_tar`;
- `verifiers.verify_script`: the setup/verification shell script and the marker lines
  it prints, generated and parsed in one place;
- `verifiers.reward_file`: Harbor's reward-file protocol (reading and scoring the file).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence

from envfactory.core.errors import SandboxBroken, SandboxError
from envfactory.core.models import (
    EnvironmentSpec,
    ExecResult,
    PathChange,
    Purpose,
    Verifier,
    VerifyScope,
)
from envfactory.core.models.base import Model
from sandboxes.protocol import Sandbox, SandboxEngine

# Names other modules import from here, re-exported (`X as X`) so callers keep one door.
from .prepare import KILLS_ALL as KILLS_ALL
from .prepare import FileSource as FileSource
from .prepare import PreparedState as PreparedState
from .prepare import Replay as Replay
from .prepare import archive_root as archive_root
from .prepare import extract_workspace as extract_workspace
from .prepare import native_usr as native_usr
from .prepare import native_usr_places as native_usr_places
from .prepare import native_usr_workspace as native_usr_workspace
from .prepare import prepare_state as prepare_state
from .prepare import verifier_tar as verifier_tar
from .prepare import workspace_from as workspace_from
from .reward_file import (
    file_value,
    read_reward_file,
    reward_from_file,
    rewarded,
    stopped_reward_file,
)
from .statediff import live_diff, pristine_listing
from .tamper import VERIFIER_DIR_PREFIX, tamper_changes
from .verify_script import (
    STAGE_PREFIX,
    inline_chunks,
    inline_unavailable,
    replay_lines,
    replay_then_kill,
    setup_failed,
    split_logs,
    staged_tar,
    verification_argv,
)

Remover = Callable[[Sandbox], None]
#: images found without base64 or tar: their verifications go by exec and `put_archive`
_NO_INLINE_IMAGES: set[str] = set()


class VerifyResult(Model):
    reward: int  # 0 or 1, decided only by the observed exit status
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0  # the whole verification: container start to reward
    command_s: float = 0.0  # the exec that ran the entry command
    timed_out: bool = False
    #: the verification wrote past the sandbox's disk quota (the state's or the verifier's
    #: doing, never the engine's): reward 0, like a timeout
    disk_exceeded: bool = False
    tamper: tuple[PathChange, ...] = ()
    notes: tuple[str, ...] = ()  # why a reward was forced to 0, etc.
    reward_file: str | None = None  # what the reward file held (Harbor's contract)
    #: the number the reward file held, graded or not, as Harbor reads it (None: no
    #: reward directory, no file, or one Harbor cannot read); `reward` stays binary
    value: float | None = None
    #: the other files the verifier left in its reward directory, as the tail printed them
    #: (``=== PATH`` and at most 1 KiB each: `verify_script.print_logs`)
    logs: str | None = None
    #: what a probe's planted code wrote to `PreparedState.premise_file` during this
    #: verification (None: nothing, or no file was asked for): the premise's evidence
    premise: str | None = None


def verify_state(
    engine: SandboxEngine,
    *,
    state_image: str,
    pristine_image: str,
    spec: EnvironmentSpec,
    verifier: Verifier,
    files: FileSource,
    state_diff: Sequence[PathChange] | None = None,
) -> VerifyResult:
    """Verify one saved state: the whole runner in one call (see the module docstring)."""
    prepared = prepare_state(
        engine,
        state_image=state_image,
        pristine_image=pristine_image,
        spec=spec,
        state_diff=state_diff,
    )
    return verify_prepared(
        engine, prepared, spec=spec, verifier=verifier, verifier_files=verifier_tar(verifier, files)
    )


def verify_prepared(
    engine: SandboxEngine,
    prepared: PreparedState,
    *,
    spec: EnvironmentSpec,
    verifier: Verifier,
    verifier_files: dict[str, tuple[bytes, int]],
    remove: Remover | None = None,
) -> VerifyResult:
    """One verification of a prepared state, in its own fresh container."""
    t0 = time.monotonic()
    harbor = prepared.semantics == "harbor"
    if not harbor and prepared.scope == VerifyScope.FULL_STATE:
        if not prepared.tamper_known:
            return _zero(t0, prepared, "full-state scope: tamper evidence unknown, reward is 0")
        if prepared.tamper:
            why = "full-state scope: tamper evidence present, reward is 0 (verifier not run)"
            return _zero(t0, prepared, why)
    if prepared.replay and not harbor:
        pristine_listing(engine, prepared.image, spec)  # never while holding a sandbox slot
    # Harbor's runtime is the solver's own container: the replayed recipe (and the tests,
    # which download their tools there) get the network the task declares.
    network = spec.limits.network if harbor else False
    # fresh services for every verification: nothing of the solver's survives in them
    if one_shot(prepared) and prepared.image not in _NO_INLINE_IMAGES:
        once = _verify_once(engine, prepared, spec, verifier, verifier_files, t0, network, remove)
        if once is not None:
            return once
    box = engine.start(
        prepared.image,
        limits=spec.limits,
        purpose=Purpose.VERIFY,
        network=network,
        services=spec.services,
        native_usr=native_usr(prepared, spec, verifier),
    )
    try:
        return _verify_in(box, engine, prepared, spec, verifier, verifier_files, t0)
    except SandboxBroken as exc:
        if exc.reason != "disk_exceeded":
            raise
        return _zero(
            t0,
            prepared,
            f"the verification wrote past the sandbox's disk quota "
            f"({spec.limits.disk_mb} MiB): reward 0",
            disk_exceeded=True,
        )
    finally:
        (remove or _remove_now)(box)


def one_shot(prepared: PreparedState) -> bool:
    """Whether a verification of `prepared` runs as its container's own command
    (`SandboxEngine.run`): all of them but a replayed state that is restarted and listed
    before the verifier runs (envfactory's full-state recipes)."""
    return not prepared.replay or prepared.semantics == "harbor"


def _verify_once(
    engine: SandboxEngine,
    prepared: PreparedState,
    spec: EnvironmentSpec,
    verifier: Verifier,
    verifier_files: dict[str, tuple[bytes, int]],
    t0: float,
    network: bool,
    remove: Remover | None,
) -> VerifyResult | None:
    """The verification as one container's own command: the staged tar in its arguments,
    a harbor row's replay first. None when the image cannot unpack an inline tar (no
    base64 or tar, or too much to stage): the caller verifies by exec instead."""
    vdir, stage = _places(verifier)
    chunks = inline_chunks(staged_tar(prepared, stage, verifier_files))
    if chunks is None:
        return None
    replay, replay_s = replay_lines(prepared.replay, spec)
    res, box = engine.run(
        prepared.image,
        verification_argv(prepared, verifier, vdir, stage, chunks, before=replay),
        limits=spec.limits,
        purpose=Purpose.VERIFY,
        network=network,
        services=spec.services,
        native_usr=native_usr(prepared, spec, verifier),
        timeout=replay_s + verifier.timeout_s + 15,
    )
    try:
        if inline_unavailable(res):
            _NO_INLINE_IMAGES.add(prepared.image)
            return None
        # ended before its tail: every process has ended with the container
        res, reward_file = rewarded(res, verifier, lambda d: stopped_reward_file(box, d))
        out = _result(t0, prepared, verifier, res, res.duration_s, reward_file)
        return _with_premise(out, box, prepared)
    finally:
        (remove or _remove_now)(box)


def _verify_in(
    box: Sandbox,
    engine: SandboxEngine,
    prepared: PreparedState,
    spec: EnvironmentSpec,
    verifier: Verifier,
    verifier_files: dict[str, tuple[bytes, int]],
    t0: float,
) -> VerifyResult:
    """The verification proper, in the fresh container `box`."""
    harbor = prepared.semantics == "harbor"
    if prepared.replay:
        tamper = replay_state(engine, box, spec, prepared)
        if not harbor and (tamper is None or tamper):
            why = "replayed state: tamper evidence " + ("unknown" if tamper is None else "present")
            return _zero(t0, prepared, f"full-state scope: {why}, reward is 0 (verifier not run)")
    vdir, stage = _places(verifier)
    t1 = time.monotonic()
    res = _stage_and_run(box, prepared, verifier, vdir, stage, verifier_files)
    command_s = time.monotonic() - t1
    # the exec ended before its tail (cut output, setup failure, timeout): an exec of ours
    res, reward_file = rewarded(res, verifier, lambda d: read_reward_file(box, d))
    out = _result(t0, prepared, verifier, res, command_s, reward_file)
    return _with_premise(out, box, prepared)


def _places(verifier: Verifier) -> tuple[str, str]:
    """The verifier's directory (a fresh random one unless it has a mount path) and the
    staging directory, both named for this verification."""
    token = secrets.token_hex(8)
    return verifier.mount_path or VERIFIER_DIR_PREFIX + token, STAGE_PREFIX + token


def _result(
    t0: float,
    prepared: PreparedState,
    verifier: Verifier,
    res: ExecResult,
    command_s: float,
    reward_file: str | None,
) -> VerifyResult:
    notes = list(prepared.notes)
    res, logs = split_logs(res) if verifier.reward_dir else (res, None)
    if setup_failed(res):
        notes.append("setting up the verification container failed: " + res.stderr.strip()[-300:])
    timed_out = res.timed_out or (res.exit_code == 137 and command_s >= verifier.timeout_s)
    reward = int(res.exit_code == 0 and not timed_out and not res.disk_exceeded)
    if res.disk_exceeded:
        notes.append("the verification wrote past the sandbox's disk quota: reward 0")
    elif verifier.reward_dir:
        reward, why = reward_from_file(reward_file, res.exit_code, timed_out, verifier.reward_dir)
        notes += why
    return VerifyResult(
        reward=reward,
        exit_code=res.exit_code,
        stdout=res.stdout,
        stderr=res.stderr,
        duration_s=time.monotonic() - t0,
        command_s=command_s,
        timed_out=timed_out,
        disk_exceeded=res.disk_exceeded,
        tamper=prepared.tamper,
        notes=tuple(notes),
        reward_file=reward_file,
        value=file_value(reward_file) if verifier.reward_dir else None,
        logs=logs,
    )


#: at most this much of a premise file is read back
PREMISE_MAX_BYTES = 4096


def _with_premise(out: VerifyResult, box: Sandbox, prepared: PreparedState) -> VerifyResult:
    """`out` with what the probe's planted code wrote to its premise file during the
    verification (the container's processes have ended or are the verifier's own)."""
    if prepared.premise_file is None:
        return out
    try:
        data = box.read_file(prepared.premise_file, max_bytes=PREMISE_MAX_BYTES)
    except (SandboxError, FileNotFoundError):  # absent: the premise never held
        return out
    return out.model_copy(update={"premise": data.decode("utf-8", "replace")})


def replay_state(
    engine: SandboxEngine, box: Sandbox, spec: EnvironmentSpec, prepared: PreparedState
) -> tuple[PathChange, ...] | None:
    """Re-create a gate state by its recipe, end every process it left (restart), and
    return the tamper evidence of exactly this filesystem (None: unknown)."""
    replay = prepared.replay
    while replay:
        entry, ends_all = replay[0], replay[1:2] == (KILLS_ALL,)
        argv = list(entry.argv)
        if ends_all:  # one exec: the entry, then the kill in the exec's own shell
            argv = ["/bin/sh", "-c", replay_then_kill(argv)]
        res = box.exec(argv, timeout=spec.limits.exec_timeout_s, workdir=entry.workdir, user="root")
        replay = replay[2:] if ends_all and not res.timed_out else replay[1:]
    if prepared.semantics == "harbor":
        return ()  # the solver's own container: its processes live on, nothing is vetoed
    box.restart()
    diff = live_diff(engine, box, prepared.image, spec)
    if diff is None:
        return None
    return tamper_changes(diff, spec.workspace_paths, expected=prepared.expected)


def _stage_and_run(
    box: Sandbox,
    prepared: PreparedState,
    verifier: Verifier,
    vdir: str,
    stage: str,
    verifier_files: dict[str, tuple[bytes, int]],
) -> ExecResult:
    """Get the staged tar in and run the entry, in one exec: the tar rides in the exec's
    own arguments when small and the image has base64 and tar (no `put_archive`, which
    costs a process in the daemon), else the engine's archive brings it in first."""
    staged = staged_tar(prepared, stage, verifier_files)
    chunks = inline_chunks(staged)
    if chunks is not None:
        res = _run_setup(box, prepared, verifier, vdir, stage, chunks)
        if not inline_unavailable(res):
            return res
    box.put_archive("/", staged)
    return _run_setup(box, prepared, verifier, vdir, stage, None)


def _run_setup(
    box: Sandbox,
    prepared: PreparedState,
    verifier: Verifier,
    vdir: str,
    stage: str,
    chunks: list[str] | None,
) -> ExecResult:
    argv = verification_argv(prepared, verifier, vdir, stage, chunks)
    # The entry has its own `timeout` inside; the exec's is a backstop for the setup.
    return box.exec(argv, timeout=verifier.timeout_s + 15, workdir="/", user="root")


def _zero(
    t0: float, prepared: PreparedState, why: str, *, disk_exceeded: bool = False
) -> VerifyResult:
    return VerifyResult(
        reward=0,
        exit_code=None,
        duration_s=time.monotonic() - t0,
        tamper=prepared.tamper,
        notes=(*prepared.notes, why),
        disk_exceeded=disk_exceeded,
    )


def _remove_now(box: Sandbox) -> None:
    box.remove()
