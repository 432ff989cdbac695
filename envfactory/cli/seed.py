"""`envfactory seed …`: submit, list and show task seeds.

Settings are loaded here, at the edge. A seed is validated before the store is opened, so a
bad seed leaves no trace — not even an empty database. Exit codes: 0 ok, 1 refused (the
message names the field or file and how to fix it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.table import Table

from envfactory.agents.scriptbook import require_scripts, script_book, seed_names
from envfactory.core.errors import EnvFactoryError, InvalidSeed
from envfactory.core.models import TaskSeed, shown
from envfactory.core.settings import Settings, load_settings
from envfactory.seeds import SeedDraft, load_seed, store_draft
from envfactory.store import ArtifactStore, Store

app = typer.Typer(
    name="seed",
    help="Submit real expert workflows as task seeds, list and inspect them.",
    no_args_is_help=True,
)
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]


def _out() -> Console:
    return Console(highlight=False, soft_wrap=True)


def fail(exc: EnvFactoryError, as_json: bool) -> NoReturn:
    """Print an error a user can act on (JSON on stdout with --json) and exit 1."""
    if as_json:
        body = {"error": type(exc).__name__, "message": exc.message, "hint": exc.hint}
        if isinstance(exc, InvalidSeed):
            body["where"] = exc.where
        typer.echo(json.dumps(body))
    else:
        typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(1)


def _stores(settings: Settings) -> tuple[Store, ArtifactStore]:
    return Store.from_settings(settings), ArtifactStore.from_settings(settings)


def _size(n: int) -> str:
    return f"{n / 1000:.1f} kB" if n >= 1000 else f"{n} B"


@app.command("submit")
def submit(
    path: Annotated[
        Path,
        typer.Argument(help="A seed.yaml file, or a directory holding seed.yaml and its files."),
    ],
    as_json: JsonOpt = False,
    start: Annotated[
        bool,
        typer.Option(
            "--start/--no-start",
            help="Start its SynthesizeEnvironment pipeline when a Temporal server is reachable.",
        ),
    ] = True,
) -> None:
    """Validate a seed, store it (with its attachments) and start its pipeline.

    A seed no configured model can run (a role on the scripted backend has no recorded
    script for it) is refused, and nothing is stored; with --no-start it is stored only.

    Examples:

      envfactory seed submit examples/seeds/etl-silent-row-drop

      envfactory seed submit my-seed/seed.yaml --json --no-start
    """
    try:
        settings = load_settings()
        draft = load_seed(path, settings.seeds)
        if start and draft.fields.history is None:  # refused before anything is stored:
            # its pipeline would stop at a role (mining a history needs no model)
            require_runnable(settings, draft_names(draft), draft.fields.title)
        store, artifacts = _stores(settings)
        with store:
            seed = store_draft(draft, store=store, artifacts=artifacts)
    except EnvFactoryError as exc:
        fail(exc, as_json)
    started = _start_pipeline(settings, seed) if start else "not started (--no-start)"
    if as_json:
        typer.echo(seed.model_dump_json())  # stdout stays exactly a TaskSeed
        typer.echo(f"pipeline: {started}", err=True)
        return
    total = sum(a.size for a in seed.attachments)
    _out().print(
        f"accepted [bold]{seed.id}[/]: {seed.title}\n"
        f"  domain {seed.domain} · {len(seed.attachments)} attachment(s), {_size(total)} · "
        f"max_turns {seed.constraints.max_turns} · time budget {seed.constraints.time_budget_s} s\n"
        f"  see it with: envfactory seed show {seed.id}\n"
        f"  pipeline: {started}"
    )


def draft_names(draft: SeedDraft) -> tuple[str, ...]:
    f = draft.fields
    return seed_names(draft.seed_id, f.title, draft.content_hash, f.source)


def require_runnable(settings: Settings, names: tuple[str, ...], title: str) -> None:
    """ConfigError when a scripted role has no recorded script for this seed."""
    book = script_book(settings.agents.script_dirs)
    require_scripts(settings.agents, book, names, title)


def _start_pipeline(settings: Settings, seed: TaskSeed) -> str:
    """The seed is stored either way; a pipeline that cannot start yet is said plainly. A
    seed with `history:` starts MineRepository on its repository instead."""
    from workflows.client import start_seed

    try:
        return f"started workflow {start_seed(settings, seed)} (see: envfactory status)"
    except EnvFactoryError as exc:
        return (
            f"not started: {exc.message}; the seed is stored — run `envfactory up`, "
            f"then `envfactory seed start {seed.id}`"
        )


@app.command("start")
def start_seed(seed_id: Annotated[str, typer.Argument(help="A stored seed's id.")]) -> None:
    """Start the SynthesizeEnvironment pipeline for a stored seed (MineRepository for a
    seed with `history:`).

    Example:

      envfactory seed start seed-6245dc41f7a5
    """
    try:
        settings = load_settings()
        store, _ = _stores(settings)
        with store:
            seed = store.seeds.get(seed_id)
        if seed.history is None:
            names = seed_names(seed.id, seed.title, seed.content_hash, seed.source)
            require_runnable(settings, names, seed.title)
    except EnvFactoryError as exc:
        fail(exc, False)
    from workflows.client import start_seed

    try:
        typer.echo(f"started workflow {start_seed(settings, seed)}")
    except EnvFactoryError as exc:
        fail(exc, False)


@app.command("list")
def list_seeds(
    as_json: JsonOpt = False,
    domain: Annotated[str | None, typer.Option(help="Only seeds of this domain.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many, newest first.")] = 100,
) -> None:
    """List stored seeds, newest first.

    Examples:

      envfactory seed list

      envfactory seed list --domain data-engineering --json
    """
    try:
        with Store.from_settings(load_settings()) as store:
            seeds = store.seeds.list(domain=domain, limit=limit)
    except EnvFactoryError as exc:
        fail(exc, as_json)
    if as_json:
        typer.echo(json.dumps([s.model_dump(mode="json") for s in seeds]))
        return
    if not seeds:
        _out().print("no seeds yet: submit one with `envfactory seed submit DIR`")
        return
    table = Table(box=None, pad_edge=False)
    for name in ("id", "submitted (UTC)", "domain", "files"):
        table.add_column(name, no_wrap=True)
    table.add_column("title", overflow="fold")
    for s in seeds:
        table.add_row(
            s.id,
            f"{s.created_at:%Y-%m-%d %H:%M}",
            _text(s.domain),
            str(len(s.attachments)),
            _text(s.title),
        )
    _out().print(table)


@app.command("show")
def show(
    seed_id: Annotated[str, typer.Argument(help="A seed id, as `seed list` prints it.")],
    as_json: JsonOpt = False,
) -> None:
    """Show one seed: fields, constraints, attachments and the description.

    Examples:

      envfactory seed show seed-3f2a9c1b7d0e

      envfactory seed show seed-3f2a9c1b7d0e --json
    """
    try:
        with Store.from_settings(load_settings()) as store:
            seed = store.seeds.get(seed_id)
    except EnvFactoryError as exc:
        fail(exc, as_json)
    if as_json:
        typer.echo(seed.model_dump_json())
        return
    _print_seed(seed)


def _print_seed(seed: TaskSeed) -> None:
    """What a user wrote, printed as text: control characters as escapes (a seed stored
    before they were refused), brackets never read as console markup."""
    out = _out()
    c = seed.constraints
    out.print(f"[bold]{seed.id}[/]  {_text(seed.title)}")
    out.print(f"  domain      {_text(seed.domain)}")
    out.print(f"  submitted   {seed.created_at:%Y-%m-%d %H:%M:%S} UTC")
    out.print(f"  source      {_text(seed.source or '-')}")
    out.print(f"  repository  {_text(seed.repository or '-')}")
    if seed.history is not None:
        h = seed.history
        what = ", ".join(h.revisions) or "HEAD's history"
        more = (f"; paths {', '.join(h.paths)}" if h.paths else "") + (
            f"; newest {h.limit}" if h.limit else ""
        )
        out.print(f"  history     mine {_text(what + more)}")
    out.print(
        f"  constraints max_turns {c.max_turns}, time budget {c.time_budget_s} s, base {c.base_image}"
    )
    out.print(f"  content     sha256 {seed.content_hash}")
    for a in seed.attachments:
        out.print(f"  attachment  {_text(a.path)} ({_size(a.size)}, {a.key[:12]})")
    out.print()
    out.print(Markdown(shown(seed.description, keep="\n\t")))


def _text(value: str) -> str:
    return escape(shown(value))
