"""`envfactory worker`: poll Temporal task queues and run the pipeline's activities.

A process edge: settings are loaded here, the services (store, Docker engine, models)
are built here, once, and handed to the worker. Scale out by starting more workers:
`envfactory worker --queue sandbox` on every Docker host, `--queue agents` where the
model endpoint is reachable.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from envfactory.core.errors import EnvFactoryError
from envfactory.core.models import AgentRole
from envfactory.core.settings import Settings, load_settings

DEFAULT_SCRIPTS = (Path("examples/scripts"), Path("examples/seeds"))


def make_services(settings: Settings, scripts: tuple[Path, ...] = DEFAULT_SCRIPTS,
                  aliases: dict[str, tuple[str, ...]] | None = None):  # type: ignore[no-untyped-def]
    """The real services for a worker process (imports Docker and the agents lazily)."""
    from envfactory.agents import resolve_api_key
    from sandboxes import DockerEngine
    from workflows.models_source import ModelSource, ScriptBook, role_settings
    from workflows.real import build_services

    keys = {r.value: resolve_api_key(role_settings(settings.agents, r), os.environ)
            for r in (AgentRole.RESEARCH, AgentRole.JUDGE, AgentRole.VERIFIER, AgentRole.RED_TEAM)}  # fmt: skip
    models = ModelSource(settings.agents, keys, ScriptBook(tuple(scripts)), dict(aliases or {}))
    return build_services(settings, DockerEngine(settings.sandbox), models)


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

    settings = load_settings()
    console = Console(stderr=True)
    try:
        services = make_services(settings, tuple(scripts or DEFAULT_SCRIPTS))
    except EnvFactoryError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc

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
