"""`envfactory reviewer add|list|remove`: who may use the review API and pages.

Reviewers live in the database (every API instance over it agrees at once). A token is
printed once, by `add`; only its hash is kept. Lost it? Remove and add again. Removing a
reviewer also ends their signed-in page sessions.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from envfactory.core.errors import EnvFactoryError
from envfactory.core.settings import load_settings

if TYPE_CHECKING:
    from envfactory.api.auth import ReviewerRegistry

app = typer.Typer(
    name="reviewer",
    help="Manage reviewer tokens.\n\nExamples:\n\n  envfactory reviewer add ana --role reviewer\n\n"
    "  envfactory reviewer add ops --role viewer\n\n  envfactory reviewer list",
    no_args_is_help=True,
)


def _registry() -> ReviewerRegistry:
    from envfactory.api.auth import reviewer_registry
    from envfactory.store import Store

    settings = load_settings()
    try:
        return reviewer_registry(settings, Store.from_settings(settings))
    except EnvFactoryError as e:  # a broken old reviewers.json, an unreachable database
        typer.secho(f"error: {e}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from e


@app.command("add")
def add(
    name: str,
    role: Annotated[
        str, typer.Option("--role", help="reviewer (decides) | viewer (reads)")
    ] = "reviewer",
) -> None:
    """Create a reviewer and print their token (shown this once only)."""
    from envfactory.core.models import ReviewerRole

    if role not in {r.value for r in ReviewerRole}:
        raise typer.BadParameter("--role is reviewer or viewer")
    try:
        token = _registry().add(name, ReviewerRole(role))
    except EnvFactoryError as e:
        typer.secho(f"error: {e}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from e
    typer.echo(token)
    typer.secho(
        f"token for {name} ({role}); it is not stored and will not be shown again",
        err=True,
        fg=typer.colors.YELLOW,
    )


@app.command("list")
def list_(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Reviewers and their roles (never their tokens)."""
    rows = [
        {"name": r.name, "role": r.role.value, "created_at": r.created_at.isoformat()}
        for r in _registry().list()
    ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        typer.echo(f"{r['name']:<24} {r['role']:<9} {r['created_at']}")


@app.command("remove")
def remove(name: str) -> None:
    """Revoke a reviewer's token."""
    try:
        _registry().remove(name)
    except EnvFactoryError as e:
        typer.secho(f"error: {e}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from e
    typer.echo(f"removed {name}")
