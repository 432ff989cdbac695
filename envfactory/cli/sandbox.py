"""`envfactory sandbox`: housekeeping for Docker sandboxes.

Examples:
    envfactory sandbox gc                   # remove orphaned sandboxes (owner process gone)
    envfactory sandbox gc --all --images    # also live ones and snapshot images (careful)
    envfactory sandbox gc --run-id run-42 --json
    envfactory sandbox gc --foreign-older-than 86400   # also other hosts' sandboxes a day old
    envfactory sandbox gc --all-homes       # also other installs' orphans on this engine

Only this install's sandboxes are touched (the home directory's scope, a label on each),
so two installs sharing one Docker engine never reap each other's.

Workers and `envfactory up` run the same sweep by themselves (the janitor), at start and
every `ENVFACTORY_SANDBOX__JANITOR_PERIOD_S` seconds.
"""

from __future__ import annotations

import json

import typer

from envfactory.core.settings import load_settings

app = typer.Typer(help="Sandbox housekeeping.", no_args_is_help=True)


@app.command()
def gc(
    older_than: float = typer.Option(
        0.0, help="Only objects created at least this many seconds ago."
    ),
    run_id: str = typer.Option(None, help="Only objects of this run id."),
    all_: bool = typer.Option(False, "--all", help="Also sandboxes whose owner process is alive."),
    images: bool = typer.Option(False, help="Also remove snapshot (state) images."),
    foreign_older_than: float = typer.Option(
        None, help="Also sandboxes owned by another host, once created this many seconds ago."
    ),
    all_homes: bool = typer.Option(
        False, "--all-homes", help="Also orphans of other installs (homes) on this engine."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list for machines."),
) -> None:
    """Remove our orphaned containers, volumes and (with --images) snapshot images.

    Only objects carrying envfactory's ownership labels are touched, never anything else.
    Example: envfactory sandbox gc --older-than 3600
    """
    from sandboxes import DockerEngine

    engine = DockerEngine(load_settings().sandbox)
    removed = engine.gc(
        older_than_s=older_than,
        run_id=run_id,
        include_live=all_,
        images=images,
        foreign_ttl_s=foreign_older_than,
        all_homes=all_homes,
    )
    if as_json:
        typer.echo(json.dumps(removed))
    else:
        for item in removed:
            typer.echo(item)
        typer.echo(f"removed {len(removed)}", err=True)
