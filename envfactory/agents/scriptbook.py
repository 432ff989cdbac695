"""Finding the recorded script of a role for a seed, and refusing a seed nobody scripted.

A script names its `role` and its `seed` (the seed's title or id, or an alias such as the
example seed's directory name); a directory on the script's path counts as a seed name
too. The packaged scripts (`envfactory/agents/scripts`, package data) are always searched,
found through the package itself — never through the working directory — so a worker in
a container finds them wherever it starts. Extra directories come from
`settings.agents.script_dirs` or a worker's `--scripts`.

`require_scripts` is the check made before a pipeline starts (`seed submit`, `seed start`,
`POST /api/seeds`, the demo): a seed with no script for a role on the scripted backend
would stop at that role, so it is refused up front with the variables that configure a
model instead.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from envfactory.core.errors import AgentError, ConfigError
from envfactory.core.models import OPTIONAL_ROLES
from envfactory.core.settings import AgentsSettings, agent_var

from .scripted import Script


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def packaged_dir() -> Path:
    """The packaged scripts' directory, from the package itself (not the working dir)."""
    root = resources.files("envfactory.agents.scripts")
    return Path(str(root))  # a regular (or editable) install: a real directory


def seed_names(
    seed_id: str, title: str, content_hash: str, source: str | None, aliases: Iterable[str] = ()
) -> tuple[str, ...]:
    """Every name a seed's scripts may be recorded under, most specific first."""
    return (*aliases, seed_id, title, content_hash, *([source] if source else []))


@dataclass
class ScriptBook:
    """Every script under `roots`, indexed by (seed key, role)."""

    roots: tuple[Path, ...]
    _index: dict[tuple[str, str], Path] = field(default_factory=dict)
    _shown: set[str] = field(default_factory=set)  # one name per scripted seed, for messages

    def __post_init__(self) -> None:
        for root in self.roots:
            for path in sorted(root.rglob("*.y*ml")) if root.is_dir() else ():
                try:
                    script = Script.load(path)
                except AgentError:
                    continue  # not every YAML file there is a script
                role = script.role.replace("_", "-")
                parts = path.relative_to(root).parent.parts
                keys = {script.seed, *parts} - {None, ""}
                self._shown.add(parts[0] if parts else str(script.seed or path.stem))
                for key in keys:
                    self._index.setdefault((slug(str(key)), role), path)

    def path(self, names: Sequence[str], role: str) -> Path | None:
        """The script of `role` (`red_team` or `red-team`) for the first name that has one."""
        wanted = role.replace("_", "-")
        for name in names:
            hit = self._index.get((slug(name), wanted))
            if hit is not None:
                return hit
        return None

    def find(self, names: Sequence[str], role: str, label: str) -> Script:
        hit = self.path(names, role)
        if hit is None:
            raise ConfigError(
                f"no {role} script for seed {label} under "
                f"{', '.join(map(str, self.roots)) or 'no scripts directory'}",
                hint=configure_hint([role.replace("-", "_")], self.seeds()),
            )
        return Script.load(hit)

    def seeds(self) -> list[str]:
        """The seeds that have scripts, one name each (for messages)."""
        return sorted(self._shown)


@functools.lru_cache(maxsize=8)
def script_book(extra: tuple[Path, ...] = ()) -> ScriptBook:
    """The packaged scripts plus `extra` directories (cached: scripts are read-only data)."""
    return ScriptBook((packaged_dir(), *extra))


def unscripted_roles(agents: AgentsSettings, book: ScriptBook, names: Sequence[str]) -> list[str]:
    """The roles on the scripted backend that have no script for a seed of these names
    (roles whose script is optional, the shortcut analyst, never stop a seed)."""
    optional = {r.value for r in OPTIONAL_ROLES}
    return [
        role
        for role, cfg in agents.roles().items()
        if cfg.backend == "scripted" and role not in optional and book.path(names, role) is None
    ]


def require_scripts(
    agents: AgentsSettings, book: ScriptBook, names: Sequence[str], title: str
) -> None:
    """Refuse a seed that would stop at a scripted role for want of a script."""
    missing = unscripted_roles(agents, book, names)
    if not missing:
        return
    raise ConfigError(
        f"seed {title!r} cannot run here: the {', '.join(missing)} role(s) use the scripted "
        f"backend, which only replays recorded scripts, and none was recorded for this seed",
        hint=configure_hint(missing, book.seeds()),
    )


def configure_hint(roles: Sequence[str], scripted: Sequence[str]) -> str:
    per_role = " / ".join(agent_var(r, "backend") for r in roles)
    return (
        "configure a model: ENVFACTORY_AGENTS__DEFAULT__BACKEND=openai and "
        "ENVFACTORY_AGENTS__DEFAULT__MODEL=<model name>, with "
        "ENVFACTORY_AGENTS__DEFAULT__BASE_URL=<server>/v1 for SGLang/vLLM and the key in "
        f"OPENAI_API_KEY (or per role: {per_role}=openai and its __MODEL); "
        f"seeds with recorded scripts: {', '.join(scripted) or 'none'}"
    )
