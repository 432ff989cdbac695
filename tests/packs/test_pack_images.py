"""A pack's image archive cannot repoint a local tag, on the real Docker engine.

`docker load` writes whatever tags an archive names, so an unsigned pack claiming
`envfactory/verify:…` or a base image's tag would have taken it over. The archive is read
first: a tag outside the pack's namespace, or an image other than the one the manifest
recorded, is refused before anything is loaded; an accepted image gets one tag in the
pack's namespace.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import uuid
from pathlib import Path

import pytest

from envfactory.core.errors import InvalidPack
from envfactory.core.models import PackManifest, PackMember
from envfactory.packs import ExportItem, export_pack
from envfactory.packs.images import DockerImages, check_archive, pack_tag, read_archive
from envfactory.packs.manifest import pack_id
from envfactory.packs.registry import import_pack
from envfactory.packs.runtime import Pack
from envfactory.store import Store
from envfactory.store.artifacts import ArtifactStore
from envfactory.store.migrate import upgrade

from .conftest import make_item

IMAGE_TAR = "solver/image.tar"


def _exported(tmp_path: Path, artifacts, engine) -> tuple[Path, str]:
    """A docker-save pack (a folder) of the example environment, and its image id."""
    from verifiers.formats import context_tar

    item = make_item(artifacts)
    image = engine.build(context_tar(item.spec.build, artifacts.get), dockerfile="Dockerfile")
    item = ExportItem(
        item.spec.model_copy(update={"image": image.image}), item.verifier, item.gate_report
    )
    saver = DockerImages.from_engine(engine)
    out = tmp_path / "pack"
    export_pack([item], out, artifacts=artifacts, created_by="t", images="save", saver=saver)
    return out, engine.client.images.get(image.image).id


def _archive(pack: Path) -> Path:
    return next(pack.rglob(IMAGE_TAR))


def _rewrite_archive(src: Path, *, tags: list[str]) -> None:
    """The attacker's edit: the same image, its manifest.json naming `tags`."""
    with tarfile.open(src) as tf:
        entries = [(m, tf.extractfile(m).read() if m.isfile() else b"") for m in tf]  # type: ignore[union-attr]
    buf = src.with_suffix(".new")
    with tarfile.open(buf, "w") as out:
        for info, data in entries:
            if info.name == "manifest.json":
                manifest = json.loads(data)
                manifest[0]["RepoTags"] = tags
                data = json.dumps(manifest).encode()
                info.size = len(data)
            out.addfile(info, io.BytesIO(data) if info.isfile() else None)
    buf.replace(src)


def _relist(pack: Path, **entry_update: object) -> str:
    """Rewrite pack.json to match the edited members (an unsigned pack is self-consistent
    however it was made); return the new pack id."""
    manifest = PackManifest.model_validate_json((pack / "pack.json").read_bytes())
    members = tuple(
        PackMember(
            path=m.path,
            sha256=hashlib.sha256((pack / m.path).read_bytes()).hexdigest(),
            size=(pack / m.path).stat().st_size,
            visibility=m.visibility,
        )
        for m in manifest.members
    )
    envs = tuple(e.model_copy(update=entry_update) for e in manifest.environments)
    new = manifest.model_copy(
        update={"members": members, "id": pack_id(members), "environments": envs}
    )
    (pack / "pack.json").write_text(new.model_dump_json())
    return new.id


def _store(tmp_path: Path) -> tuple[Store, ArtifactStore]:
    url = f"sqlite:///{tmp_path / 'dst'}.db"
    upgrade(url)
    return Store.open(url), ArtifactStore(tmp_path / "dst-artifacts")


@pytest.fixture
def victim(docker_engine, base_image):  # type: ignore[no-untyped-def]
    """A local tag someone else owns, pointing at the base image."""
    repo = f"envfactory-test-victim-{uuid.uuid4().hex[:8]}"
    img = docker_engine.client.images.get(base_image)
    img.tag(repo, "latest")
    yield f"{repo}:latest", img.id
    docker_engine.client.images.remove(f"{repo}:latest")


@pytest.mark.docker
def test_an_archive_naming_a_tag_outside_the_pack_is_refused_and_the_tag_is_untouched(
    tmp_path, artifacts, docker_engine, victim
):
    tag, victim_id = victim
    pack, _ = _exported(tmp_path, artifacts, docker_engine)
    _rewrite_archive(_archive(pack), tags=[tag])
    _relist(pack)
    store, art = _store(tmp_path)
    with pytest.raises(InvalidPack, match=tag):
        import_pack(pack, store=store, artifacts=art, engine=docker_engine, build=False)
    assert docker_engine.client.images.get(tag).id == victim_id
    assert store.environments.list() == []


@pytest.mark.docker
def test_an_image_other_than_the_one_the_manifest_recorded_is_refused(
    tmp_path, artifacts, docker_engine, victim
):
    pack, image_id = _exported(tmp_path, artifacts, docker_engine)
    _relist(pack, image_ref=victim[1])
    with pytest.raises(InvalidPack, match="manifest recorded"):
        with Pack.open(pack, engine=docker_engine) as opened:
            opened.environments[0].image()


@pytest.mark.docker
def test_an_imported_image_is_tagged_only_in_the_packs_namespace(
    tmp_path, artifacts, docker_engine
):
    pack, image_id = _exported(tmp_path, artifacts, docker_engine)
    found = read_archive(_archive(pack))
    assert found.tags == ()  # exported by id: the exporter's local names do not travel
    assert found.image_id == image_id
    tags_before = set(docker_engine.client.images.get(image_id).tags)
    store, art = _store(tmp_path)
    result = import_pack(pack, store=store, artifacts=art, engine=docker_engine, build=False)
    manifest_id = result.manifest.id
    assert result.environments[0].image == image_id
    tags_after = set(docker_engine.client.images.get(image_id).tags)
    assert tags_after - tags_before == {pack_tag(manifest_id, "env-hello")}
    docker_engine.client.images.remove(pack_tag(manifest_id, "env-hello"))


def test_an_archive_naming_any_tag_even_in_the_packs_own_namespace_is_refused() -> None:
    """envfactory names a pack's images; the pack names none (exports are saved by id)."""
    from envfactory.packs.images import ArchiveImage

    pid, image = "pack-0123456789abcdef", "sha256:" + "a" * 64
    check_archive(ArchiveImage(image, ()), pack_id=pid, image_id=image)
    for tag in (
        pack_tag(pid, "e"),  # the pack's own namespace: still a name the pack chose
        "envfactory/verify:latest",
        "envfactory/pack-ffffffffffffffff:x",  # another pack's namespace
        f"envfactory/{pid}x:y",
        "python:3.12",
    ):
        with pytest.raises(InvalidPack, match="would tag"):
            check_archive(ArchiveImage(image, (tag,)), pack_id=pid, image_id=image)
    with pytest.raises(InvalidPack, match="records no image id"):
        check_archive(ArchiveImage(image, ()), pack_id=pid, image_id="envfactory/env:abc")


def _rename(pack: Path, new_id: str) -> None:
    """The attacker's edit of pack.json: the same members under an id of its choosing."""
    manifest = PackManifest.model_validate_json((pack / "pack.json").read_bytes())
    (pack / "pack.json").write_text(manifest.model_copy(update={"id": new_id}).model_dump_json())


@pytest.mark.docker
def test_a_pack_naming_itself_after_a_local_repository_cannot_move_its_tag(
    tmp_path, artifacts, docker_engine, base_image
):
    """The red team's `redteamvictim`: id and archive tag chosen to land on a local tag."""
    name = f"redteamvictim{uuid.uuid4().hex[:8]}"
    victim = docker_engine.client.images.get(base_image)
    victim.tag(f"envfactory/{name}", "latest")
    try:
        pack, _ = _exported(tmp_path, artifacts, docker_engine)
        _rewrite_archive(_archive(pack), tags=[f"envfactory/{name}:latest"])
        _relist(pack)
        _rename(pack, name)
        store, art = _store(tmp_path)
        with pytest.raises(InvalidPack, match="not this pack's content id"):
            import_pack(pack, store=store, artifacts=art, engine=docker_engine, build=False)
        assert docker_engine.client.images.get(f"envfactory/{name}:latest").id == victim.id
        assert store.environments.list() == []
    finally:
        docker_engine.client.images.remove(f"envfactory/{name}:latest")


@pytest.mark.docker
def test_an_import_never_moves_a_tag_that_already_names_another_image(
    tmp_path, artifacts, docker_engine, base_image
):
    pack, image_id = _exported(tmp_path, artifacts, docker_engine)
    manifest = PackManifest.model_validate_json((pack / "pack.json").read_bytes())
    tag = pack_tag(manifest.id, "env-hello")
    other = docker_engine.client.images.get(base_image)
    other.tag(*tag.split(":", 1))
    try:
        store, art = _store(tmp_path)
        with pytest.raises(InvalidPack, match="never moves a tag"):
            import_pack(pack, store=store, artifacts=art, engine=docker_engine, build=False)
        assert docker_engine.client.images.get(tag).id == other.id
        assert store.environments.list() == []
    finally:
        docker_engine.client.images.remove(tag)


@pytest.mark.docker
def test_pack_import_of_an_id_with_a_colon_exits_two_naming_the_id(
    tmp_path, artifacts, docker_engine
):
    from typer.testing import CliRunner

    from envfactory.cli import app

    pack, _ = _exported(tmp_path, artifacts, docker_engine)
    _rename(pack, "evil:latest")
    res = CliRunner().invoke(
        app, ["pack", "import", str(pack)], env={"ENVFACTORY_HOME": str(tmp_path / "home")}
    )
    assert res.exit_code == 2, res.output
    assert isinstance(res.exception, SystemExit)  # a message, not a traceback
    assert "id 'evil:latest' is not a pack id" in res.output


PROBE = (
    "import socket\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', {port}), 3)\n"
    "    print('reached')\n"
    "except OSError as e:\n"
    "    print('refused', e)\n"
)


def _probing_item(artifacts, port: int) -> ExportItem:
    """The example environment whose build tries the host's loopback and keeps the answer."""
    from .conftest import entry

    item = make_item(artifacts, "env-net")
    dockerfile = (
        "FROM python:3.12-slim\nCOPY probe.py /probe.py\nRUN python3 /probe.py > /build-net.txt\n"
    )
    build = item.spec.build.model_copy(
        update={
            "files": (
                entry(artifacts, "Dockerfile", dockerfile),
                entry(artifacts, "probe.py", PROBE.format(port=port)),
            )
        }
    )
    spec = item.spec.model_copy(update={"build": build})
    return ExportItem(spec, item.verifier, item.gate_report)


@pytest.fixture
def listener():  # type: ignore[no-untyped-def]
    """A listener on the host's 127.0.0.1, counting the connections it accepts."""
    import socket
    import threading

    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                accepted.append(srv.accept()[0])
            except TimeoutError:
                continue

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], accepted
    stop.set()
    t.join()
    srv.close()


@pytest.mark.docker
@pytest.mark.parametrize("build_network", [False, True])
def test_a_packs_build_never_reaches_the_hosts_loopback(
    tmp_path, artifacts, docker_engine, listener, build_network
):
    port, accepted = listener
    pack = tmp_path / "pack"
    export_pack([_probing_item(artifacts, port)], pack, artifacts=artifacts, created_by="t")
    store, art = _store(tmp_path)
    result = import_pack(
        pack, store=store, artifacts=art, engine=docker_engine, build_network=build_network
    )
    image = result.environments[0].image
    seen = docker_engine.client.containers.run(
        image, ["cat", "/build-net.txt"], remove=True, network_mode="none"
    ).decode()
    assert seen.startswith("refused"), seen
    assert accepted == []


def test_an_archive_holding_a_member_twice_is_refused(tmp_path: Path) -> None:
    """Which of two `manifest.json` a reader takes is its own choice: ours and docker's
    must not differ, so an archive holding one twice is refused before any is read."""
    config = b'{"config": {}}'
    manifest = json.dumps([{"Config": "c.json", "RepoTags": [], "Layers": []}]).encode()
    evil = json.dumps([{"Config": "c.json", "RepoTags": ["python:3.12"], "Layers": []}]).encode()
    src = tmp_path / "image.tar"
    with tarfile.open(src, "w") as tf:
        for name, data in (
            ("c.json", config),
            ("manifest.json", manifest),
            ("./manifest.json", evil),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    with pytest.raises(InvalidPack, match="manifest.json twice"):
        read_archive(src)
