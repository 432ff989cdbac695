"""Which chat model each agent role talks to: a real endpoint, or a scripted replay.

`backend=openai` (settings.agents.<role>) → `OpenAIChatModel` for any chat-completions
server. `backend=scripted` → a `ScriptedModel` replaying the script recorded for this seed
and role, found by `envfactory.agents.scriptbook.ScriptBook` (the packaged scripts plus
any configured directories). A new example seed needs only new script files, no code.

This module is an edge helper: it reads script files, never the environment (API keys
are resolved by the caller with `resolve_api_key`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from envfactory.agents import ChatModel, make_model
from envfactory.agents.scriptbook import ScriptBook, seed_names, slug
from envfactory.core.errors import ConfigError
from envfactory.core.models import AgentRole, TaskSeed
from envfactory.core.settings import AgentSettings, AgentsSettings

__all__ = ["ModelSource", "ScriptBook", "role_settings", "slug"]

_ROLE_FIELD = {
    AgentRole.RESEARCH: "research",
    AgentRole.JUDGE: "judge",
    AgentRole.VERIFIER: "verifier",
    AgentRole.RED_TEAM: "red_team",
    AgentRole.SHORTCUT_ANALYST: "shortcut_analyst",
}


def role_settings(agents: AgentsSettings, role: AgentRole) -> AgentSettings:
    return agents.roles()[_ROLE_FIELD[role]]


def names_of(seed: TaskSeed, aliases: tuple[str, ...] = ()) -> tuple[str, ...]:
    return seed_names(seed.id, seed.title, seed.content_hash, seed.source, aliases)


@dataclass
class ModelSource:
    """`model(role, seed)` → a fresh ChatModel for one agent run."""

    agents: AgentsSettings
    #: settings role name (``red_team``) → API key, resolved at the edge
    api_keys: Mapping[str, str] = field(default_factory=dict)
    scripts: ScriptBook | None = None
    #: seed id → extra names to look its scripts up by (the demo: the example's directory)
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def has_model(self, role: AgentRole, seed: TaskSeed | None) -> bool:
        """False for a scripted role with no script for this seed (an optional role, such
        as the shortcut analyst, then simply does not run)."""
        cfg = role_settings(self.agents, role)
        if cfg.backend != "scripted":
            return True
        if self.scripts is None or seed is None:
            return False
        names = names_of(seed, self.aliases.get(seed.id, ()))
        return self.scripts.path(names, _ROLE_FIELD[role]) is not None

    def model(self, role: AgentRole, seed: TaskSeed | None) -> ChatModel:
        cfg = role_settings(self.agents, role)
        if cfg.backend == "scripted":
            if self.scripts is None or seed is None:
                raise ConfigError(
                    f"the {role.value} role is scripted but no script source is configured",
                    hint="pass a scripts directory, or use backend=openai",
                )
            names = names_of(seed, self.aliases.get(seed.id, ()))
            script = self.scripts.find(names, _ROLE_FIELD[role], f"{seed.title!r} ({seed.id})")
            return make_model(cfg, script=script)
        return make_model(cfg, api_key=self.api_keys.get(_ROLE_FIELD[role], ""))
