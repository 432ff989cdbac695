"""Is a role's model endpoint there? One tiny chat request, and a plan of every role.

`probe` is what `envfactory agents check-endpoint` sends. `check_roles` is what a worker
does before it polls: every role on the openai backend is probed (once per distinct
endpoint, model and key), and the answer says which endpoint and model each role will use
— or raises ConfigError naming the role, the endpoint and the variables to fix.
The API keys are resolved by the caller (the edge) and passed in.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from envfactory.core.errors import AgentError, ConfigError
from envfactory.core.settings import AgentSettings, AgentsSettings, agent_var

from .factory import make_model
from .model import OpenAIChatModel

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Probe:
    model: str
    base_url: str
    latency_s: float
    reply: str
    prompt_tokens: int | None
    completion_tokens: int | None


@dataclass(frozen=True)
class RolePlan:
    """What one role will talk to: `line()` is what the worker prints."""

    role: str
    backend: str
    model: str
    base_url: str | None
    probe: Probe | None = None

    def line(self) -> str:
        if self.backend == "scripted":
            return f"{self.role}: scripted (replays recorded scripts; unscripted seeds are refused)"
        assert self.probe is not None
        return (
            f"{self.role}: openai model {self.model!r} at {self.probe.base_url} "
            f"(answered in {self.probe.latency_s:.2f}s)"
        )


async def probe(settings: AgentSettings, api_key: str) -> Probe:
    """Send "Reply with: ok" with these settings (whatever their backend says)."""
    model = make_model(settings.model_copy(update={"backend": "openai"}), api_key=api_key)
    assert isinstance(model, OpenAIChatModel)
    t0 = time.monotonic()
    try:
        done = await model.complete(
            [{"role": "user", "content": "Reply with: ok"}],
            None,
            max_tokens=16,
            temperature=0.0,
            timeout_s=settings.request_timeout_s,
        )
    finally:
        await model.aclose()
    return Probe(
        model=model.name,
        base_url=settings.base_url or OPENAI_DEFAULT_URL,
        latency_s=time.monotonic() - t0,
        reply=done.text[:200],
        prompt_tokens=done.prompt_tokens,
        completion_tokens=done.completion_tokens,
    )


async def check_roles(agents: AgentsSettings, api_keys: Mapping[str, str]) -> list[RolePlan]:
    """Probe every openai role's endpoint (once per endpoint, model and key)."""
    seen: dict[tuple[str | None, str | None, str], Probe] = {}
    plans = []
    for role, cfg in agents.roles().items():
        if cfg.backend == "scripted":
            plans.append(RolePlan(role, "scripted", cfg.model_name, None))
            continue
        key = api_keys.get(role, "")
        target = (cfg.base_url, cfg.model, key)
        if target not in seen:
            seen[target] = await _probe_role(role, cfg, key)
        plans.append(RolePlan(role, "openai", cfg.model_name, cfg.base_url, seen[target]))
    return plans


async def _probe_role(role: str, cfg: AgentSettings, key: str) -> Probe:
    try:
        return await probe(cfg, key)
    except AgentError as exc:
        url = cfg.base_url or OPENAI_DEFAULT_URL
        raise ConfigError(
            f"the {role} role's model endpoint {url} (model {cfg.model!r}) did not answer a "
            f"test request: {exc.message}",
            hint=f"start the server or fix {agent_var(role, 'base_url')} / "
            f"{agent_var(role, 'model')} (or the ENVFACTORY_AGENTS__DEFAULT__ ones) and "
            f"the key in ${cfg.api_key_env}; or set {agent_var(role, 'backend')}=scripted",
        ) from exc
