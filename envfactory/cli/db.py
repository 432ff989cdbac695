"""`envfactory db …`: schema migrations for the configured database.

The embedded SQLite default is upgraded automatically by every command that opens the
store; an external database (ENVFACTORY_DATABASE_URL) is upgraded only on request, here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer
from sqlalchemy.exc import DBAPIError

from envfactory.core.errors import EnvFactoryError, StoreError
from envfactory.core.settings import load_settings
from envfactory.store import migrate

app = typer.Typer(
    name="db", help="Database schema: upgrade, downgrade, current, check.", no_args_is_help=True
)


def _url() -> str:
    settings = load_settings()
    if settings.embedded_db:
        Path(settings.home).mkdir(parents=True, exist_ok=True)
    return settings.db_url


def _fail(exc: EnvFactoryError) -> NoReturn:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(1)


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@app.command("upgrade")
def upgrade(revision: Annotated[str, typer.Argument(help="Target revision.")] = "head") -> None:
    """Upgrade the schema (to the newest revision by default).

    Examples:

      envfactory db upgrade

      ENVFACTORY_DATABASE_URL=postgresql+psycopg://user@host/db envfactory db upgrade
    """
    url = _url()
    try:
        migrate.upgrade(url, revision)
        typer.echo(f"{_redacted(url)}: at revision {migrate.current(url)}")
    except EnvFactoryError as exc:
        _fail(exc)


@app.command("downgrade")
def downgrade(
    revision: Annotated[str, typer.Argument(help="Target revision: an id, -1, or base.")],
) -> None:
    """Downgrade the schema (data in dropped tables is lost).

    Examples:

      envfactory db downgrade -1

      envfactory db downgrade base
    """
    url = _url()
    try:
        migrate.downgrade(url, revision)
        typer.echo(f"{_redacted(url)}: at revision {migrate.current(url) or 'base (empty)'}")
    except EnvFactoryError as exc:
        _fail(exc)


@app.command("current")
def current() -> None:
    """Print the database's revision and the code's head revision.

    Example:

      envfactory db current
    """
    url = _url()
    try:
        have, want = migrate.current(url), migrate.head()
    except EnvFactoryError as exc:
        _fail(exc)
    state = "up to date" if have == want else "needs `envfactory db upgrade`"
    typer.echo(f"{_redacted(url)}: revision {have or 'base (empty)'}, head {want} ({state})")


@app.command("check")
def check() -> None:
    """Exit 1 if the database schema differs from the code's models (like `alembic check`).

    Example:

      envfactory db check
    """
    url = _url()
    try:
        diffs = migrate.check(url)
    except DBAPIError as exc:
        _fail(StoreError(f"cannot inspect {_redacted(url)}: {exc.orig}"))
    if diffs:
        for d in diffs:
            typer.echo(f"  {d}", err=True)
        typer.echo(
            f"error: {len(diffs)} difference(s) between the models and {_redacted(url)}", err=True
        )
        raise typer.Exit(1)
    typer.echo(f"{_redacted(url)}: schema matches the models")
