"""Turn what a format reader found into an `ImportedTask`, the same way for every format.

Invariants:
- the workspace defaults to the image's final WORKDIR: the Dockerfile's lines say it
  until the build, and the built image decides what `[envfactory]` does not name
  (`image_decides`, `image_workdir.settle_workdir`); a workspace of `/` is refused, here
  when the task names it, after the build when the image gives it (copying `/` would
  defeat workspace verification);
- workspace paths are absolute and normalised;
- the spec id is derived from the content, so importing the same task twice gives the
  same id (the verifier's `env_id` follows it);
- a one-step reference solution is recorded in the notes (no prefix states);
- limits above the operator's ceilings are clamped, with a note each (`caps`).
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass, field
from typing import Literal

from pydantic import ValidationError

from envfactory.core.errors import InvalidTask
from envfactory.core.models import (
    BuildContext,
    EnvironmentSpec,
    FileEntry,
    LimitCaps,
    Limits,
    PartialSolution,
    Provenance,
    Semantics,
    ServiceSpec,
    Step,
    Verifier,
    VerifyScope,
)

from .caps import clamp
from .dockerfile import as_built, final_workdir
from .model import ONE_BLOCK_NOTE, ImportedTask, TaskFormat
from .options import EnvfactoryOptions
from .scope import infer_scope


@dataclass
class Found:
    """Everything a format reader extracted, before it becomes models."""

    format: TaskFormat
    name: str
    instruction: str
    dockerfile_text: str
    build_files: tuple[FileEntry, ...]
    steps: tuple[Step, ...]
    verifier_files: tuple[FileEntry, ...]
    entry: str
    verifier_timeout_s: int
    limits: Limits
    options: EnvfactoryOptions
    partials: tuple[PartialSolution, ...] = ()
    notes: list[str] = field(default_factory=list)
    where: str = "task.toml"
    dockerfile_where: str = "Dockerfile"  # the Dockerfile's path in the task, for messages
    #: (relative path, text) of the verifier's files, read for the scope inference
    test_texts: tuple[tuple[str, str], ...] = ()
    mount_path: str | None = None  # where the harness puts the tests ("/tests")
    reward_dir: str | None = None  # Harbor's reward-file directory, when the tests write one
    services: tuple[ServiceSpec, ...] = ()  # a compose file's side services


def assemble(found: Found, caps: LimitCaps | None = None) -> ImportedTask:
    """The task's models, its limits within `caps` (the operator's ceilings, default
    `LimitCaps()`), or InvalidTask naming the field a value broke (e.g. a NUL)."""
    try:
        return _assemble(found, caps or LimitCaps())
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field_name = ".".join(str(p) for p in err["loc"]) or "?"
        msg = err["msg"].removeprefix("Value error, ")
        raise InvalidTask(
            f"{found.where}: {field_name} {msg}", hint=f"fix {field_name} in the task's files"
        ) from None


def _assemble(found: Found, caps: LimitCaps) -> ImportedTask:
    opts = found.options
    workdir, workspace, image_decides = _workspace(found)
    scope, semantics, scope_notes = _scope(found, workspace)
    limits, verifier_timeout_s, clamped = clamp(
        found.limits, found.verifier_timeout_s, caps, found.where
    )
    if opts.capabilities:
        limits = limits.model_copy(update={"capabilities": opts.capabilities})
    spec = EnvironmentSpec(
        id="env-pending",
        name=opts.name or found.name,
        instruction=found.instruction,
        success_criteria=opts.success_criteria,
        hidden_state_notes=opts.hidden_state_notes,
        build=BuildContext(dockerfile="Dockerfile", files=found.build_files),
        workdir=workdir,
        workspace_paths=workspace,
        image_decides=image_decides,
        verify_scope=scope,
        ungraded_paths=tuple(
            _absolute(p, f"{found.where} [envfactory].ungraded") for p in opts.ungraded
        ),
        reference_solution=found.steps,
        partial_solutions=found.partials,
        limits=limits,
        services=found.services,
        source=found.format,
        semantics=semantics,
    )
    spec = spec.model_copy(update={"id": content_id(spec)})
    verifier = Verifier(
        env_id=spec.id,
        files=found.verifier_files,
        entry=opts.verifier_entry or found.entry,
        timeout_s=verifier_timeout_s,
        provenance=Provenance(author=f"import:{found.format}"),
        mount_path=found.mount_path,
        reward_dir=found.reward_dir,
        cwd=workdir if found.mount_path else None,
    )
    notes = [*found.notes, *clamped, *scope_notes]
    if len(found.steps) == 1:
        notes.append(ONE_BLOCK_NOTE)
    return ImportedTask(
        spec=spec,
        verifier=verifier,
        format=found.format,
        notes=tuple(notes),
        expected_failure=opts.expected_failure,
        expected_failure_kind=opts.expected_failure_kind,
    )


def _scope(
    found: Found, workspace: tuple[str, ...]
) -> tuple[VerifyScope, tuple[Semantics, ...], list[str]]:
    """Scope and semantics: declared in the task, else inferred from its tests (scope.py)."""
    opts = found.options
    choice = infer_scope(found.test_texts, workspace)
    scope = opts.verify_scope or choice.scope
    semantics = opts.semantics or choice.semantics
    notes = []
    if opts.verify_scope is None and choice.scope != VerifyScope.WORKSPACE:
        notes.append(f"verify scope {scope} (inferred: {'; '.join(choice.reasons)})")
    if opts.semantics is None and choice.services:
        notes.append(
            "its tests may query a running service (" + ", ".join(choice.services) + "): "
            "gated under envfactory's runtime, which keeps no solver process; only if the "
            "reference solution's state fails the tests there and passes in Harbor's (the "
            "solver's own container) are they gated under harbor semantics alone"
        )
    return scope, tuple(semantics), notes


def content_id(spec: EnvironmentSpec) -> str:
    left_out = {"id", "created_at", "origin"} | {
        name for name in ("ungraded_paths", "image_decides") if not getattr(spec, name)
    }
    blob = spec.model_dump_json(exclude=left_out).encode()
    return "env-" + hashlib.sha256(blob).hexdigest()[:12]


def _workspace(
    found: Found,
) -> tuple[str, tuple[str, ...], tuple[Literal["workdir", "workspace_paths"], ...]]:
    """The workdir and workspace as far as the task's files tell, and which of them the
    built image decides (`image_workdir.settle_workdir`): those `[envfactory]` leaves out."""
    opts = found.options
    context = [f.path for f in found.build_files]
    dockerfile = as_built(
        found.dockerfile_text, where=found.dockerfile_where, context_paths=context
    )
    decides: list[Literal["workdir", "workspace_paths"]] = []
    if opts.workdir is None:
        decides.append("workdir")
    workdir = opts.workdir or final_workdir(dockerfile) or "/"
    workdir = _absolute(workdir, f"{found.where} [envfactory].workdir")
    if opts.workspace_paths is not None:
        paths = tuple(
            _absolute(p, f"{found.where} [envfactory].workspace_paths")
            for p in opts.workspace_paths
        )
    else:
        decides.append("workspace_paths")
        paths = (workdir,)
    if not paths or ("/" in paths and decides != ["workdir", "workspace_paths"]):
        raise InvalidTask(
            f"the workspace of task {found.name!r} would be '/', which makes the whole "
            "filesystem solver-controlled",
            hint='name the directories the solver works in: workspace_paths = ["/app"] '
            f"under [envfactory] in {found.where}",
        )
    return workdir, paths, tuple(decides)


def _absolute(path: str, where: str) -> str:
    if not path.startswith("/"):
        raise InvalidTask(f"{where}: {path!r} is not an absolute path", hint="write it as /dir")
    return posixpath.normpath(path)
