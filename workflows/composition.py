"""The worker's composition root: settings in, the process's services out.

Every process that runs pipeline activities (`envfactory worker`, `envfactory up`,
`envfactory demo`, the tests) builds them here, once: each role's model (an endpoint or
the recorded scripts), the Docker engines, the store-backed services, and the janitor
that removes sandboxes of dead owners. The CLI only parses options and prints.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envfactory.core.settings import Settings

if TYPE_CHECKING:
    from envfactory.core.models import EvalAttempt
    from envfactory.evals import EvalHarness, ModelFactory
    from envfactory.store import ArtifactStore
    from sandboxes.janitor import Janitor

    from .models_source import ModelSource
    from .store_services import StoreServices

#: extra script directories (besides settings.agents.script_dirs and the packaged scripts)
DEFAULT_SCRIPTS: tuple[Path, ...] = ()


def api_keys(settings: Settings, environ: Mapping[str, str]) -> dict[str, str]:
    """role (settings field name) → API key, read from the variable its settings name."""
    from envfactory.agents import resolve_api_key

    return {r: resolve_api_key(cfg, environ) for r, cfg in settings.agents.roles().items()}


def with_scripts(settings: Settings, scripts: tuple[Path, ...]) -> Settings:
    """Settings whose script directories include `--scripts`, so every part of this
    process (worker, API, the pre-start check) looks in the same places."""
    if not scripts:
        return settings
    agents = settings.agents.model_copy(
        update={"script_dirs": (*settings.agents.script_dirs, *scripts)}
    )
    return settings.model_copy(update={"agents": agents})


def model_source(
    settings: Settings,
    scripts: tuple[Path, ...] = DEFAULT_SCRIPTS,
    aliases: Mapping[str, tuple[str, ...]] | None = None,
) -> ModelSource:
    """Each role's model: its endpoint, or the recorded scripts (found through the package,
    whatever the working directory)."""
    from envfactory.agents.scriptbook import script_book

    from .models_source import ModelSource

    book = script_book((*settings.agents.script_dirs, *scripts))
    return ModelSource(settings.agents, api_keys(settings, os.environ), book, dict(aliases or {}))


def make_services(
    settings: Settings,
    scripts: tuple[Path, ...] = DEFAULT_SCRIPTS,
    aliases: Mapping[str, tuple[str, ...]] | None = None,
    engine: Any = None,
) -> StoreServices:
    """The services for a worker process (imports Docker and the agents lazily)."""
    from sandboxes import DockerEngine

    from .store_services import build_services

    models = model_source(settings, scripts, aliases)
    engine = engine or DockerEngine(settings.sandbox)
    agent_engine = DockerEngine(settings.sandbox, run_id=getattr(engine, "run_id", None))
    return build_services(settings, engine, models, agent_engine)


def eval_models(settings: Settings) -> ModelFactory:
    """Each role's model for an eval attempt; a scripted role finds its script by the
    target's name too (a seed's directory name, as the example scripts are filed)."""
    source = model_source(settings)

    def make(role: Any, seed: Any, name: str) -> Any:
        if seed is not None:
            source.aliases.setdefault(seed.id, (name,))
        return source.model(role, seed)

    return make


def eval_harness(
    settings: Settings,
    artifacts: ArtifactStore,
    *,
    gate_repeats: int = 1,
    on_attempt: Callable[[EvalAttempt], None] | None = None,
    engine: Any = None,
) -> EvalHarness:
    """The agent eval harness of `envfactory agents eval`: the roles' models, the local
    Docker engine (its pool shared by attempts and their checks) and the artifact store."""
    from envfactory.evals import EvalHarness
    from envfactory.evals.attempts import Attempts
    from sandboxes import DockerEngine

    attempts = Attempts(
        engine=engine or DockerEngine(settings.sandbox),
        artifacts=artifacts,
        gate_repeats=gate_repeats,
        concurrency=settings.sandbox.pool_size,
    )
    return EvalHarness(attempts, settings.agents, eval_models(settings), on_attempt)


def agent_plans(settings: Settings) -> list[str]:
    """One line per openai role: the endpoint and model it will use. ConfigError (naming
    the role, endpoint and variables) when an endpoint does not answer."""
    from envfactory.agents.endpoint import check_roles

    plans = asyncio.run(check_roles(settings.agents, api_keys(settings, os.environ)))
    return [plan.line() for plan in plans]


def start_janitor(settings: Settings, say: Callable[[str], None]) -> Janitor | None:
    """Remove sandboxes of dead owners now and every `sandbox.janitor_period_s` (a daemon
    thread; `.stop()` it at exit). A crashed or SIGKILLed process leaves its containers
    running: whichever worker or `envfactory up` runs next on the host cleans them up.
    None (and a line said) when there is no Docker engine."""
    import docker.errors

    from sandboxes import DockerEngine
    from sandboxes.janitor import Janitor

    try:
        engine = DockerEngine(settings.sandbox)
    except docker.errors.DockerException as exc:
        say(f"janitor: not started, no Docker engine: {exc}")
        return None
    janitor = Janitor(
        engine,
        period_s=settings.sandbox.janitor_period_s,
        foreign_ttl_s=settings.sandbox.janitor_foreign_ttl_s,
        on_removed=lambda ids: say(
            f"janitor: removed {len(ids)} sandbox object(s) of dead owners: "
            + ", ".join(i.split(":", 1)[0] + ":" + i.split(":", 1)[1][:12] for i in ids)
        ),
        on_error=lambda exc: say(f"janitor: sweep failed: {exc}"),
    )
    return janitor.start()
