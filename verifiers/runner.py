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
   process in the container and only then reads ``reward.txt`` / ``reward.json``, printing
   it after a marker: the last marker in the output is the runner's, since every other
   writer is dead by then, read with shell builtins only. When the command ends without
   it (output cut at the cap, setup failed), the file is read from the stopped container
   (a link is not followed), or, in an exec'd verification, by a second exec of the
   runner's own; an output cut at the cap is reward 0 whatever the file says. Reward 1 iff
   that value is 1; the exit status is recorded beside it and a disagreement is noted.
7. Semantics ``harbor`` (`PreparedState.semantics`): the runner reproduces the solver's
   own container instead — the state's recipe replayed with no restart (its processes
   live on), the verifier merged into `Verifier.mount_path` over whatever is there, the
   reward directory as the state left it, no tamper veto. Gates use it to show what a
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
file; a harbor row's replay runs first in the same command (`_replay_lines`). When the
command ends before its reward tail (output cut, timeout), the file is read from the
stopped container: every process ended with it. Two cases go by exec into a started
container (`_verify_in`, which a standby can start ahead of demand): a full-state recipe,
replayed then restarted and listed before the verifier runs, and an image without base64
or tar, or files too large for the arguments (one `put_archive`). Removal is left to the
caller's `remove` hook (gates do it in the background).
`prepare_state` extracts what a state contributes once, so gates can verify it many
times, concurrently.
"""

from __future__ import annotations

import base64
import json
import posixpath
import secrets
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from envfactory.core.errors import SandboxBroken, SandboxError, SandboxFileNotFound
from envfactory.core.models import (
    EnvironmentSpec,
    ExecResult,
    PathChange,
    Purpose,
    Semantics,
    Verifier,
    VerifyScope,
)
from envfactory.core.models.base import Model
from sandboxes.execution import KILL_GRACE_S, wrap_command
from sandboxes.native_usr import TARGETS as NATIVE_TARGETS
from sandboxes.protocol import Sandbox, SandboxEngine

from . import archives
from .processes import KILL_ALL_BUT_INIT, KILL_STRAYS
from .statediff import image_diff, live_diff, pristine_listing
from .tamper import FIXED_PATH, VERIFIER_DIR_PREFIX, tamper_changes

FileSource = Callable[[str], bytes]
Remover = Callable[[Sandbox], None]
_STAGE_PREFIX = "/.envfactory-stage-"  # not under /run: a workspace may be /run
_SETUP_FAILED = 125  # exit status of the setup part; the entry never ran
_NO_INLINE = "envfactory-inline-unavailable"
_ARG_CHUNK = 100_000  # one argument stays under Linux's 128 KiB MAX_ARG_STRLEN
_INLINE_MAX = 1_000_000  # all of them well under ARG_MAX
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


@dataclass(frozen=True)
class Replay:
    """One recipe entry that re-creates a gate state: an argv run as root in `workdir`."""

    argv: tuple[str, ...]
    workdir: str = "/"


#: The recipe entry that ends every process the entries before it left running. Run in
#: the same exec as the entry before it (`_replay`), unless that one timed out.
KILLS_ALL = Replay(argv=("/bin/sh", "-c", KILL_STRAYS), workdir="/")


@dataclass(frozen=True)
class PreparedState:
    """What one state contributes to its verifications, extracted once."""

    image: str  # every verification container starts from this image
    scope: VerifyScope
    workspace: tuple[tuple[str, bytes | None], ...] = ()  # path → its tar (None: absent)
    tamper: tuple[PathChange, ...] = ()
    replay: tuple[Replay, ...] = ()  # re-creates the state on `image` (gate states)
    notes: tuple[str, ...] = ()
    tamper_known: bool = True
    semantics: Semantics = "envfactory"
    #: paths the reference solution itself changes outside the workspace: the task asks
    #: for those changes, so they are never tamper evidence (full-state scope)
    expected: frozenset[str] = frozenset()


def native_usr(prepared: PreparedState, spec: EnvironmentSpec, verifier: Verifier) -> bool:
    """Whether a verification of `prepared` may see the image's /usr/lib and /usr/local
    through the kernel's overlayfs (`sandboxes/native_usr.py`: the same files, cheaper
    lookups): only where nothing reads its container's writable layer and nothing is
    copied in there — workspace scope without a replayed recipe in envfactory's runtime,
    and every harbor row (Harbor's runtime: the recipe replayed in the verification's
    own container, which then verifies; nothing but the reward file is read afterwards,
    and what the replay writes under /usr/lib or /usr/local the verifier sees there)."""
    if prepared.semantics == "harbor":
        return _clear_of_native([verifier.mount_path or "", verifier.reward_dir or ""])
    return (
        prepared.scope == VerifyScope.WORKSPACE
        and not prepared.replay
        and prepared.semantics == "envfactory"
        and native_usr_places(spec, verifier)
    )


def native_usr_places(spec: EnvironmentSpec, verifier: Verifier) -> bool:
    """No workspace path, verifier directory or reward directory overlaps those mount
    points: what the runner copies in moves within one filesystem, as without them."""
    return _clear_of_native([verifier.mount_path or "", verifier.reward_dir or ""]) and (
        native_usr_workspace(spec)
    )


def native_usr_workspace(spec: EnvironmentSpec) -> bool:
    """No workspace path overlaps the kernel-overlay mount points (`sandboxes/native_usr.py`)."""
    return _clear_of_native(spec.workspace_paths)


def _clear_of_native(places: Sequence[str]) -> bool:
    return not any(
        _overlap(posixpath.normpath(p), target) for p in places if p for target in NATIVE_TARGETS
    )


def _overlap(a: str, b: str) -> bool:
    a, b = a.rstrip("/") + "/", b.rstrip("/") + "/"
    return a.startswith(b) or b.startswith(a)


def verifier_tar(verifier: Verifier, files: FileSource) -> dict[str, tuple[bytes, int]]:
    """The verifier's files, {relative path: (bytes, mode)}."""
    return {f.path: (files(f.key), f.mode) for f in verifier.files}


def prepare_state(
    engine: SandboxEngine,
    *,
    state_image: str,
    pristine_image: str,
    spec: EnvironmentSpec,
    state_diff: Sequence[PathChange] | None = None,
) -> PreparedState:
    """Extract a saved state's workspace (scope `workspace`) and its tamper evidence.

    `state_diff` is the state's change list against the pristine image when the caller
    has it (agents record it at snapshot time); without it the runner computes one.
    """
    if state_image == pristine_image:
        state_diff = ()
    elif state_diff is None:
        state_diff = image_diff(engine, state_image, pristine_image, spec)
    known = state_diff is not None
    notes = () if known else ("could not list the state's changes: tamper evidence unknown",)
    tamper = tamper_changes(state_diff or (), spec.workspace_paths)
    if spec.verify_scope == VerifyScope.FULL_STATE:
        return PreparedState(state_image, VerifyScope.FULL_STATE, (), tamper, (), notes, known)
    workspace = (
        extract_workspace(engine, state_image, spec) if state_image != pristine_image else ()
    )
    return PreparedState(
        pristine_image, VerifyScope.WORKSPACE, tuple(workspace), tamper, (), notes, known
    )


def extract_workspace(
    engine: SandboxEngine, image: str, spec: EnvironmentSpec
) -> list[tuple[str, bytes | None]]:
    """Tar each declared workspace path out of a container of `image` (nothing runs in it)."""
    box = engine.start(image, limits=spec.limits, purpose=Purpose.VERIFY_EXTRACT, network=False)
    try:
        return workspace_from(box, spec.workspace_paths)
    finally:
        box.remove()


def workspace_from(box: Sandbox, paths: Sequence[str]) -> list[tuple[str, bytes | None]]:
    """Tar each workspace path out of a sandbox; a path the state lacks is recorded as None."""
    out: list[tuple[str, bytes | None]] = []
    for path in paths:
        try:
            raw = box.get_archive(path)
        except SandboxFileNotFound:
            out.append((path, None))
            continue
        out.append((path, archives.sanitize(raw, root_name=archive_root(path))))
    return out


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
    if (
        not harbor
        and prepared.scope == VerifyScope.FULL_STATE
        and (prepared.tamper or not prepared.tamper_known)
    ):
        why = "full-state scope: tamper evidence present, reward is 0 (verifier not run)"
        return _zero(
            t0,
            prepared,
            why
            if prepared.tamper_known
            else "full-state scope: tamper evidence unknown, reward is 0",
        )
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
    chunks = _inline_chunks(_staged_tar(prepared, stage, verifier_files))
    if chunks is None:
        return None
    replay, replay_s = _replay_lines(prepared.replay, spec)
    script = _setup_script(
        prepared,
        verifier,
        vdir,
        stage,
        verifier.timeout_s,
        inline=True,
        reward_dir=verifier.reward_dir,
        before=replay,
    )
    res, box = engine.run(
        prepared.image,
        ["/bin/sh", "-c", script, "envfactory-verify", verifier.entry, *chunks],
        limits=spec.limits,
        purpose=Purpose.VERIFY,
        network=network,
        services=spec.services,
        native_usr=native_usr(prepared, spec, verifier),
        timeout=replay_s + verifier.timeout_s + 15,
    )
    try:
        if res.exit_code == _SETUP_FAILED and _NO_INLINE in res.stderr:
            _NO_INLINE_IMAGES.add(prepared.image)
            return None
        # ended before its tail: every process has ended with the container
        res, reward_file = _rewarded(res, verifier, lambda d: _stopped_reward_file(box, d))
        return _result(t0, prepared, verifier, res, res.duration_s, reward_file)
    finally:
        (remove or _remove_now)(box)


def _replay_lines(replay: Sequence[Replay], spec: EnvironmentSpec) -> tuple[list[str], float]:
    """A harbor row's recipe as shell lines run before the verification's setup, each
    entry as the exec `_replay` would run it (root, its workdir, the image's environment,
    its own timeout, no input; its output dropped), and the seconds they may take."""
    lines: list[str] = []
    budget = 0.0
    secs = spec.limits.exec_timeout_s
    for entry in replay:
        if entry == KILLS_ALL:  # a shell of its own: its `set --` leaves "$@" alone
            lines.append(f"/bin/sh -c {_q(KILL_STRAYS)}")
            continue
        run = shlex.join(wrap_command(list(entry.argv), secs))
        lines.append(f"( cd -- {_q(entry.workdir)} && exec {run} ) </dev/null >/dev/null 2>&1")
        budget += secs + KILL_GRACE_S
    return lines, budget


def _stopped_reward_file(box: Sandbox, reward_dir: str) -> str | None:
    """The reward file of a container whose processes have all ended, read by the engine:
    as the tail prints it ("name\nbody", at most 4 KiB), None when there is no regular
    file (a link is not followed)."""
    for name in ("reward.txt", "reward.json"):
        try:
            body = box.read_file(f"{reward_dir.rstrip('/')}/{name}", max_bytes=4096)
        except SandboxError:  # absent, or not a regular file
            continue
        return f"{name}\n{body.decode('utf-8', 'replace')}"
    return None


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
        tamper = _replay(engine, box, spec, prepared)
        if not harbor and (tamper is None or tamper):
            why = "replayed state: tamper evidence " + ("unknown" if tamper is None else "present")
            return _zero(t0, prepared, f"full-state scope: {why}, reward is 0 (verifier not run)")
    vdir, stage = _places(verifier)
    t1 = time.monotonic()
    res = _stage_and_run(box, prepared, verifier, vdir, stage, verifier_files)
    command_s = time.monotonic() - t1
    # the exec ended before its tail (cut output, setup failure, timeout): an exec of ours
    res, reward_file = _rewarded(res, verifier, lambda d: _read_reward_file(box, d))
    return _result(t0, prepared, verifier, res, command_s, reward_file)


def _places(verifier: Verifier) -> tuple[str, str]:
    """The verifier's directory (a fresh random one unless it has a mount path) and the
    staging directory, both named for this verification."""
    token = secrets.token_hex(8)
    return verifier.mount_path or VERIFIER_DIR_PREFIX + token, _STAGE_PREFIX + token


def _rewarded(
    res: ExecResult, verifier: Verifier, read_again: Callable[[str], str | None]
) -> tuple[ExecResult, str | None]:
    """The verifier's own result and what its reward file held (Harbor's contract): from
    the command's reward tail, else `read_again(reward_dir)` once every process it may
    have left has ended; no file where the verifier has no reward directory."""
    if not verifier.reward_dir or res.disk_exceeded:
        return res, None
    res, reward_file, read = _split_reward_tail(res)
    return res, reward_file if read else read_again(verifier.reward_dir)


def _result(
    t0: float,
    prepared: PreparedState,
    verifier: Verifier,
    res: ExecResult,
    command_s: float,
    reward_file: str | None,
) -> VerifyResult:
    notes = list(prepared.notes)
    if res.exit_code == _SETUP_FAILED and "envfactory-setup-failed" in res.stderr:
        notes.append("setting up the verification container failed: " + res.stderr.strip()[-300:])
    timed_out = res.timed_out or (res.exit_code == 137 and command_s >= verifier.timeout_s)
    reward = int(res.exit_code == 0 and not timed_out and not res.disk_exceeded)
    if res.disk_exceeded:
        notes.append("the verification wrote past the sandbox's disk quota: reward 0")
    elif verifier.reward_dir:
        reward, why = _reward_from_file(reward_file, res.exit_code, timed_out, verifier.reward_dir)
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
    )


_REWARD_MARK = "envfactory-reward-file:"
_NO_REWARD_FILE = "-"  # what the tail names when the directory holds no reward file


def _reward_tail(reward_dir: str, status: str) -> str:
    """Shell that ends every process but itself (and what keeps the container alive), then
    prints the reward marker, the reward file's name and at most 4 KiB of it — or the
    marker and `-` when there is none — and exits with `status`. Printed last, after every
    other writer is dead, so the last marker in the output is this one."""
    d = _q(reward_dir.rstrip("/"))
    return (
        f"{KILL_ALL_BUT_INIT}\n"
        f"for f in {d}/reward.txt {d}/reward.json; do\n"
        f'  [ -f "$f" ] || continue; printf "\\n{_REWARD_MARK}%s\\n" "${{f##*/}}"\n'
        f"  {_READ_BUILTIN}\n"
        f"  exit {status}\n"
        f'done\nprintf "\\n{_REWARD_MARK}{_NO_REWARD_FILE}\\n"; exit {status}'
    )


#: Lines of "$f" up to 4 KiB, with shell builtins only: no fork (what the entry left, a
#: fork bomb, may hold every pid) and no binary the state's programs, run as root by the
#: verifier, could have replaced (a planted /usr/bin/head printed 1: attacker pass,
#: session 11).
_READ_BUILTIN = (
    '{ t=0; while IFS= read -r l || [ -n "$l" ]; do t=$((t + ${#l} + 1)); '
    '[ $t -gt 4096 ] && break; printf \'%s\\n\' "$l"; l=; done < "$f"; }'
)


def _split_reward_tail(res: ExecResult) -> tuple[ExecResult, str | None, bool]:
    """The verifier's own result, what the reward tail read (None: no reward file), and
    whether the tail ran at all (its marker is the last in the output)."""
    cut = res.stdout.rfind("\n" + _REWARD_MARK)
    if cut < 0:
        return res, None, False
    found = res.stdout[cut + 1 + len(_REWARD_MARK) :]
    text = None if found == _NO_REWARD_FILE + "\n" else found
    return res.model_copy(update={"stdout": res.stdout[:cut]}), text, True


def _read_reward_file(box: Sandbox, reward_dir: str) -> str | None:
    """What the reward file says, read by an exec of our own once every process the
    entry may have left is dead: the fallback when the verification's own exec ended
    before its reward tail."""
    argv = ["/bin/sh", "-c", _reward_tail(reward_dir, "0")]
    try:
        res = box.exec(argv, timeout=30, workdir="/", user="root")
    except SandboxBroken as exc:
        if exc.reason == "disk_exceeded":
            raise
        # What the entry left running (e.g. a fork bomb) can leave no pid for our read:
        # a restart ends every process and keeps the files; a second failure is the engine's.
        box.restart()
        res = box.exec(argv, timeout=30, workdir="/", user="root")
    return _split_reward_tail(res)[1] if res.exit_code == 0 else None


def _reward_from_file(
    text: str | None, exit_code: int | None, timed_out: bool, reward_dir: str
) -> tuple[int, list[str]]:
    """Harbor's contract: reward.txt holds a number, reward.json {"reward": number}.
    Binary here: 1 iff the number is exactly 1. Returns (reward, notes)."""
    if timed_out:
        return 0, ["the verifier timed out: reward 0 whatever its reward file says"]
    if exit_code is None:  # cut at the output cap: the verifier may never have written it
        return 0, [
            "the verifier's output passed the cap before it ended: reward 0 whatever "
            "its reward file says (a program it ran could flood the output after "
            "writing the file itself)"
        ]
    if text is None:
        return 0, [f"the verifier wrote no reward file in {reward_dir}: reward 0"]
    name, _, body = text.partition("\n")
    value = _reward_value(name, body)
    if value is None:
        return 0, [f"{reward_dir}/{name} is not a reward ({body.strip()[:80]!r}): reward 0"]
    reward = int(value == 1.0)
    notes = []
    if exit_code != 0 and reward == 1:
        notes.append(
            f"exit status {exit_code} but {name} says {body.strip()[:20]}: "
            f"reward {reward} per the reward file"
        )
    return reward, notes


def _reward_value(name: str, body: str) -> float | None:
    try:
        if name == "reward.json":
            data = json.loads(body)
            raw = data.get("reward") if isinstance(data, dict) else None
            return (
                float(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else None
            )
        return float(body.strip())
    except (ValueError, TypeError):
        return None


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


def _replay(
    engine: SandboxEngine, box: Sandbox, spec: EnvironmentSpec, prepared: PreparedState
) -> tuple[PathChange, ...] | None:
    """Re-create a gate state by its recipe, end every process it left (restart), and
    return the tamper evidence of exactly this filesystem (None: unknown)."""
    replay = prepared.replay
    while replay:
        entry, ends_all = replay[0], replay[1:2] == (KILLS_ALL,)
        argv = list(entry.argv)
        if ends_all:  # one exec: the entry, then the kill in the exec's own shell
            argv = ["/bin/sh", "-c", f"{shlex.join(argv)} </dev/null\n{KILL_STRAYS}"]
        res = box.exec(argv, timeout=spec.limits.exec_timeout_s, workdir=entry.workdir, user="root")
        replay = replay[2:] if ends_all and not res.timed_out else replay[1:]
    if prepared.semantics == "harbor":
        return ()  # the solver's own container: its processes live on, nothing is vetoed
    box.restart()
    diff = live_diff(engine, box, prepared.image, spec)
    if diff is None:
        return None
    return tamper_changes(diff, spec.workspace_paths, expected=prepared.expected)


def _staged_tar(
    prepared: PreparedState, stage: str, verifier_files: dict[str, tuple[bytes, int]]
) -> bytes:
    """One tar for `/`: under the stage dir, the workspace copies (`ws/<i>/`) and the
    verifier (`verifier/`); the setup script moves them into place."""
    root = stage.lstrip("/")
    members = [
        (f"{root}/verifier/{name}", data, mode) for name, (data, mode) in verifier_files.items()
    ]
    trees = [
        (f"{root}/ws/{i}", tar) for i, (_, tar) in enumerate(prepared.workspace) if tar is not None
    ]
    return archives.combine(members, trees, dirs=[(root, 0o700), (f"{root}/verifier", 0o700)])


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
    staged = _staged_tar(prepared, stage, verifier_files)
    chunks = _inline_chunks(staged)
    if chunks is not None:
        res = _run_setup(box, prepared, verifier, vdir, stage, chunks)
        if not (res.exit_code == _SETUP_FAILED and _NO_INLINE in res.stderr):
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
    script = _setup_script(
        prepared,
        verifier,
        vdir,
        stage,
        verifier.timeout_s,
        inline=chunks is not None,
        reward_dir=verifier.reward_dir,
    )
    argv = ["/bin/sh", "-c", script, "envfactory-verify", verifier.entry, *(chunks or [])]
    # The entry has its own `timeout` inside; the exec's is a backstop for the setup.
    return box.exec(argv, timeout=verifier.timeout_s + 15, workdir="/", user="root")


def _inline_chunks(staged: bytes) -> list[str] | None:
    if not staged:
        return None
    text = base64.b64encode(staged).decode()
    if len(text) > _INLINE_MAX:
        return None
    return [text[i : i + _ARG_CHUNK] for i in range(0, len(text), _ARG_CHUNK)]


def _place_verifier(
    prepared: PreparedState, verifier: Verifier, vdir: str, stage: str
) -> list[str]:
    """Shell lines that put the verifier files at `vdir` and prepare the reward directory.

    envfactory semantics: whatever the state holds at `vdir` or in the reward directory is
    removed first. Harbor semantics: the files are copied over what is there (as Harbor's
    upload does) and the reward directory keeps what the state left in it."""
    harbor = prepared.semantics == "harbor"
    src, dst = _q(stage + "/verifier"), _q(vdir)
    rd = _q(verifier.reward_dir) if verifier.reward_dir else None
    if harbor:
        lines = [
            f"mkdir -p -- {dst} && cp -a -- {src}/. {dst}/ && rm -rf -- {_q(stage)} "
            "|| fail 'placing the verifier'"
        ]
        if rd:
            lines.append(
                f"mkdir -p -- {rd} && chown root:root {rd} && chmod 0755 {rd} "
                "|| fail 'preparing the reward directory'"
            )
        return lines
    # Each command is a process started in a fresh container: as few as the order allows.
    # A directory of our own random name cannot be in the state: nothing to remove there.
    lines = [
        *([f"rm -rf -- {dst}"] if verifier.mount_path else []),
        f"{_mkdir_parent(vdir)}mv -- {src} {dst} || fail 'placing the verifier'",
        f"rm -rf -- {_q(stage)} {rd or ''}",
    ]
    if rd:  # created afresh by root: root-owned, and -m sets its mode whatever the umask
        lines.append(f"mkdir -p -m 0755 -- {rd} || fail 'preparing the reward directory'")
    return lines


def _setup_script(
    prepared: PreparedState,
    verifier: Verifier,
    vdir: str,
    stage: str,
    timeout_s: int,
    *,
    inline: bool,
    wrap: str = "",
    reward_dir: str | None = None,
    before: Sequence[str] = (),
) -> str:
    """Unpack the staged files (inline: from "$@"), swap the state's workspace in, place the
    verifier, then exec the entry under a clean environment. Runs as
    `sh -c SCRIPT envfactory-verify ENTRY [CHUNK...]`: the entry is never interpolated.
    `wrap` (shell words, already quoted) goes between the timeout and the clean environment:
    `verifiers.surface` puts its tracer there, so a traced run is staged exactly like a real one.
    With `reward_dir`, the entry runs as a child and the script ends with the reward tail
    (`_reward_tail`), so the reward file is read without a second exec. `before`: lines
    run first, with the image's environment (a harbor row's replay, `_replay_lines`)."""
    lines = [
        *before,
        'fail() { echo envfactory-setup-failed: "$1" >&2; exit 125; }',
        f"PATH={FIXED_PATH}; export PATH; entry=$1; shift",
    ]
    if inline:
        lines.append(
            "command -v base64 >/dev/null 2>&1 && command -v tar >/dev/null 2>&1 || "
            f"{{ echo {_NO_INLINE} >&2; exit 125; }}"
        )
        lines.append(
            "printf %s \"$@\" | base64 -d | tar -x -f - -C / || fail 'unpacking the staged files'"
        )
    for i, (path, tar) in enumerate(prepared.workspace):
        q = _q(path)
        lines.append(f"rm -rf -- {q} || fail 'removing {path}'")
        if tar is not None:
            src = _q(f"{stage}/ws/{i}/{archive_root(path)}")
            lines.append(f"{_mkdir_parent(path)}mv -- {src} {q} || fail 'placing {path}'")
    lines += _place_verifier(prepared, verifier, vdir, stage)
    lines.append(f"cd -- {_q(vdir)} || fail 'no verifier dir'")
    if verifier.cwd:  # the harness's convention; a state without that directory gets `/`
        lines.append(f"cd -- {_q(verifier.cwd)} 2>/dev/null || cd /")
    env = " ".join(
        _q(e)
        for e in (
            f"PATH={FIXED_PATH}",
            "HOME=/root",
            "LANG=C.UTF-8",
            "LC_ALL=C.UTF-8",
            f"VERIFIER_DIR={vdir}",
        )
    )
    run = (
        f"/usr/bin/timeout -s KILL {int(timeout_s)} {wrap + ' ' if wrap else ''}"
        f'/usr/bin/env -i {env} /bin/sh -c "$entry"'
    )
    if reward_dir is None:
        lines.append(f"exec {run}")
    else:  # the entry as a child: this shell then reads the reward file (one exec in all)
        lines += [run, "rc=$?", _reward_tail(reward_dir, "$rc")]
    return "\n".join(lines)


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


def _mkdir_parent(path: str) -> str:
    """`mkdir -p PARENT && ` for a path below a subdirectory; nothing (no process) for a
    path directly under `/`, whose parent always exists."""
    parent = _parent(path)
    return "" if parent == "/" else f"mkdir -p -- {_q(parent)} && "


def _parent(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[0] or "/"


def archive_root(path: str) -> str:
    """The name a path's own archive gives it: its last component."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def _q(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"
