"""`envfactory worker`: poll Temporal task queues and run the pipeline's activities.

Options and messages only: the services (store, Docker engine, models) are built by the
composition root, `workflows.composition`, and handed to the worker. A janitor (`sandboxes.janitor`) removes
sandboxes of dead owners at start and every `sandbox.janitor_period_s`. Scale out by starting more workers:
`envfactory worker --queue sandbox` on every Docker host, `--queue agents` where the
model endpoint is reachable.

Before polling, the worker probes every role on the openai backend and prints which
endpoint and model each role will use; it refuses to start when one does not answer.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from envfactory.core.errors import EnvFactoryError
from envfactory.core.settings import Settings, load_settings
from workflows.composition import (
    DEFAULT_SCRIPTS,
    agent_plans,
    make_services,
    start_janitor,
    with_scripts,
)

__all__ = [
    "DEFAULT_SCRIPTS",
    "announce_agents",
    "make_services",
    "say_to",
    "start_janitor",
    "stop_on_signals",
    "with_scripts",
    "worker",
]


def say_to(console: Console) -> Callable[[str], None]:
    """A line printer for the composition root's messages (janitor, agents)."""
    return lambda line: console.print(line, highlight=False)


def announce_agents(settings: Settings, console: Console) -> None:
    """Say which endpoint and model every openai role will use (ConfigError when one
    does not answer)."""
    for line in agent_plans(settings):
        console.print(f"agents: {line}", highlight=False)


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
    janitor = start_janitor(settings, say_to(console))

    async def main() -> None:
        stop = asyncio.Event()
        stop_on_signals(stop)
        queues = queue or None
        await serve(
            settings,
            services,
            queues,
            stop=stop,
            on_ready=lambda _c: console.print(
                f"worker polling {', '.join(queues or [settings.temporal.task_queue_agents, settings.temporal.task_queue_sandbox])} — Ctrl-C to stop"
            ),
        )

    try:
        asyncio.run(main())
    except EnvFactoryError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc
    finally:
        if janitor is not None:
            janitor.stop()
