"""The `envfactory` command line: sub-commands by noun. Settings are loaded here, once."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="envfactory",
    help="Turn real workflows into verifiable RL environments and train on them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def main() -> None:
    app()

from .pack import app as _pack_app  # noqa: E402

app.add_typer(_pack_app, name="pack")
