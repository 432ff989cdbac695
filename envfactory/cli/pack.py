"""`envfactory pack keygen|export|verify|import`: packs of verified environments.

Settings are loaded here (the process edge) and passed down; the store, the artifact
store and the Docker engine are opened only by the commands that need them. Trust is the
union of `--trust FILE` and the trust directory (ENVFACTORY_PACKS__TRUST_DIR); with
either, verify and import refuse an unsigned pack or one signed by another key.
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
    help="Export, sign, verify and import packs of verified environments.\n\n"
    "Examples:\n\n"
    "  envfactory pack keygen --out ~/.envfactory/keys\n\n"
    "  envfactory pack export --all-published --out envs.tar --sign ~/.envfactory/keys/pack-signing.key\n\n"
    "  envfactory pack export --env env-3f2a --out harbor/ --format harbor\n\n"
    "  envfactory pack verify envs.tar --trust alice.pub\n\n"
    "  envfactory pack import envs.tar",
    no_args_is_help=True,
)


def _fail(err: EnvFactoryError) -> typer.Exit:
    typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
    return typer.Exit(2)


TrustOpt = Annotated[
    list[Path] | None,
    typer.Option("--trust", help="a trusted public key (repeat); the pack must be signed by one"),
]


def _trust(settings: Settings, files: list[Path] | None) -> Any:
    from envfactory.packs.signing import TrustedKeys

    return TrustedKeys.load(files or [], settings.packs.trust_dir)


#: Unsigned packs import when no trust list is set (a local install's own packs, a
#: colleague's): what an unsigned pack can do is bounded instead (its own image tags,
#: offline builds, locked-down sandboxes), and the import says so.
UNSIGNED_WARNING = (
    "unsigned pack: anyone could have made it. Its images are tagged only under "
    "envfactory/{pack} and its builds ran offline; set a trust directory "
    "(ENVFACTORY_PACKS__TRUST_DIR) or pass --trust to refuse unsigned packs"
)


#: A pack's gate reports were made elsewhere, for a spec this install never gated.
IMPORTED_NOTE = (
    "stored as imported, not published: gate them here (envfactory task validate {ids}) "
    "before pack export --all-published takes them"
)


def _signature(signer: Any) -> str:
    if signer is None:
        return "unsigned"
    return f"{signer.fingerprint} ({'trusted' if signer.trusted else 'valid; no trust list given'})"


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
    sign: Annotated[
        Path | None, typer.Option("--sign", help="sign with this private key (pack keygen)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Write a pack of gated environments (refused, with every reason, if any is not)."""
    from envfactory.packs import export_pack
    from envfactory.packs.images import DockerImages
    from envfactory.packs.registry import items_from_store
    from envfactory.packs.signing import load_private_key

    if fmt not in ("envfactory", "harbor") or images not in ("save", "context"):
        raise typer.BadParameter("--format is envfactory|harbor, --images is save|context")
    if fmt == "harbor" and images == "save":
        raise typer.BadParameter("a Harbor pack carries build contexts: use --images context")
    if bool(env) == all_published:
        raise typer.BadParameter("give --env ID (one or more) or --all-published, not both")
    settings = load_settings()
    try:
        key = load_private_key(sign) if sign else None
        store, artifacts = _stores(settings)
        items = items_from_store(store, list(env or []) or _all_published(store))
        saver = DockerImages.from_engine(_engine(settings)) if images == "save" else None
        manifest = export_pack(
            items,
            out,
            artifacts=artifacts,
            created_by=f"human:{getpass.getuser()}",
            fmt=fmt,  # type: ignore[arg-type]
            images=images,  # type: ignore[arg-type]
            saver=saver,
            signing_key=key,
        )
        _record(store, artifacts, manifest, out)
    except EnvFactoryError as e:
        raise _fail(e) from e
    signed = {"signed_by": _fingerprint(key)} if key else {}
    _print(_summary(manifest) | {"path": str(out)} | signed, as_json, f"wrote pack {manifest.id}")


def _all_published(store: Any) -> list[str]:
    """The published environments gated here for their own spec; the rest are named."""
    from envfactory.packs.registry import published

    chosen = published(store)
    for reason in chosen.skipped:
        typer.secho(f"warning: not exported: {reason}", fg=typer.colors.YELLOW, err=True)
    return chosen.ids


def _fingerprint(key: Any) -> str:
    from cryptography.hazmat.primitives import serialization

    from envfactory.packs.signing import fingerprint

    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return fingerprint(raw)


@app.command("keygen")
def keygen_cmd(
    out: Annotated[Path, typer.Option("--out", help="folder for pack-signing.key and .pub")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Make an Ed25519 key pair for signing packs: the private key (mode 0600) stays with
    the exporter, the public key goes to whoever imports the packs.

    Examples:

      envfactory pack keygen --out ~/.envfactory/keys
    """
    from envfactory.packs.signing import generate_keypair

    try:
        private, public, fp = generate_keypair(out)
    except EnvFactoryError as e:
        raise _fail(e) from e
    data = {"private_key": str(private), "public_key": str(public), "fingerprint": fp}
    _print(data, as_json, f"wrote key pair {fp}")


@app.command("verify")
def verify_cmd(
    path: Path,
    trust: TrustOpt = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Check the signature and every member's sha256 against pack.json; exit 2 naming each
    tampered member, a bad signature, or (with --trust or a trust directory) an unsigned
    pack or an untrusted key.

    Examples:

      envfactory pack verify envs.tar --trust alice.pub --trust bob.pub
    """
    from envfactory.packs import verify_pack

    try:
        verified = verify_pack(path, trust=_trust(load_settings(), trust))
    except EnvFactoryError as e:
        raise _fail(e) from e
    summary = _summary(verified.manifest) | {"verified": True}
    _print(summary | {"signature": _signature(verified.signer)}, as_json, f"{path}: pack verified")


@app.command("import")
def import_cmd(
    path: Path,
    build: Annotated[bool, typer.Option(help="build images of build-context packs now")] = True,
    build_network: Annotated[
        bool,
        typer.Option(
            "--build-network",
            help="let the pack's builds reach package registries (a bridge network, never "
            "the host's); off by default: a pack is untrusted",
        ),
    ] = False,
    trust: TrustOpt = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Verify a pack, load its images into the local engine and register its environments.
    With --trust or a trust directory, only a pack signed by a trusted key is imported."""
    from envfactory.packs.registry import import_pack

    settings = load_settings()
    try:
        keys = _trust(settings, trust)
        store, artifacts = _stores(settings)
        engine = _engine(settings) if build else None
        result = import_pack(
            path,
            store=store,
            artifacts=artifacts,
            engine=engine,
            build=build,
            build_network=build_network,
            trust=keys,
            caps=settings.sandbox.task_caps,
        )
    except EnvFactoryError as e:
        raise _fail(e) from e
    envs = [
        f"{e.env_id} v{e.version}" + (" (already present)" if e.already_present else "")
        for e in result.environments
    ]
    warnings = [] if result.signed else [UNSIGNED_WARNING.format(pack=result.manifest.id)]
    warnings += [w for e in result.environments for w in e.warnings]
    fresh = [e.env_id for e in result.environments if not e.already_present]
    if fresh:
        warnings.append(IMPORTED_NOTE.format(ids=" ".join(fresh)))
    summary = _summary(result.manifest) | {"imported": envs, "warnings": warnings}
    _print(summary, as_json, f"imported {path}")
