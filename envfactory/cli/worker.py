"""`envfactory worker`: poll Temporal task queues and run the pipeline's activities.

A process edge: settings are loaded here, the services (store, Docker engine, models)
are built here, once, and handed to the worker. A janitor (`sandboxes.janitor`) removes
sandboxes of dead owners at start and every `sandbox.janitor_period_s`. Scale out by starting more workers:
`envfactory worker --queue sandbox` on every Docker host, `--queue agents` where the
model endpoint is reachable.
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
from envfactory.core.models import AgentRole
from envfactory.core.settings import Settings, load_settings

if TYPE_CHECKING:
    from workflows.real import RealServices

#: extra script directories; the packaged scripts (envfactory/agents/scripts) are always used
DEFAULT_SCRIPTS: tuple[Path, ...] = ()
EXAMPLE_SEEDS = Path("examples/seeds")


def example_aliases(settings: Settings, seeds_dir: Path = EXAMPLE_SEEDS) -> dict[str, tuple[str, ...]]:
    """seed id → its example directory name, so scripted agents find the example's scripts
    however the seed was submitted (demo, `seed submit`, API)."""
    from envfactory.seeds import load_seed

    out: dict[str, tuple[str, ...]] = {}
    for path in sorted(seeds_dir.glob("*/seed.yaml")) if seeds_dir.is_dir() else ():
        try:
            out[load_seed(path.parent, settings.seeds).seed_id] = (path.parent.name,)
        except EnvFactoryError:
            continue  # a broken example is reported by `seed submit`, not here
    return out


def make_services(settings: Settings, scripts: tuple[Path, ...] = DEFAULT_SCRIPTS,
                  aliases: Mapping[str, tuple[str, ...]] | None = None,
                  engine: Any = None) -> RealServices:
    """The real services for a worker process (imports Docker and the agents lazily)."""
    import envfactory.agents.scripts as packaged
    from envfactory.agents import resolve_api_key
    from sandboxes import DockerEngine
    from workflows.models_source import ModelSource, ScriptBook, role_settings
    from workflows.real import build_services

    keys = {r.value: resolve_api_key(role_settings(settings.agents, r), os.environ)
            for r in (AgentRole.RESEARCH, AgentRole.JUDGE, AgentRole.VERIFIER, AgentRole.RED_TEAM)}  # fmt: skip
    book = ScriptBook((Path(packaged.__file__).parent, *scripts))
    names = {**example_aliases(settings), **(aliases or {})}
    models = ModelSource(settings.agents, keys, book, names)
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
