"""Just enough Dockerfile reading to find the image's final working directory, and the
check at import that the classic builder can build it (`as_built`).

The workspace of an imported task defaults to the WORKDIR its image ends with: the last
`WORKDIR` of the final stage, resolved against the previous one when relative. A stage
built `FROM` an earlier stage inherits that stage's WORKDIR; a stage from an outside
image starts at `/` (we cannot see inside it). Variables (`$APP_HOME`) are not expanded:
such a WORKDIR is refused with a hint to state the workspace explicitly.
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


def final_workdir(text: str, *, where: str = "Dockerfile") -> str | None:
    """The final stage's WORKDIR, or None when the Dockerfile never sets one."""
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
            workdir = _resolve(workdir, arg, where)
        if alias:
            stages[alias] = workdir
    return workdir


def _resolve(previous: str | None, arg: str, where: str) -> str:
    path = arg.strip().strip("\"'")
    if "$" in path:
        raise InvalidTask(
            f"{where}: WORKDIR {arg} uses a variable, which the importer does not expand",
            hint="write the WORKDIR as a literal path, or set workdir under [envfactory] in task.toml",
        )
    if not path.startswith("/"):
        path = posixpath.join(previous or "/", path)
    return posixpath.normpath(path)
