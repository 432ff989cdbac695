"""The `envfactory` command line: sub-commands by noun. Settings are loaded here, once."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="envfactory",
    help="Turn real workflows into verifiable RL environments and train on them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

from . import agents, db, seed  # noqa: E402  (sub-apps register on `app` above)

app.add_typer(seed.app, name="seed")
app.add_typer(db.app, name="db")
app.add_typer(agents.app, name="agents")


def _register() -> None:
    from . import images, sandbox

    app.add_typer(images.app, name="images")
    app.add_typer(sandbox.app, name="sandbox")


_register()

from . import demo as _demo  # noqa: E402
from . import status as _status  # noqa: E402
from . import up as _up  # noqa: E402
from . import worker as _worker  # noqa: E402

app.command("up")(_up.up)
app.command("worker")(_worker.worker)
app.command("status")(_status.status)
app.command("demo")(_demo.demo)


def main() -> None:
    app()
