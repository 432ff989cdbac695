"""`envfactory review list|show|decide|serve`: the review queue from the terminal, and
the HTTP API + pages. Decisions go through the same path as the API: stored (audited,
once), then handed to the waiting pipeline."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer

from envfactory.core.errors import EnvFactoryError
from envfactory.core.models import Decision, ReviewState
from envfactory.core.settings import load_settings

app = typer.Typer(
    name="review",
    help="The shortcut review queue.\n\nExamples:\n\n  envfactory review list\n\n"
    "  envfactory review show rev-1a2b\n\n  envfactory review decide rev-1a2b confirm --as ana -m 'edits tests'\n\n"
    "  envfactory review serve --port 8600",
    no_args_is_help=True,
)


def _store() -> Any:
    from envfactory.store import Store

    return Store.from_settings(load_settings())


def _fail(e: EnvFactoryError) -> typer.Exit:
    typer.secho(f"error: {e}", fg=typer.colors.RED, err=True)
    return typer.Exit(2)


@app.command("list")
def list_(
    state: Annotated[str, typer.Option(help="open | confirmed | dismissed | all")] = "open",
    env_id: Annotated[str | None, typer.Option("--env")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Items in the queue, oldest first, with counts per state."""
    from envfactory.api.views import queue_view

    chosen = None if state == "all" else ReviewState(state)
    view = queue_view(_store(), chosen, env_id)
    if as_json:
        typer.echo(view.model_dump_json(indent=2))
        return
    typer.echo("  ".join(f"{k}: {v}" for k, v in view.counts.items()))
    for it in view.items:
        typer.echo(f"{it.id:<20} {it.env_id:<24} {it.state.value:<10} {it.reviewer or ''}")


@app.command("show")
def show(item_id: str, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """One item: evidence, state diff, trajectory excerpt, audit."""
    from envfactory.api.views import item_view

    try:
        view = item_view(_store(), item_id)
    except EnvFactoryError as e:
        raise _fail(e) from e
    if as_json:
        typer.echo(view.model_dump_json(indent=2))
        return
    it = view.item
    typer.echo(f"{it.id}  {it.env_id}  {it.state.value}")
    if view.evidence:
        typer.echo(f"evidence: {view.evidence.summary}")
    for row in view.diff:
        typer.echo(f"  {row.kind} {row.path}")
    for s in view.excerpt:
        typer.echo(f"  {'>>' if s.suspicious else '  '} step {s.index}: {'; '.join(s.calls)}")
    for a in view.audit:
        typer.echo(f"audit: {a.at} {a.reviewer} {a.decision.value}")


@app.command("decide")
def decide(
    item_id: str,
    decision: Annotated[str, typer.Argument(help="confirm | dismiss")],
    reviewer: Annotated[str, typer.Option("--as", help="your reviewer name")],
    comment: Annotated[str, typer.Option("-m", "--comment")] = "",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Record a decision (once; a second one fails with the first's author) and tell the pipeline."""
    from envfactory.api.workflow_sink import default_sinks

    settings = load_settings()
    store = _store()
    try:
        item = store.reviews.decide(item_id, reviewer, Decision(decision), comment)
    except EnvFactoryError as e:
        raise _fail(e) from e
    told, error = True, None
    try:
        on_decision, _ = default_sinks(settings, store)
        asyncio.run(_call(on_decision, item))
    except Exception as e:  # noqa: BLE001 — the decision is stored either way; say what happened
        told, error = False, str(e)
    out = {"item": item.model_dump(mode="json"), "workflow_notified": told, "notify_error": error}
    typer.echo(json.dumps(out, indent=2) if as_json else f"{item.id}: {item.state.value} by {reviewer}"
               + ("" if told else f" (pipeline not told: {error})"))  # fmt: skip


async def _call(sink: Any, item: Any) -> None:
    await sink(item)


@app.command("serve")
def serve(
    host: Annotated[str | None, typer.Option()] = None,
    port: Annotated[int | None, typer.Option()] = None,
) -> None:
    """Run the HTTP API and the review pages (OpenAPI at /docs)."""
    import uvicorn

    from envfactory.api import create_app

    settings = load_settings()
    app_ = create_app(settings)
    uvicorn.run(app_, host=host or settings.api.host, port=port or settings.api.port)
