"""Which chat model each agent role talks to: a real endpoint, or a scripted replay.

`backend=openai` (settings.agents.<role>) → `OpenAIChatModel` for any chat-completions
server. `backend=scripted` → a `ScriptedModel` replaying the script written for this seed
and role (the offline demo and tests). Scripts are YAML files under a scripts directory;
a script names its `role` and its `seed` (the seed's title or id, or an alias such as the
example seed's directory name); a directory on the script's path counts as a seed name
too. A new example seed needs only new files, no code.

This module is an edge helper: it reads script files, never the environment (API keys
are resolved by the caller with `resolve_api_key`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from envfactory.agents import ChatModel, Script, make_model
from envfactory.core.errors import ConfigError
from envfactory.core.models import PIPELINE_ROLES, AgentRole, TaskSeed
from envfactory.core.settings import AgentSettings, AgentsSettings


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def role_settings(agents: AgentsSettings, role: AgentRole) -> AgentSettings:
    """`settings.agents.<role>`: each pipeline role has a section spelled as the role."""
    if role not in PIPELINE_ROLES:
        raise ConfigError(f"the {role.value} role has no model settings",
                          hint=f"roles with settings: {', '.join(PIPELINE_ROLES)}")  # fmt: skip
    settings: AgentSettings = getattr(agents, role.value)
    return settings


@dataclass
class ScriptBook:
    """Every script under `roots`, indexed by (seed key, role)."""

    roots: tuple[Path, ...]
    _index: dict[tuple[str, str], tuple[Path, list[Path]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for root in self.roots:
            for path in sorted(root.rglob("*.y*ml")) if root.is_dir() else ():
                try:
                    script = Script.load(path)
                except Exception:  # noqa: BLE001 — not every YAML file there is a script
                    continue
                role = _role_of(script)
                if role is None:
                    continue
                keys = {script.seed, *path.relative_to(root).parent.parts} - {None, ""}
                for key in keys:
                    entry = self._index.setdefault((slug(str(key)), role), (path, []))
                    entry[1].append(path)

    def find(self, seed: TaskSeed, role: AgentRole, aliases: tuple[str, ...] = ()) -> Script:
        for key in (*aliases, seed.id, seed.title, seed.content_hash, seed.source or ""):
            hit = self._index.get((slug(key), role.value))
            if hit is not None:
                return Script.load(hit[0])
        known = sorted({k for k, _ in self._index})
        raise ConfigError(
            f"no {role.value} script for seed {seed.title!r} ({seed.id}) under "
            f"{', '.join(map(str, self.roots)) or 'no scripts directory'}",
            hint="add a script whose `seed:` is the seed's title, or set "
            f"ENVFACTORY_AGENTS__{role.value.upper()}__BACKEND=openai; "
            f"scripts exist for: {', '.join(known) or 'nothing'}",
        )


def _role_of(script: Script) -> str | None:
    """The role a script is for, as the index spells it (None: no pipeline role)."""
    try:
        return AgentRole(script.role).value  # also reads the old spelling "red-team"
    except ValueError:
        return None


@dataclass
class ModelSource:
    """`model(role, seed)` → a fresh ChatModel for one agent run."""

    agents: AgentsSettings
    api_keys: Mapping[str, str] = field(default_factory=dict)  # role → key (resolved at the edge)
    scripts: ScriptBook | None = None
    #: seed id → extra names to look its scripts up by (the demo: the example's directory)
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def model(self, role: AgentRole, seed: TaskSeed | None) -> ChatModel:
        cfg = role_settings(self.agents, role)
        if cfg.backend == "scripted":
            if self.scripts is None or seed is None:
                raise ConfigError(
                    f"the {role.value} role is scripted but no script source is configured",
                    hint="pass a scripts directory, or use backend=openai",
                )
            return make_model(cfg, script=self.scripts.find(seed, role, self.aliases.get(seed.id, ())))
        return make_model(cfg, api_key=self.api_keys.get(role.value, ""))
