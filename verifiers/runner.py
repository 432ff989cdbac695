"""The verifier runner: turns a saved state into a binary reward nobody but the runner decides.

Invariants (DESIGN.md, "Invariants of a trustworthy reward"):

1. Reward is 1 iff this process observed exit status 0 of the verifier's entry command,
   within its timeout. No file, output line or marker the solver could write is read.
2. No solver process survives: every verification runs in a *fresh* container started
   from a committed image (a commit holds a filesystem, never a process).
3. The verifier's files are copied in only now, into a random directory under
   ``/run/envfactory-verifier-`` that no image contains; the solver cannot have seen it.
4. The entry command runs under ``env -i`` with a fixed PATH, ``/bin/sh`` without
   profile files, from the verifier directory, with a hard timeout.
5. Scope ``workspace``: the container starts from the *pristine* environment image and
   only the task's declared workspace paths are copied in from the state, so
   interpreters, libraries and system files are the environment's own. Scope
   ``full-state``: the container starts from the state itself and any tamper evidence
   (see `verifiers.tamper`) makes the reward 0.

Verification is split in two so gates can amortise: `prepare_state` extracts what a state
contributes once; `verify_prepared` runs one fresh-container verification of it and can
be called many times, concurrently.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from envfactory.core.models import EnvironmentSpec, PathChange, Verifier
from envfactory.core.models.base import Model
from sandboxes.protocol import Sandbox, SandboxEngine

from . import archives
from .statediff import image_diff
from .tamper import FIXED_PATH, VERIFIER_DIR_PREFIX, tamper_changes

FileSource = Callable[[str], bytes]
#: Called with a sandbox to remove; the default removes it at once. Gates pass a
#: background remover so container teardown is off the critical path.
Remover = Callable[[Sandbox], None]


class VerifyResult(Model):
    reward: int  # 0 or 1, decided only by the observed exit status
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0  # the whole verification: container start to reward
    command_s: float = 0.0  # the entry command alone
    timed_out: bool = False
    tamper: tuple[PathChange, ...] = ()
    notes: tuple[str, ...] = ()  # why a reward was forced to 0, etc.


@dataclass(frozen=True)
class PreparedState:
    """What one state contributes to its verifications, extracted once."""

    image: str  # the image every verification container starts from
    scope: str
    workspace: tuple[tuple[str, bytes | None], ...] = ()  # path → tar of it (None: absent)
    tamper: tuple[PathChange, ...] = ()
    notes: tuple[str, ...] = field(default=())


def verifier_tar(verifier: Verifier, files: FileSource) -> bytes:
    """The verifier's files as one tar, modes preserved (paths relative to its dir)."""
    return archives.tar_of({f.path: (files(f.key), f.mode) for f in verifier.files})


def prepare_state(
    engine: SandboxEngine,
    *,
    state_image: str,
    pristine_image: str,
    spec: EnvironmentSpec,
    state_diff: Sequence[PathChange] | None = None,
    workspace: Sequence[tuple[str, bytes | None]] | None = None,
) -> PreparedState:
    """Extract a state's workspace (scope `workspace`) and its tamper evidence.

    `state_diff` is the state's change list against the pristine image, when the caller
    has it (gates and agents record it at snapshot time); without it the runner computes
    one. `workspace` lets a caller that already archived the workspace skip extraction.
    """
    notes: list[str] = []
    if state_diff is None:
        state_diff = (
            () if state_image == pristine_image else image_diff(engine, state_image, pristine_image)
        )
        if state_diff is None:
            notes.append("could not compute the state's changes; tamper evidence unknown")
    tamper = tamper_changes(state_diff or (), spec.workspace_paths)
    if state_diff is None and spec.verify_scope == "full-state":
        # Fail closed: without a diff we cannot rule tampering out.
        tamper = (PathChange(path="<unknown>", kind="C"),)
    if spec.verify_scope == "full-state":
        return PreparedState(state_image, "full-state", (), tamper, tuple(notes))
    if workspace is None:
        workspace = extract_workspace(engine, state_image, spec)
    return PreparedState(pristine_image, "workspace", tuple(workspace), tamper, tuple(notes))


def extract_workspace(
    engine: SandboxEngine, image: str, spec: EnvironmentSpec
) -> list[tuple[str, bytes | None]]:
    """Tar each declared workspace path out of a container of `image` (no process runs)."""
    box = engine.start(image, limits=spec.limits, purpose="verify-extract", network=False)
    try:
        return workspace_from(box, spec.workspace_paths)
    finally:
        box.remove()


def workspace_from(box: Sandbox, paths: Sequence[str]) -> list[tuple[str, bytes | None]]:
    """Tar each workspace path out of a live sandbox; a missing path is recorded as None."""
    out: list[tuple[str, bytes | None]] = []
    for path in paths:
        try:
            raw = box.get_archive(path)
        except Exception as exc:  # noqa: BLE001 — the engine's "no such path" has no common type
            if "404" in str(exc) or "No such" in str(exc) or "not found" in str(exc).lower():
                out.append((path, None))
                continue
            raise
        out.append((path, archives.sanitize(raw, root_name=path.rstrip("/").rsplit("/", 1)[-1])))
    return out


def verify_prepared(
    engine: SandboxEngine,
    prepared: PreparedState,
    *,
    spec: EnvironmentSpec,
    verifier: Verifier,
    verifier_files: bytes,
    remove: Remover | None = None,
) -> VerifyResult:
    """One verification of a prepared state, in its own fresh container."""
    t0 = time.monotonic()
    box = engine.start(prepared.image, limits=spec.limits, purpose="verify", network=False)
    try:
        vdir = VERIFIER_DIR_PREFIX + secrets.token_hex(8)
        setup = _populate(box, prepared, vdir, verifier_files)
        if setup is not None:
            return _zero(t0, prepared, f"could not set up the verification container: {setup}")
        t1 = time.monotonic()
        res = box.exec(
            _entry_argv(verifier.entry, vdir, spec.workdir),
            timeout=verifier.timeout_s,
            workdir=vdir,
        )
        command_s = time.monotonic() - t1
    finally:
        (remove or _remove_now)(box)
    notes = list(prepared.notes)
    passed = res.exit_code == 0 and not res.timed_out
    if passed and prepared.scope == "full-state" and prepared.tamper:
        notes.append("full-state scope: tamper evidence present, reward forced to 0")
        passed = False
    return VerifyResult(
        reward=int(passed),
        exit_code=res.exit_code,
        stdout=res.stdout,
        stderr=res.stderr,
        duration_s=time.monotonic() - t0,
        command_s=command_s,
        timed_out=res.timed_out,
        tamper=prepared.tamper,
        notes=tuple(notes),
    )


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


def _populate(
    box: Sandbox, prepared: PreparedState, vdir: str, verifier_files: bytes
) -> str | None:
    """Replace the workspace with the state's, then copy the verifier in. None when done."""
    paths = [p for p, _ in prepared.workspace]
    script = "set -e\n"
    for p in paths:
        script += f"rm -rf -- {_q(p)}\nmkdir -p -- {_q(_parent(p))}\n"
    script += f"rm -rf -- {_q(vdir)}\nmkdir -m 0700 -p -- {_q(vdir)}\n"
    res = box.exec(["/bin/sh", "-c", script], timeout=60)
    if res.exit_code != 0:
        return (res.stderr or res.stdout).strip()[-500:] or f"exit {res.exit_code}"
    for path, tar in prepared.workspace:
        if tar is not None:
            box.put_archive(_parent(path), tar)
    box.put_archive(vdir, verifier_files)
    return None


def _entry_argv(entry: str, vdir: str, workdir: str) -> list[str]:
    env = [
        f"PATH={FIXED_PATH}",
        "HOME=/root",
        "LANG=C.UTF-8",
        "LC_ALL=C.UTF-8",
        f"VERIFIER_DIR={vdir}",
        f"WORKDIR={workdir}",
    ]
    return ["/usr/bin/env", "-i", *env, "/bin/sh", "-c", entry]


def _zero(t0: float, prepared: PreparedState, why: str) -> VerifyResult:
    return VerifyResult(
        reward=0,
        exit_code=None,
        duration_s=time.monotonic() - t0,
        tamper=prepared.tamper,
        notes=(*prepared.notes, why),
    )


def _remove_now(box: Sandbox) -> None:
    box.remove()


def _parent(path: str) -> str:
    parent = path.rstrip("/").rsplit("/", 1)[0]
    return parent or "/"


def _q(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"
