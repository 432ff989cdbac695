"""`envfactory worker`: poll Temporal task queues and run the pipeline's activities.

A process edge: settings are loaded here, the services (store, Docker engine, models)
are built here, once, and handed to the worker. A janitor (`sandboxes.janitor`) removes
sandboxes of dead owners at start and every `sandbox.janitor_period_s`. Scale out by starting more workers:
`envfactory worker --queue sandbox` on every Docker host, `--queue agents` where the
model endpoint is reachable.

Before polling, the worker probes every role on the openai backend and prints which
endpoint and model each role will use; it refuses to start when one does not answer.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from envfactory.core.errors import EnvFactoryError
from envfactory.core.settings import Settings, load_settings

if TYPE_CHECKING:
    from workflows.models_source import ModelSource
    from workflows.real import RealServices

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
        update={"script_dirs": (*settings.agents.script_dirs, *scripts)})
    return settings.model_copy(update={"agents": agents})


def model_source(settings: Settings, scripts: tuple[Path, ...] = DEFAULT_SCRIPTS,
                 aliases: Mapping[str, tuple[str, ...]] | None = None) -> ModelSource:
    """Each role's model: its endpoint, or the recorded scripts (found through the package,
    whatever the working directory)."""
    from envfactory.agents.scriptbook import script_book
    from workflows.models_source import ModelSource

    book = script_book((*settings.agents.script_dirs, *scripts))
    return ModelSource(settings.agents, api_keys(settings, os.environ), book, dict(aliases or {}))


def make_services(settings: Settings, scripts: tuple[Path, ...] = DEFAULT_SCRIPTS,
                  aliases: Mapping[str, tuple[str, ...]] | None = None,
                  engine: Any = None) -> RealServices:
    """The real services for a worker process (imports Docker and the agents lazily)."""
    from sandboxes import DockerEngine
    from workflows.real import build_services

    models = model_source(settings, scripts, aliases)
    engine = engine or DockerEngine(settings.sandbox)
    agent_engine = DockerEngine(settings.sandbox, run_id=getattr(engine, "run_id", None))
    return build_services(settings, engine, models, agent_engine)


def start_janitor(settings: Settings, console: Console) -> Any:
    """Remove sandboxes of dead owners now and every `sandbox.janitor_period_s` (a daemon
    thread; `.stop()` it at exit). A crashed or SIGKILLed process leaves its containers
    running: whichever worker or `envfactory up` runs next on the host cleans them up."""
    import docker.errors

    from sandboxes import DockerEngine
    from sandboxes.janitor import Janitor

    try:
        engine = DockerEngine(settings.sandbox)
    except docker.errors.DockerException as exc:
        console.print(f"[yellow]janitor: not started, no Docker engine: {exc}[/]")
        return None
    janitor = Janitor(
        engine, period_s=settings.sandbox.janitor_period_s,
        foreign_ttl_s=settings.sandbox.janitor_foreign_ttl_s,
        on_removed=lambda ids: console.print(
            f"janitor: removed {len(ids)} sandbox object(s) of dead owners: "
            + ", ".join(i.split(":", 1)[0] + ":" + i.split(":", 1)[1][:12] for i in ids)),
        on_error=lambda exc: console.print(f"[yellow]janitor: sweep failed: {exc}[/]"),
    )  # fmt: skip
    return janitor.start()


def announce_agents(settings: Settings, console: Console) -> None:
    """Probe every openai role's endpoint and say what each role will use; ConfigError
    (naming the role, endpoint and variables) when an endpoint does not answer."""
    from envfactory.agents.endpoint import check_roles

    plans = asyncio.run(check_roles(settings.agents, api_keys(settings, os.environ)))
    for plan in plans:
        console.print(f"agents: {plan.line()}", highlight=False)


def stop_on_signals(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)


def worker(
    queue: Annotated[
        list[str] | None,
        typer.Option("--queue", "-q", help="Task queue to poll (repeatable); default: all."),
    ] = None,
    scripts: Annotated[
        list[Path] | None,
        typer.Option(help="Directories of agent scripts for the scripted backend."),
    ] = None,
) -> None:
    """Run a worker for the pipeline's task queues until Ctrl-C.

    Examples:

      envfactory worker                      # both queues (the embedded default)

      envfactory worker --queue sandbox      # a Docker host in a bigger deployment
    """
    from workflows.worker import serve

    console = Console(stderr=True)
    try:
        settings = with_scripts(load_settings(), tuple(scripts or DEFAULT_SCRIPTS))
        if queue is None or settings.temporal.task_queue_agents in queue:  # agents run there
            announce_agents(settings, console)
        services = make_services(settings)
    except EnvFactoryError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc
    janitor = start_janitor(settings, console)

    async def main() -> None:
        stop = asyncio.Event()
        stop_on_signals(stop)
        queues = queue or None
        await serve(settings, services, queues, stop=stop, on_ready=lambda _c: console.print(
            f"worker polling {', '.join(queues or [settings.temporal.task_queue_agents, settings.temporal.task_queue_sandbox])} — Ctrl-C to stop"))

    try:
        asyncio.run(main())
    except EnvFactoryError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc
    finally:
        if janitor is not None:
            janitor.stop()
