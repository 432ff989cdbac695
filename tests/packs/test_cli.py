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
