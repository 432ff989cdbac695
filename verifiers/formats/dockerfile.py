"""Just enough Dockerfile reading to find the image's final working directory, and the
check at import that the classic builder can build it (`as_built`).

The workspace of an imported task defaults to the WORKDIR its image ends with, which only
the built image knows for sure (its base may set it: `image_workdir.settle_workdir`).
Until the build, the Dockerfile's own lines give it: the last `WORKDIR` of the final
stage, resolved against the previous one when relative. A stage built `FROM` an earlier
stage inherits that stage's WORKDIR; a stage from an outside image starts unknown (None),
and so does a WORKDIR with a variable (`$APP_HOME`), which the image expands.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection

from envfactory.core.errors import ImageBuildFailed, InvalidTask
from sandboxes.dockerfile_classic import to_classic

_INSTRUCTION_RE = re.compile(r"^\s*([A-Za-z]+)\s+(.*)$")


def as_built(text: str, *, where: str, context_paths: Collection[str] = ()) -> str:
    """The Dockerfile as the classic builder gets it (heredocs, `COPY --chmod` and the
    `# syntax=` line translated: `sandboxes.dockerfile_classic`), or InvalidTask naming
    the line that cannot be translated, so that `task import` refuses it, not the build."""
    try:
        return to_classic(text, context_paths, where=where).text
    except ImageBuildFailed as exc:
        raise InvalidTask(exc.message, hint=exc.hint) from None


def logical_lines(text: str) -> list[str]:
    """Instructions with continuation lines joined and comments dropped."""
    out: list[str] = []
    current = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if current and stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        out.append(current + stripped)
        current = ""
    if current.strip():
        out.append(current.strip())
    return out


def final_workdir(text: str) -> str | None:
    """The final stage's WORKDIR as its lines say, or None when they do not tell it."""
    stages: dict[str, str | None] = {}  # alias -> WORKDIR at the stage's end
    workdir: str | None = None
    alias: str | None = None
    for line in logical_lines(text):
        match = _INSTRUCTION_RE.match(line)
        if not match:
            continue
        op, arg = match.group(1).upper(), match.group(2).strip()
        if op == "FROM":
            words = [w for w in arg.split() if not w.startswith("--")]
            workdir = stages.get(words[0]) if words else None
            alias = words[2] if len(words) >= 3 and words[1].lower() == "as" else None
        elif op == "WORKDIR":
            workdir = _resolve(workdir, arg)
        if alias:
            stages[alias] = workdir
    return workdir


def _resolve(previous: str | None, arg: str) -> str | None:
    path = arg.strip().strip("\"'")
    if "$" in path:
        return None  # expanded by the build: the image tells
    if not path.startswith("/"):
        if previous is None:
            return None  # relative to a WORKDIR only the image knows
        path = posixpath.join(previous, path)
    return posixpath.normpath(path)
