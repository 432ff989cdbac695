"""`envfactory images`: local base images (no registry needed).

Examples:
    envfactory images base                  # build (or reuse) the python base image
    envfactory images base --flavour minimal --json
"""

from __future__ import annotations

import json

import typer
from rich.console import Console

from envfactory.core.settings import load_settings

app = typer.Typer(
    help="Local base images, built with debootstrap and cached by recipe.", no_args_is_help=True
)


@app.command()
def base(
    flavour: str = typer.Option(
        "python", help="python (like the official python image) or minimal."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON object for machines."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Stream the build log."),
) -> None:
    """Build the local base image for FLAVOUR, or reuse it while its recipe is unchanged.

    Example: envfactory images base --flavour python
    """
    from sandboxes import DockerEngine

    settings = load_settings()
    console = Console(stderr=True)
    engine = DockerEngine(settings.sandbox)
    with console.status(f"ensuring the {flavour} base image (first build takes ~1-2 min)"):
        tag = engine.ensure_base_image(flavour, log=console.print if verbose else None)
    image = engine.client.images.get(tag)
    if as_json:
        typer.echo(json.dumps({"flavour": flavour, "tag": tag, "image": image.id}))
    else:
        typer.echo(f"{tag}  {image.id}")
