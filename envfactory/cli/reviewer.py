"""`envfactory reviewer add|list|remove`: who may use the review API and pages.

A token is printed once, by `add`; only its hash is kept. Lost it? Remove and add again.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from envfactory.core.errors import EnvFactoryError
from envfactory.core.settings import load_settings

app = typer.Typer(
    name="reviewer",
    help="Manage reviewer tokens.\n\nExamples:\n\n  envfactory reviewer add ana --role reviewer\n\n"
    "  envfactory reviewer add ops --role viewer\n\n  envfactory reviewer list",
    no_args_is_help=True,
)


def _registry():  # type: ignore[no-untyped-def]
    from envfactory.api.app import reviewers_path
    from envfactory.api.auth import FileReviewers

    return FileReviewers(reviewers_path(load_settings()))


@app.command("add")
def add(
    name: str,
    role: Annotated[
        str, typer.Option("--role", help="reviewer (decides) | viewer (reads)")
    ] = "reviewer",
) -> None:
    """Create a reviewer and print their token (shown this once only)."""
    from envfactory.api.auth import Role

    if role not in {r.value for r in Role}:
        raise typer.BadParameter("--role is reviewer or viewer")
    try:
        token = _registry().add(name, Role(role))
    except EnvFactoryError as e:
        typer.secho(f"error: {e}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from e
    typer.echo(token)
    typer.secho(f"token for {name} ({role}); it is not stored and will not be shown again",
                err=True, fg=typer.colors.YELLOW)  # fmt: skip


@app.command("list")
def list_(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Reviewers and their roles (never their tokens)."""
    rows = [
        {"name": r.name, "role": r.role.value, "created_at": r.created_at}
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
