"""`envfactory pack export|verify|import`: packs of verified environments for RL training.

Settings are loaded here (the process edge) and passed down; the store, the artifact
store and the Docker engine are opened only by the commands that need them.
"""

from __future__ import annotations

import getpass
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from envfactory.core.errors import EnvFactoryError
from envfactory.core.models import PackManifest
from envfactory.core.settings import Settings, load_settings

app = typer.Typer(
    name="pack",
    help="Export, verify and import packs of verified environments.\n\n"
    "Examples:\n\n"
    "  envfactory pack export --all-published --out envs.tar\n\n"
    "  envfactory pack export --env env-3f2a --out harbor/ --format harbor\n\n"
    "  envfactory pack verify envs.tar\n\n"
    "  envfactory pack import envs.tar",
    no_args_is_help=True,
)


def _fail(err: EnvFactoryError) -> typer.Exit:
    typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
    return typer.Exit(2)


def _summary(manifest: PackManifest) -> dict[str, Any]:
    return {
        "id": manifest.id,
        "format": manifest.format,
        "created_by": manifest.created_by,
        "created_at": manifest.created_at.isoformat(),
        "environments": [e.env_id for e in manifest.environments],
        "members": len(manifest.members),
        "bytes": sum(m.size for m in manifest.members),
    }


def _print(data: dict[str, Any], as_json: bool, title: str) -> None:
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    typer.echo(title)
    for k, v in data.items():
        typer.echo(f"  {k}: {', '.join(map(str, v)) if isinstance(v, list) else v}")


def _stores(settings: Settings) -> tuple[Any, Any]:
    from envfactory.store import ArtifactStore, Store

    return Store.from_settings(settings), ArtifactStore.from_settings(settings)


def _engine(settings: Settings) -> Any:
    from sandboxes import DockerEngine

    return DockerEngine(settings.sandbox)


def _record(store: Any, artifacts: Any, manifest: PackManifest, out: Path) -> None:
    """Remember the pack; a tar is also kept in the artifact store so the API can serve it."""
    from envfactory.core.errors import Conflict

    key = artifacts.put_file(out) if out.is_file() else None
    try:
        store.packs.add(manifest, archive_key=key)
    except Conflict:
        pass  # the same content was exported before: its id is derived from the members


@app.command("export")
def export_cmd(
    out: Annotated[Path, typer.Option("--out", help="a folder, or a .tar / .tar.gz file")],
    env: Annotated[list[str] | None, typer.Option("--env", help="environment id (repeat)")] = None,
    all_published: Annotated[bool, typer.Option("--all-published")] = False,
    fmt: Annotated[str, typer.Option("--format", help="envfactory | harbor")] = "envfactory",
    images: Annotated[
        str, typer.Option("--images", help="save (docker save) | context")
    ] = "context",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Write a pack of gated environments (refused, with every reason, if any is not)."""
    from envfactory.packs import export_pack
    from envfactory.packs.images import DockerImages
    from envfactory.packs.registry import items_from_store, published_ids

    if fmt not in ("envfactory", "harbor") or images not in ("save", "context"):
        raise typer.BadParameter("--format is envfactory|harbor, --images is save|context")
    if fmt == "harbor" and images == "save":
        raise typer.BadParameter("a Harbor pack carries build contexts: use --images context")
    if bool(env) == all_published:
        raise typer.BadParameter("give --env ID (one or more) or --all-published, not both")
    settings = load_settings()
    try:
        store, artifacts = _stores(settings)
        ids = list(env or []) or published_ids(store)
        items = items_from_store(store, ids)
        saver = DockerImages.from_engine(_engine(settings)) if images == "save" else None
        manifest = export_pack(
            items, out, artifacts=artifacts, created_by=f"human:{getpass.getuser()}",
            fmt=fmt, images=images, saver=saver,  # type: ignore[arg-type]
        )  # fmt: skip
        _record(store, artifacts, manifest, out)
    except EnvFactoryError as e:
        raise _fail(e) from e
    _print(_summary(manifest) | {"path": str(out)}, as_json, f"wrote pack {manifest.id}")


@app.command("verify")
def verify_cmd(
    path: Path,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Check every member's sha256 against pack.json; exit 2 naming each tampered member."""
    from envfactory.packs import verify_pack

    try:
        verified = verify_pack(path)
    except EnvFactoryError as e:
        raise _fail(e) from e
    _print(_summary(verified.manifest) | {"verified": True}, as_json, f"{path}: pack verified")


@app.command("import")
def import_cmd(
    path: Path,
    build: Annotated[bool, typer.Option(help="build images of build-context packs now")] = True,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Verify a pack, load its images into the local engine and register its environments."""
    from envfactory.packs.registry import import_pack

    settings = load_settings()
    try:
        store, artifacts = _stores(settings)
        engine = _engine(settings) if build else None
        result = import_pack(path, store=store, artifacts=artifacts, engine=engine, build=build)
    except EnvFactoryError as e:
        raise _fail(e) from e
    envs = [
        f"{e.env_id} v{e.version}" + (" (already present)" if e.already_present else "")
        for e in result.environments
    ]
    _print(_summary(result.manifest) | {"imported": envs}, as_json, f"imported {path}")
