"""Recorded tool-call scripts for the example seeds (`examples/seeds/<name>`), one per role.

`<seed>/research.yaml` builds a real environment (Dockerfile, files, instruction, hidden
state, multi-step reference solution, partial solutions); `judge.yaml` solves it from the
instruction; `verifier.yaml` writes a sound verifier without the solution; `red_team.yaml`
tries a shortcut that the verifier must reject. They drive the offline demo and tests
through `ScriptedModel`. Each script's `seed:` is the seed's title, so a worker finds it
from the stored seed alone (the directory name counts too); they ship as package data
(pyproject `[tool.setuptools.package-data]`), never read from the working directory.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from envfactory.core.errors import NotFound
from envfactory.core.models import PIPELINE_ROLES

from ..scripted import Script

#: one script per pipeline role, named as the role is spelled (`red_team.yaml`)
ROLES = tuple(role.value for role in PIPELINE_ROLES)


def available_seeds() -> list[str]:
    root = resources.files(__package__)
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("_"))


def load_script(seed: str, role: str) -> Script:
    """The recorded script of `role` for `seed`: an example seed's name (a directory of this
    package), or a directory of your own holding `<role>.yaml` files (a seed nobody
    shipped, served by `envfactory agents serve-seed DIR`)."""
    if role not in ROLES:
        raise NotFound(f"no agent role {role!r}", hint=f"roles: {', '.join(ROLES)}")
    if seed not in available_seeds() and ("/" in seed or Path(seed).is_dir()):
        return _script_in(Path(seed), role)  # an example's name wins over a same-named dir
    path = resources.files(__package__).joinpath(seed, f"{role}.yaml")
    if not path.is_file():
        raise NotFound(
            f"no {role} script for seed {seed!r}",
            hint=f"seeds with scripts: {', '.join(available_seeds())}",
        )
    with resources.as_file(path) as p:
        return Script.load(p)


def _script_in(directory: Path, role: str) -> Script:
    path = directory / f"{role}.yaml"
    if not path.is_file():
        raise NotFound(
            f"no {role} script at {path}",
            hint=f"write one {role}.yaml per role in {directory} ({', '.join(ROLES)})",
        )
    return Script.load(path)
