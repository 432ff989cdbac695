"""`envfactory review list|show|decide|serve`: the review queue from the terminal, and
the HTTP API + pages. Decisions go through the same path as the API: stored (audited,
once), then handed to the waiting pipeline.

Who decides from the terminal: with ENVFACTORY_REVIEWER_TOKEN set, the reviewer that token
belongs to (audited as `cli-token`). Without it, the local operator,
`operator:<unix user>@<host>` (audited as `local-operator`): someone with access to the
database, not a verified reviewer; an `--as NAME` is then kept only as a note.
"""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import socket
from typing import TYPE_CHECKING, Annotated

import typer

from envfactory.core.errors import EnvFactoryError, InvalidInput
from envfactory.core.models import AuthMethod, Decision, ReviewerRole, ReviewItem, ReviewState
from envfactory.core.settings import Settings, load_settings

if TYPE_CHECKING:
    from envfactory.api.context import DecisionSink
    from envfactory.store import Store

app = typer.Typer(
    name="review",
    help="The shortcut review queue.\n\nExamples:\n\n  envfactory review list\n\n"
    "  envfactory review show rev-1a2b\n\n"
    "  ENVFACTORY_REVIEWER_TOKEN=efr_… envfactory review decide rev-1a2b confirm -m 'edits tests'\n\n"
    "  envfactory review serve --port 8600",
    no_args_is_help=True,
)


def _store() -> Store:
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
        how = a.auth.value + (f"; {a.note}" if a.note else "")
        typer.echo(f"audit: {a.at} {a.reviewer} {a.decision.value} ({how})")


@app.command("decide")
def decide(
    item_id: str,
    decision: Annotated[Decision, typer.Argument(help="confirm | dismiss")],
    claimed: Annotated[
        str | None,
        typer.Option("--as", help="with a token: must be its reviewer; without: kept as a note"),
    ] = None,
    comment: Annotated[str, typer.Option("-m", "--comment")] = "",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Record a decision (once; a second one fails with the first's author) and tell the
    pipeline. Decides as the reviewer of ENVFACTORY_REVIEWER_TOKEN, or else as the local
    operator (operator:<unix user>@<host>), which the audit says."""
    from envfactory.api.pipeline import pipeline_sinks
    from envfactory.store import Store

    settings = load_settings()
    store = Store.from_settings(settings)
    try:
        who, auth, note = _identity(settings, store, claimed)
        item = store.reviews.decide(item_id, who, decision, comment, auth=auth, note=note)
    except EnvFactoryError as e:
        raise _fail(e) from e
    if auth == AuthMethod.LOCAL_OPERATOR:
        typer.secho(
            f"no ENVFACTORY_REVIEWER_TOKEN: recorded as {who}, a local operator "
            "(not a verified reviewer)",
            err=True,
            fg=typer.colors.YELLOW,
        )
    told, error = True, None
    try:
        asyncio.run(_deliver(pipeline_sinks(settings, store).on_decision, item))
    except Exception as e:  # noqa: BLE001 — the decision is stored either way; say what happened
        told, error = False, str(e)
    out = {
        "item": item.model_dump(mode="json"),
        "auth": auth.value,
        "workflow_notified": told,
        "notify_error": error,
    }
    typer.echo(
        json.dumps(out, indent=2)
        if as_json
        else f"{item.id}: {item.state.value} by {who}"
        + ("" if told else f" (pipeline not told: {error})")
    )


def _identity(settings: Settings, store: Store, claimed: str | None) -> tuple[str, AuthMethod, str]:
    """(name, how it was established, unverified note) for a decision from this terminal."""
    token = settings.reviewer_token.get_secret_value().strip() if settings.reviewer_token else ""
    if not token:  # unset or empty
        note = f"claimed --as {claimed} (not verified)" if claimed else ""
        return f"operator:{_unix_user()}@{socket.gethostname()}", AuthMethod.LOCAL_OPERATOR, note
    who = store.reviewers.find_by_token(token)
    if who is None:
        raise InvalidInput(
            "ENVFACTORY_REVIEWER_TOKEN is not a valid reviewer token",
            hint="ask for a new one (`envfactory reviewer add NAME`), or unset "
            "it to decide as the local operator",
        )
    if not who.role.allows(ReviewerRole.REVIEWER):
        raise InvalidInput(f"{who.name} is a {who.role.value}; only reviewers decide")
    if claimed not in (None, who.name):
        raise InvalidInput(
            f"--as {claimed} is not the token's reviewer ({who.name})",
            hint="drop --as: the token says who you are",
        )
    return who.name, AuthMethod.CLI_TOKEN, ""


def _unix_user() -> str:
    """The real user id's name (not $USER, which anyone can set)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return f"uid{os.getuid()}"


async def _deliver(sink: DecisionSink, item: ReviewItem) -> None:
    await sink(item)


@app.command("serve")
def serve(
    host: Annotated[str | None, typer.Option()] = None,
    port: Annotated[int | None, typer.Option()] = None,
) -> None:
    """Run the HTTP API and the review pages (OpenAPI at /docs)."""
    import uvicorn

    from envfactory.api.app import freeze_heap
    from envfactory.api.pipeline import pipeline_app

    settings = load_settings()
    app_ = pipeline_app(settings)
    freeze_heap()
    uvicorn.run(app_, host=host or settings.api.host, port=port or settings.api.port)
