"""Preparing a state for verification: what one saved state contributes, extracted once.

`prepare_state` turns a saved state into a `PreparedState`: the image every verification
container of it starts from, the workspace files copied in (scope ``workspace``) and the
tamper evidence against the pristine image (`verifiers.tamper`), so that the gates can
verify one state many times, concurrently, without looking at it again. A gate state that
is re-created rather than saved carries its recipe (`Replay` entries, `KILLS_ALL`).

Also here: whether a verification may see the image's /usr/lib and /usr/local through the
kernel's overlayfs (`native_usr`, `sandboxes/native_usr.py`), which depends only on what
the prepared state, the task and the verifier put where, and the verifier's files as the
runner stages them (`verifier_tar`).

Invariants: a path the state lacks is recorded as absent (None), never as an empty tree,
so the verification removes what the pristine image holds there; a state whose changes
could not be listed says so (`tamper_known` False), and full-state scope then gives
reward 0 (`verifiers.runner`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from envfactory.core.errors import SandboxFileNotFound
from envfactory.core.models import (
    EnvironmentSpec,
    PathChange,
    Purpose,
    Semantics,
    Verifier,
    VerifyScope,
)
from sandboxes.native_usr import TARGETS as NATIVE_TARGETS
from sandboxes.protocol import Sandbox, SandboxEngine

from . import archives
from .processes import KILL_STRAYS
from .statediff import image_diff
from .tamper import tamper_changes

FileSource = Callable[[str], bytes]


@dataclass(frozen=True)
class Replay:
    """One recipe entry that re-creates a gate state: an argv run as root in `workdir`."""

    argv: tuple[str, ...]
    workdir: str = "/"


#: The recipe entry that ends every process the entries before it left running. Run in
#: the same exec as the entry before it (`runner.replay_state`), unless that one timed out.
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
    #: a file a probe's planted code writes in the verification container when the probe's
    #: premise held (`Probe.premise_file`): read back after the verifier ends
    premise_file: str | None = None


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


def archive_root(path: str) -> str:
    """The name a path's own archive gives it: its last component."""
    return path.rstrip("/").rsplit("/", 1)[-1]
