"""An imported task's working directory, settled by the image it was built into.

A suite's Dockerfile often sets no WORKDIR of its own: its base image does (`/app`). Only
the built image knows, so the importer records which fields the image decides
(`EnvironmentSpec.image_decides`: those the task's `[envfactory]` table does not name)
and every build settles them from the image's `Config.WorkingDir`, with the verifier's
`cwd` (the harness runs the tests from the workdir) following the workdir.

Invariants: an explicit `[envfactory] workdir` / `workspace_paths` always wins; a
workspace of `/` is refused after the build as at import (copying `/` would make the
whole filesystem solver-controlled); settling twice with the same image changes nothing.
"""

from __future__ import annotations

import posixpath

from envfactory.core.errors import InvalidTask
from envfactory.core.models import EnvironmentSpec, Verifier


def settle_workdir(
    spec: EnvironmentSpec, verifier: Verifier, image_workdir: str
) -> tuple[EnvironmentSpec, Verifier]:
    """`spec` and `verifier` with what the image decides set from its WorkingDir
    (`BuildResult.workdir`); unchanged when the task named both itself."""
    if not spec.image_decides:
        return spec, verifier
    workdir = posixpath.normpath(image_workdir or "/")
    update: dict[str, object] = {}
    if "workdir" in spec.image_decides:
        update["workdir"] = workdir
    if "workspace_paths" in spec.image_decides:
        update["workspace_paths"] = (update.get("workdir", spec.workdir),)
    settled = spec.model_copy(update=update)
    if "/" in settled.workspace_paths:
        raise InvalidTask(
            f"the workspace of task {spec.name!r} would be '/': neither its Dockerfile nor "
            "its base image sets a WORKDIR, which makes the whole filesystem "
            "solver-controlled",
            hint="add `WORKDIR /app` (or similar) to the Dockerfile, or set "
            'workspace_paths = ["/app"] under [envfactory] in task.toml',
        )
    if verifier.cwd is not None and verifier.cwd != settled.workdir:
        verifier = verifier.model_copy(update={"cwd": settled.workdir})
    return settled, verifier
