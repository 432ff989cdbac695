"""Unsigned means untrusted (issue 46, item 3), through the real command line and store.

A pack's spec.json is the exporter's word: its limits are clamped as `task import` clamps
a suite's, its environments are stored `imported` (their gates ran elsewhere), and
`pack export --all-published` takes only environments whose gate report was made here
for their own spec. Whoever first signed an environment (or "unsigned") travels with it
through every re-export.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.core.models import EnvStatus, Limits, gated_spec_hash
from envfactory.core.settings import Settings
from envfactory.packs import export_pack, verify_pack
from envfactory.packs.registry import published_ids
from envfactory.packs.signing import generate_keypair
from envfactory.store import ArtifactStore, Store
from verifiers.formats import CLAMPED

from .conftest import make_item

HUGE = Limits(memory_mb=99_999_999, pids=999_999, exec_timeout_s=10**9, cpus=64.0)


def _home(path: Path) -> tuple[Path, Store, ArtifactStore]:
    settings = Settings(home=path, database_url=None)
    return path, Store.from_settings(settings), ArtifactStore.from_settings(settings)


def _gated_here(store: Store, arts: ArtifactStore, env_id: str, limits: Limits = Limits()):
    """An environment published by this install's gates: its report names its spec."""
    item = make_item(arts, env_id)
    spec = item.spec.model_copy(update={"limits": limits})
    verifier = item.verifier.model_copy(update={"timeout_s": 10**9})
    store.environments.add(spec, EnvStatus.PUBLISHED)
    store.verifiers.add(verifier)
    store.gate_reports.add(item.gate_report.model_copy(update={"spec_hash": gated_spec_hash(spec)}))
    return spec


def _cli(home: Path, *args: str):
    return CliRunner().invoke(app, list(args), env={"ENVFACTORY_HOME": str(home)})


def _export(home: Path, out: Path, *extra: str) -> dict:
    res = _cli(home, "pack", "export", "--all-published", "--out", str(out), "--json", *extra)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _import(home: Path, pack: Path) -> dict:
    res = _cli(home, "pack", "import", str(pack), "--no-build", "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_pack_import_clamps_an_unsigned_packs_limits_with_task_imports_warnings(tmp_path):
    src, store, arts = _home(tmp_path / "src")
    _gated_here(store, arts, "env-big", HUGE)
    _export(src, tmp_path / "p.tar")
    dst, dst_store, _ = _home(tmp_path / "dst")
    out = _import(dst, tmp_path / "p.tar")
    caps = Settings().sandbox.task_caps
    got = dst_store.environments.get("env-big")
    assert (got.limits.memory_mb, got.limits.pids) == (caps.memory_mb, caps.pids)
    assert (got.limits.exec_timeout_s, got.limits.cpus) == (caps.exec_timeout_s, caps.cpus)
    assert dst_store.verifiers.get("env-big").timeout_s == caps.verifier_timeout_s
    clamped = [w for w in out["warnings"] if CLAMPED in w]
    assert len(clamped) == 5, out["warnings"]
    assert any(
        f"memory_mb = 99999999 {CLAMPED} {caps.memory_mb} "
        "(ENVFACTORY_SANDBOX__TASK_CAPS__MEMORY_MB allows more)" in w
        for w in clamped
    )


def test_an_unsigned_packs_environment_is_stored_imported_and_not_re_exported(tmp_path):
    src, store, arts = _home(tmp_path / "src")
    _gated_here(store, arts, "env-a")
    _export(src, tmp_path / "p.tar")
    dst, dst_store, _ = _home(tmp_path / "dst")
    keys = generate_keypair(tmp_path / "keys")
    out = _import(dst, tmp_path / "p.tar")
    assert any("stored as imported, not published" in w for w in out["warnings"])
    assert dst_store.environments.record("env-a").status == EnvStatus.IMPORTED
    res = _cli(dst, "pack", "export", "--all-published", "--out", str(tmp_path / "re.tar"),
               "--sign", str(keys[0]))  # fmt: skip
    assert res.exit_code == 2, res.output
    assert "no environments to export" in res.output
    assert not (tmp_path / "re.tar").exists()


def test_all_published_leaves_out_an_environment_whose_report_was_made_for_another_spec(
    tmp_path,
):
    home, store, arts = _home(tmp_path / "home")
    _gated_here(store, arts, "env-good")
    item = make_item(arts, "env-reused")
    other = item.spec.model_copy(update={"instruction": "Some other task."})
    store.environments.add(item.spec, EnvStatus.PUBLISHED)
    store.verifiers.add(item.verifier)
    store.gate_reports.add(
        item.gate_report.model_copy(update={"spec_hash": gated_spec_hash(other)})
    )
    assert published_ids(store) == ["env-good"]
    res = _cli(home, "pack", "export", "--all-published", "--out", str(tmp_path / "p.tar"))
    assert res.exit_code == 0, res.output
    assert "not exported: env-reused: its gate report was not made here" in res.output
    assert [e.env_id for e in verify_pack(tmp_path / "p.tar").manifest.environments] == ["env-good"]


def _regate_here(store: Store, env_id: str) -> None:
    """What `task validate` leaves behind when the gates pass here: a report of this spec."""
    spec = store.environments.get(env_id)
    report = store.gate_reports.latest(env_id)
    assert report is not None
    store.gate_reports.add(report.model_copy(update={"spec_hash": gated_spec_hash(spec)}))
    store.environments.set_status(env_id, spec.version, EnvStatus.PUBLISHED)


def test_provenance_carries_the_first_signer_or_unsigned_through_a_re_export(tmp_path):
    a_private, _, a_fp = generate_keypair(tmp_path / "a-keys")
    b_private, _, _ = generate_keypair(tmp_path / "b-keys")
    src, store, arts = _home(tmp_path / "src")
    _gated_here(store, arts, "env-signed")
    export_pack(
        [make_item(arts, "env-loose")], tmp_path / "loose.tar", artifacts=arts, created_by="t"
    )
    _export(src, tmp_path / "signed.tar", "--sign", str(a_private))
    mid, mid_store, _ = _home(tmp_path / "mid")
    _import(mid, tmp_path / "signed.tar")
    _import(mid, tmp_path / "loose.tar")
    for env_id in ("env-signed", "env-loose"):
        _regate_here(mid_store, env_id)
    _export(mid, tmp_path / "re.tar", "--sign", str(b_private))
    chain = {
        e.env_id: e.provenance.signer
        for e in verify_pack(tmp_path / "re.tar").manifest.environments
    }
    assert chain == {"env-signed": a_fp, "env-loose": "unsigned"}
