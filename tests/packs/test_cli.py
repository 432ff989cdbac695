"""`envfactory pack verify` from the command line (export/import need the store: see
test_roundtrip)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.packs import export_pack

from .conftest import make_item


def test_pack_verify_prints_the_pack_and_exits_zero(tmp_path, artifacts):
    manifest = export_pack(
        [make_item(artifacts)], tmp_path / "p.tar", artifacts=artifacts, created_by="t"
    )
    res = CliRunner().invoke(app, ["pack", "verify", str(tmp_path / "p.tar"), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["id"] == manifest.id and out["environments"] == ["env-hello"] and out["verified"]


def test_pack_verify_names_the_tampered_member_and_exits_two(tmp_path, artifacts):
    export_pack([make_item(artifacts)], tmp_path / "p", artifacts=artifacts, created_by="t")
    (tmp_path / "p/envs/env-hello/meta/gate_report.json").write_text("{}")
    res = CliRunner().invoke(app, ["pack", "verify", str(tmp_path / "p")])
    assert res.exit_code == 2
    assert "envs/env-hello/meta/gate_report.json: sha256 mismatch" in res.output


def _home_with_published(tmp_path):
    from envfactory.core.models import EnvStatus, gated_spec_hash
    from envfactory.core.settings import Settings
    from envfactory.store import ArtifactStore, Store

    settings = Settings(home=tmp_path / "home", database_url=None)
    store, arts = Store.from_settings(settings), ArtifactStore.from_settings(settings)
    item = make_item(arts, "env-a")
    store.environments.add(item.spec, EnvStatus.PUBLISHED)
    store.verifiers.add(item.verifier)
    store.gate_reports.add(
        item.gate_report.model_copy(update={"spec_hash": gated_spec_hash(item.spec)})
    )
    return settings.home, store


def test_pack_export_from_the_store_records_the_pack_and_import_registers_it(tmp_path):
    home, store = _home_with_published(tmp_path)
    runner = CliRunner()
    res = runner.invoke(
        app,
        ["pack", "export", "--all-published", "--out", str(tmp_path / "p.tar"), "--json"],
        env={"ENVFACTORY_HOME": str(home)},
    )
    assert res.exit_code == 0, res.output
    pack_id = json.loads(res.stdout)["id"]
    assert store.packs.archive_key(pack_id) is not None
    other = tmp_path / "other"
    res = runner.invoke(
        app,
        ["pack", "import", str(tmp_path / "p.tar"), "--no-build", "--json"],
        env={"ENVFACTORY_HOME": str(other)},
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["imported"] == ["env-a v1"]


def test_pack_export_refuses_both_or_neither_selection(tmp_path):
    res = CliRunner().invoke(
        app,
        ["pack", "export", "--out", str(tmp_path / "p")],
        env={"ENVFACTORY_HOME": str(tmp_path)},
    )
    assert res.exit_code != 0 and "--all-published" in res.output
