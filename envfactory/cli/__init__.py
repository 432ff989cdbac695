"""The `envfactory` command line: sub-commands by noun. Settings are loaded here, once.

seed      submit / list / show task seeds
task      existing task suites in the store: import / list / show / validate
repo      mine a repository's fix commits into gated environments
validate  run every gate on Harbor / Terminal-Bench task directories
review    the human shortcut-review queue (list / show / decide / serve)
pack      export / verify / import verified environment packs
train     SAO training on a pack or a synthetic task (extra `trainer`)
up, worker, status, demo   the Temporal pipeline
db, images, sandbox, agents, reviewer   operations
"""

from __future__ import annotations

import typer

from envfactory.core.errors import EnvFactoryError

app = typer.Typer(
    name="envfactory",
    help="Turn real workflows into verifiable RL environments and train on them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

# Sub-modules register on `app` above, so they are imported after it exists.
from . import (  # noqa: E402
    agents,
    db,
    demo,
    images,
    pack,
    repo,
    review,
    reviewer,
    sandbox,
    seed,
    status,
    task,
    train,
    up,
    validate,
    worker,
)

app.add_typer(seed.app, name="seed")
app.add_typer(task.app, name="task")
app.add_typer(repo.app, name="repo")
app.command("validate", epilog=validate.HELP)(validate.validate)
app.add_typer(review.app, name="review")
app.add_typer(pack.app, name="pack")
app.add_typer(train.app, name="train")
app.command("up")(up.up)
app.command("worker")(worker.worker)
app.command("status")(status.status)
app.command("demo")(demo.demo)
app.add_typer(db.app, name="db")
app.add_typer(images.app, name="images")
app.add_typer(sandbox.app, name="sandbox")
app.add_typer(agents.app, name="agents")
app.add_typer(reviewer.app, name="reviewer")


def main() -> None:
    """The `envfactory` entry point; SIGTERM and SIGINT end any command with its sandboxes
    removed (`ending.py`)."""
    from .ending import sandboxes_removed_on_signals

    try:
        with sandboxes_removed_on_signals():
            app()
    except (
        EnvFactoryError
    ) as exc:  # e.g. invalid ENVFACTORY_* settings, met before a command's own handling
        typer.echo(f"error: {exc}", err=True)
        raise SystemExit(1) from exc
