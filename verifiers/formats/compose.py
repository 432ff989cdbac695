"""A Harbor task's `environment/docker-compose.yaml`, read onto envfactory's services.

The service named `main` (Harbor's agent container; or the only one building
`environment/Dockerfile`) is the environment itself; every other service becomes a
`ServiceSpec`, started fresh next to each sandbox on a private network where the main
container reaches it by its name (`sandboxes/services.py`). What maps: `build` (a context
directory under `environment/`, an optional `dockerfile`), `command`, `environment`,
`healthcheck.test` (the ready check). What is refused, naming the service and the fix:
`image:` without `build` (nothing can be pulled here), a build context outside
`environment/`. `ports`, `volumes`, `depends_on` and the rest are left out with a note:
services start before the main container, and nothing is published.
"""

from __future__ import annotations

import posixpath
import shlex
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from envfactory.core import bounded_yaml
from envfactory.core.errors import InvalidTask
from envfactory.core.models import BuildContext, FileEntry, ServiceSpec

MAIN = "main"
MAPPED = {"build", "command", "environment", "healthcheck", "image"}
#: how to fix a `ServiceSpec` field a compose service got wrong
FIELD_HINTS = {
    "name": "a service's name is its host name: lowercase letters, digits and '-', "
    "starting with a letter, at most 31 characters",
}


def read_compose(file: Path) -> dict[str, dict[str, Any]]:
    try:
        data = bounded_yaml.load(file.read_text(errors="replace")) or {}
    except yaml.YAMLError as exc:
        raise InvalidTask(f"{file}: invalid YAML: {exc}", hint="fix the syntax") from None
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict) or not all(isinstance(v, dict) for v in services.values()):
        raise InvalidTask(f"{file}: no `services:` mapping", hint="declare the task's services")
    return {str(k): v for k, v in services.items()}


def compose_services(
    file: Path, files: tuple[FileEntry, ...]
) -> tuple[tuple[ServiceSpec, ...], list[str]]:
    """The side services of the compose file (built from `files`, the environment's),
    and notes on what was left out."""
    services = read_compose(file)
    if len(services) <= 1:
        return (), []  # the environment's own container: nothing to add
    main = _main(file, services)
    out, notes = [], []
    for name, body in services.items():
        if name == main:
            continue
        where = f"environment/{file.name} service {name!r}"
        out.append(_service(where, name, body, files))
        dropped = sorted(set(body) - MAPPED)
        if dropped:
            notes.append(
                f"{where}: {', '.join(dropped)} left out (started before main, unpublished)"
            )
    return tuple(out), notes


def _main(file: Path, services: dict[str, dict[str, Any]]) -> str:
    if MAIN in services:
        return MAIN
    building_root = [n for n, b in services.items() if _context(b) in {".", "./", ""}]
    if len(building_root) == 1:
        return building_root[0]
    raise InvalidTask(
        f"{file}: which service is the task's own container? none is named {MAIN!r}",
        hint=f"name the service built from environment/Dockerfile {MAIN!r}",
    )


def _context(body: dict[str, Any]) -> str | None:
    build = body.get("build")
    if isinstance(build, str):
        return build
    if isinstance(build, dict):
        return str(build.get("context", "."))
    return None


def _service(
    where: str, name: str, body: dict[str, Any], files: tuple[FileEntry, ...]
) -> ServiceSpec:
    context = _context(body)
    if context is None:
        raise InvalidTask(
            f"{where}: `image: {body.get('image')}` with no `build`; no image can be pulled "
            "here, every image is built locally",
            hint=f"give {name!r} a build context under environment/ (a Dockerfile that "
            "installs it from Debian's packages, e.g. postgresql or redis-server)",
        )
    root = posixpath.normpath(context)
    if root.startswith(".."):
        raise InvalidTask(
            f"{where}: build context {context!r} is outside environment/",
            hint="put the service's Dockerfile and files under environment/",
        )
    build = body["build"] if isinstance(body["build"], dict) else {}
    dockerfile = str(build.get("dockerfile", "Dockerfile"))
    sub = _subtree(files, root)
    if dockerfile not in {f.path for f in sub}:
        raise InvalidTask(
            f"{where}: no {posixpath.join(root, dockerfile)} in environment/",
            hint="add the service's Dockerfile there",
        )
    try:
        return ServiceSpec(
            name=name,
            build=BuildContext(dockerfile=dockerfile, files=sub),
            command=_command(where, body.get("command")),
            env=_env(body.get("environment")),
            ready=_ready(body.get("healthcheck")),
        )
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in err["loc"]) or "?"
        raise InvalidTask(
            f"{where}: {field}: {err['msg']}",
            hint=FIELD_HINTS.get(field, f"fix the service's {field} in the compose file"),
        ) from None


def _subtree(files: tuple[FileEntry, ...], root: str) -> tuple[FileEntry, ...]:
    if root == ".":
        return files
    prefix = root.rstrip("/") + "/"
    return tuple(
        f.model_copy(update={"path": f.path[len(prefix) :]})
        for f in files
        if f.path.startswith(prefix)
    )


def _command(where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return ("sh", "-c", value)
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    raise InvalidTask(
        f"{where}: `command` must be a string or a list, got {type(value).__name__}",
        hint='write `command: ["redis-server", "--port", "6379"]` or `command: redis-server`',
    )


def _env(value: Any) -> dict[str, str]:
    if isinstance(value, dict):
        return {str(k): "" if v is None else str(v) for k, v in value.items()}
    if isinstance(value, list):
        pairs = (str(item).partition("=") for item in value)
        return {k: v for k, _, v in pairs}
    return {}


def _ready(healthcheck: Any) -> str:
    """Compose's `healthcheck.test` as a shell command ("" when there is none)."""
    test = healthcheck.get("test") if isinstance(healthcheck, dict) else None
    if isinstance(test, str):
        return test
    if isinstance(test, list) and test and test[0] == "CMD-SHELL":
        return " ".join(str(t) for t in test[1:])
    if isinstance(test, list) and test and test[0] == "CMD":
        return shlex.join(str(t) for t in test[1:])
    return ""
