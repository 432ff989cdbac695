"""Export from a store and import into another one (SQLite), with the recording engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from envfactory.core.errors import Conflict, InvalidPack, PublishBlocked
from envfactory.core.models import EnvStatus, gated_spec_hash
from envfactory.packs import export_pack
from envfactory.packs.registry import import_pack, items_from_store, published_ids
from envfactory.store import ArtifactStore, Store
from envfactory.store.migrate import upgrade

from .conftest import make_item
from .fakes import FakeEngine


class NoImages:
    """ImageIO for build-context packs: loading an image archive is a test failure."""

    def save_image(self, image: str, dest: Path) -> str:
        raise AssertionError("no image should be saved")

    def load_image(self, src: Path, *, pack_id: str, env_id: str, image_id: str | None) -> str:
        raise AssertionError("no image archive should be loaded")


def _store(tmp_path: Path, name: str) -> tuple[Store, ArtifactStore]:
    url = f"sqlite:///{tmp_path / name}.db"
    upgrade(url)
    return Store.open(url), ArtifactStore(tmp_path / f"{name}-artifacts")


def _published(store: Store, artifacts: ArtifactStore, env_id: str, **report: int):
    item = make_item(artifacts, env_id, **report)  # ArtifactStore: same put_bytes/get contract
    store.environments.add(item.spec, EnvStatus.PUBLISHED)
    store.verifiers.add(item.verifier)
    # as the gates here stamp it (workflows' run_gates): made for this very spec
    store.gate_reports.add(
        item.gate_report.model_copy(update={"spec_hash": gated_spec_hash(item.spec)})
    )
    return item


def test_export_from_one_store_and_import_into_another_keeps_every_record(tmp_path):
    src, src_art = _store(tmp_path, "src")
    item = _published(src, src_art, "env-a")
    _published(src, src_art, "env-b")
    assert published_ids(src) == ["env-a", "env-b"]
    export_pack(
        items_from_store(src, published_ids(src)),
        tmp_path / "p.tar",
        artifacts=src_art,
        created_by="t",
    )

    dst, dst_art = _store(tmp_path, "dst")
    engine = FakeEngine()
    result = import_pack(
        tmp_path / "p.tar", store=dst, artifacts=dst_art, engine=engine, images=NoImages()
    )
    assert [(e.env_id, e.image, e.already_present) for e in result.environments] == [
        ("env-a", "env-image", False),
        ("env-b", "env-image", False),
    ]
    got = dst.environments.get("env-a")
    assert got.model_copy(update={"image": None, "origin": None}) == item.spec
    assert got.image == "env-image" and got.origin and got.origin.signer == "unsigned"
    assert dst.environments.record("env-a").status == EnvStatus.IMPORTED  # gated elsewhere
    assert dst.verifiers.get("env-a") == item.verifier
    assert dst.gate_reports.latest("env-a") == item.gate_report  # its spec hash not kept
    assert all(
        dst_art.get(f.key) == src_art.get(f.key)
        for f in item.verifier.files + item.spec.build.files
    )
    assert dst.packs.get(result.manifest.id) == result.manifest


def test_importing_the_same_pack_twice_is_harmless(tmp_path):
    src, src_art = _store(tmp_path, "src")
    _published(src, src_art, "env-a")
    export_pack(items_from_store(src, ["env-a"]), tmp_path / "p", artifacts=src_art, created_by="t")
    dst, dst_art = _store(tmp_path, "dst")
    import_pack(
        tmp_path / "p", store=dst, artifacts=dst_art, engine=FakeEngine(), images=NoImages()
    )
    again = import_pack(
        tmp_path / "p", store=dst, artifacts=dst_art, engine=FakeEngine(), images=NoImages()
    )
    assert [e.already_present for e in again.environments] == [True]
    assert len(dst.gate_reports.list("env-a")) == 1


def test_a_different_environment_under_a_stored_id_and_version_is_a_conflict(tmp_path):
    src, src_art = _store(tmp_path, "src")
    _published(src, src_art, "env-a")
    export_pack(items_from_store(src, ["env-a"]), tmp_path / "p", artifacts=src_art, created_by="t")
    dst, dst_art = _store(tmp_path, "dst")
    other = make_item(dst_art, "env-a").spec.model_copy(update={"instruction": "Something else."})
    dst.environments.add(other)
    with pytest.raises(Conflict, match="env-a v1 is already stored with other content"):
        import_pack(
            tmp_path / "p", store=dst, artifacts=dst_art, engine=FakeEngine(), images=NoImages()
        )


def test_a_tampered_pack_is_refused_before_the_store_is_touched(tmp_path):
    src, src_art = _store(tmp_path, "src")
    _published(src, src_art, "env-a")
    export_pack(items_from_store(src, ["env-a"]), tmp_path / "p", artifacts=src_art, created_by="t")
    (tmp_path / "p/envs/env-a/verifier/files/test.sh").write_text("exit 0\n")
    dst, dst_art = _store(tmp_path, "dst")
    with pytest.raises(InvalidPack, match="verifier/files/test.sh"):
        import_pack(
            tmp_path / "p", store=dst, artifacts=dst_art, engine=FakeEngine(), images=NoImages()
        )
    assert dst.environments.list() == [] and list(dst_art.keys()) == []


def test_exporting_an_environment_without_a_gate_report_names_every_gap(tmp_path):
    src, src_art = _store(tmp_path, "src")
    item = make_item(src_art, "env-a")
    src.environments.add(item.spec)
    src.verifiers.add(item.verifier)
    with pytest.raises(PublishBlocked) as err:
        items_from_store(src, ["env-a", "env-missing"])
    assert "env-a: verifier v1 has no gate report" in str(err.value)
    assert "env-missing" in str(err.value)
