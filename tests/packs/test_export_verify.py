"""Export → verify without Docker: hashes, layout, provenance, tamper detection."""

from __future__ import annotations

import json
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from envfactory.core.errors import InvalidPack, PublishBlocked
from envfactory.core.models import MutationScore, PackMember, SolveRate, SolveRateBand
from envfactory.packs import export_pack, layout, open_verified, verify_pack
from envfactory.packs.manifest import pack_id

from .conftest import DictArtifacts, make_item


def _export(artifacts: DictArtifacts, out: Path, *env_ids: str):
    items = [make_item(artifacts, e) for e in env_ids or ("env-hello",)]
    return export_pack(items, out, artifacts=artifacts, created_by="test")


@pytest.mark.parametrize("name", ["pack", "pack.tar", "pack.tar.gz"])
def test_an_exported_pack_verifies_in_every_form(tmp_path, artifacts, name):
    manifest = _export(artifacts, tmp_path / name, "env-a", "env-b")
    verified = verify_pack(tmp_path / name)
    assert verified.manifest == manifest
    assert [e.env_id for e in manifest.environments] == ["env-a", "env-b"]


def test_every_member_is_listed_with_its_sha256(tmp_path, artifacts):
    manifest = _export(artifacts, tmp_path / "pack")
    on_disk = {
        p.relative_to(tmp_path / "pack").as_posix()
        for p in (tmp_path / "pack").rglob("*")
        if p.is_file()
    }
    assert on_disk - {m.path for m in manifest.members} == {"pack.json"}
    test_sh = tmp_path / "pack/envs/env-hello/verifier/files/test.sh"
    member = next(m for m in manifest.members if m.path.endswith("verifier/files/test.sh"))
    assert member.sha256 == artifacts.put_bytes(test_sh.read_bytes())


def test_the_verifier_lives_only_in_the_verifier_subtree(tmp_path, artifacts):
    manifest = _export(artifacts, tmp_path / "pack")
    solver = {m.path for m in manifest.members if m.visibility == "solver"}
    verifier = {m.path for m in manifest.members if m.visibility == "verifier"}
    assert "envs/env-hello/solver/instruction.md" in solver
    assert verifier == {
        "envs/env-hello/verifier/verifier.json",
        "envs/env-hello/verifier/files/test.sh",
    }
    assert not any("test.sh" in p or "spec.json" in p for p in solver)


def test_the_provenance_chain_points_at_the_exported_members(tmp_path, artifacts):
    manifest = _export(artifacts, tmp_path / "pack")
    env = manifest.environments[0]
    by_path = {m.path: m.sha256 for m in manifest.members}
    chain = env.provenance
    assert chain.spec_sha256 == by_path["envs/env-hello/meta/spec.json"]
    assert chain.verifier_sha256 == by_path["envs/env-hello/verifier/verifier.json"]
    assert chain.gate_report_sha256 == by_path["envs/env-hello/meta/gate_report.json"]
    assert (chain.verifier_author, chain.gate_verdict) == ("agent:verifier/scripted", "passed")


def test_the_provenance_chain_carries_the_gate_batterys_mutation_score(tmp_path, artifacts):
    item = make_item(artifacts)
    scored = item.gate_report.model_copy(update={"mutation": MutationScore(killed=3, survived=1)})
    manifest = export_pack(
        [replace(item, gate_report=scored)], tmp_path / "p", artifacts=artifacts, created_by="test"
    )
    assert manifest.environments[0].provenance.mutation_score == 0.75
    assert _export(artifacts, tmp_path / "q").environments[0].provenance.mutation_score is None


def test_the_manifest_and_the_packed_gate_report_carry_the_solve_rate_and_its_band(
    tmp_path, artifacts
):
    item = make_item(artifacts)
    solve = SolveRate.measure(4, 2, SolveRateBand(min=0.25, max=0.75))
    rated = item.gate_report.model_copy(update={"solve_rate": solve})
    manifest = export_pack(
        [replace(item, gate_report=rated)], tmp_path / "p", artifacts=artifacts, created_by="test"
    )
    assert manifest.environments[0].provenance.solve_rate == solve
    packed = json.loads((tmp_path / "p" / "envs/env-hello/meta/gate_report.json").read_text())
    assert packed["solve_rate"]["band"] == {"min": 0.25, "max": 0.75}
    assert (packed["solve_rate"]["rate"], packed["solve_rate"]["verdict"]) == (0.5, "in_band")


def test_the_same_content_gives_the_same_pack_id(tmp_path, artifacts):
    items = [make_item(artifacts)]
    a = export_pack(items, tmp_path / "a.tar", artifacts=artifacts, created_by="x")
    b = export_pack(items, tmp_path / "b", artifacts=artifacts, created_by="y")
    assert a.id == b.id
    other = export_pack(
        [make_item(artifacts, "env-other")], tmp_path / "c", artifacts=artifacts, created_by="x"
    )
    assert other.id != a.id


def test_a_failed_gate_report_blocks_the_export_with_every_reason(tmp_path, artifacts):
    bad = make_item(artifacts, "env-bad", oracle=0)
    stale = make_item(artifacts, "env-stale", verifier_version=2)
    with pytest.raises(PublishBlocked) as err:
        export_pack([bad, stale], tmp_path / "p", artifacts=artifacts, created_by="t")
    text = str(err.value)
    assert (
        "env-bad: gate report failed" in text
        and "env-stale: gate report is for verifier v2" in text
    )
    assert not (tmp_path / "p").exists()


def _retar_with(src: Path, dest: Path, replace: dict[str, bytes]) -> None:
    with tarfile.open(src) as tin, tarfile.open(dest, "w") as tout:
        for info in tin:
            data = tin.extractfile(info).read() if info.isreg() else None
            if info.name in replace:
                data = replace.pop(info.name)
                info.size = len(data)
            tout.addfile(info, _bytes_io(data))
        for name, data in replace.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tout.addfile(info, _bytes_io(data))


def _bytes_io(data: bytes | None):
    import io

    return io.BytesIO(data) if data is not None else None


def test_a_changed_verifier_file_in_a_tar_is_named(tmp_path, artifacts):
    _export(artifacts, tmp_path / "pack.tar")
    member = "envs/env-hello/verifier/files/test.sh"
    _retar_with(tmp_path / "pack.tar", tmp_path / "evil.tar", {member: b"exit 0\n"})
    with pytest.raises(InvalidPack, match=f"member {member}: sha256 mismatch"):
        verify_pack(tmp_path / "evil.tar")


def test_a_changed_instruction_in_a_folder_is_named(tmp_path, artifacts):
    _export(artifacts, tmp_path / "pack")
    (tmp_path / "pack/envs/env-hello/solver/instruction.md").write_text("Do nothing.")
    with pytest.raises(InvalidPack, match="envs/env-hello/solver/instruction.md: sha256 mismatch"):
        verify_pack(tmp_path / "pack")


def test_an_added_file_is_refused_as_not_listed(tmp_path, artifacts):
    _export(artifacts, tmp_path / "pack.tar")
    added = "envs/env-hello/verifier/files/conftest.py"
    _retar_with(tmp_path / "pack.tar", tmp_path / "evil.tar", {added: b"pass\n"})
    with pytest.raises(InvalidPack, match=f"member {added}: not listed in pack.json"):
        verify_pack(tmp_path / "evil.tar")


def test_a_deleted_member_is_reported_missing(tmp_path, artifacts):
    _export(artifacts, tmp_path / "pack")
    (tmp_path / "pack/envs/env-hello/meta/gate_report.json").unlink()
    with pytest.raises(InvalidPack, match="gate_report.json: missing"):
        verify_pack(tmp_path / "pack")


def test_a_manifest_rewritten_to_match_a_changed_member_breaks_the_provenance_chain(
    tmp_path, artifacts
):
    manifest = _export(artifacts, tmp_path / "pack")
    spec = tmp_path / "pack" / "envs/env-hello" / layout.SPEC
    spec.write_text(spec.read_text().replace("hello", "howdy"))
    raw = json.loads((tmp_path / "pack/pack.json").read_text())
    new_sha = artifacts.put_bytes(spec.read_bytes())
    for m in raw["members"]:
        if m["path"].endswith("meta/spec.json"):
            m["sha256"], m["size"] = new_sha, spec.stat().st_size
    raw["id"] = pack_id(PackMember.model_validate(m) for m in raw["members"])  # consistent
    (tmp_path / "pack/pack.json").write_text(json.dumps(raw))
    with pytest.raises(InvalidPack, match="provenance hash for envs/env-hello/meta/spec.json"):
        verify_pack(tmp_path / "pack")
    assert manifest.environments[0].provenance.spec_sha256 != new_sha


def test_a_manifest_from_a_newer_schema_is_refused(tmp_path, artifacts):
    _export(artifacts, tmp_path / "pack")
    raw = json.loads((tmp_path / "pack/pack.json").read_text())
    raw["schema_version"] = 99
    (tmp_path / "pack/pack.json").write_text(json.dumps(raw))
    with pytest.raises(InvalidPack, match="schema version 99 is newer"):
        verify_pack(tmp_path / "pack")


def test_opening_a_tar_extracts_exactly_the_verified_members(tmp_path, artifacts):
    manifest = _export(artifacts, tmp_path / "pack.tar")
    opened = open_verified(tmp_path / "pack.tar", tmp_path / "x")
    files = {
        p.relative_to(tmp_path / "x").as_posix() for p in (tmp_path / "x").rglob("*") if p.is_file()
    }
    assert files == {m.path for m in manifest.members} | {"pack.json"}
    assert opened.root == tmp_path / "x"
    assert (tmp_path / "x/envs/env-hello/verifier/files/test.sh").stat().st_mode & 0o111


def test_a_pack_json_with_a_key_given_twice_is_refused_naming_the_key(tmp_path, artifacts):
    """The last of two ids would win in a plain JSON reader: the YAML path refuses that."""
    manifest = _export(artifacts, tmp_path / "pack")
    raw = (tmp_path / "pack/pack.json").read_text()
    doubled = raw.replace('"id":', f'"id": "{manifest.id}", "id":', 1)
    assert doubled != raw
    (tmp_path / "pack/pack.json").write_text(doubled)
    with pytest.raises(InvalidPack, match="the key 'id' appears twice in one object"):
        verify_pack(tmp_path / "pack")
