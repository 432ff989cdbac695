"""Signed packs (issue 15, item 3): hashes alone let anyone who can edit a pack rehash it;
a signature over pack.json, checked against trusted keys, does not."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.core.errors import ConfigError, InvalidInput, InvalidPack
from envfactory.core.models import PackMember
from envfactory.packs import export_pack, open_verified, verify_pack
from envfactory.packs.manifest import pack_id
from envfactory.packs.signing import (
    TrustedKeys,
    generate_keypair,
    load_private_key,
    load_public_key,
)

from .conftest import make_item

TEST_SH = "envs/env-hello/verifier/files/test.sh"


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    private, public, _ = generate_keypair(tmp_path / "keys")
    return private, public


def _signed(tmp_path: Path, artifacts, keys, name: str = "p") -> Path:
    out = tmp_path / name
    export_pack(
        [make_item(artifacts)],
        out,
        artifacts=artifacts,
        created_by="t",
        signing_key=load_private_key(keys[0]),
    )
    return out


def _forge(pack: Path, member: str, data: bytes) -> None:
    """What a forger does: change a member and rehash it (and the pack id) in pack.json."""
    (pack / member).write_bytes(data)
    raw = json.loads((pack / "pack.json").read_text())
    for m in raw["members"]:
        if m["path"] == member:
            m["sha256"], m["size"] = hashlib.sha256(data).hexdigest(), len(data)
    raw["id"] = pack_id(PackMember.model_validate(m) for m in raw["members"])
    (pack / "pack.json").write_text(json.dumps(raw, indent=2) + "\n")


def _verify(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["pack", "verify", *args])
    return res.exit_code, res.output


def test_keygen_writes_a_private_key_only_its_owner_can_read(tmp_path):
    res = CliRunner().invoke(app, ["pack", "keygen", "--out", str(tmp_path / "k"), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert os.stat(out["private_key"]).st_mode & 0o777 == 0o600
    assert out["fingerprint"].startswith("ed25519:")
    again = CliRunner().invoke(app, ["pack", "keygen", "--out", str(tmp_path / "k")])
    assert again.exit_code == 2 and "already exists" in again.output


def test_a_private_key_others_can_read_is_refused(keys):
    keys[0].chmod(0o644)
    with pytest.raises(InvalidInput, match="readable by other users"):
        load_private_key(keys[0])


@pytest.mark.parametrize("name", ["p", "p.tar", "p.tar.gz"])
def test_a_correctly_signed_pack_passes_verify_with_its_key_trusted(
    tmp_path, artifacts, keys, name
):
    pack = _signed(tmp_path, artifacts, keys, name)
    code, out = _verify(str(pack), "--trust", str(keys[1]), "--json")
    assert code == 0, out
    fp = TrustedKeys.load([keys[1]]).listing()  # type: ignore[union-attr]
    assert json.loads(out)["signature"] == f"{fp} (trusted)"


def test_a_signed_tar_holds_the_manifest_then_the_signature_first(tmp_path, artifacts, keys):
    with tarfile.open(_signed(tmp_path, artifacts, keys, "p.tar")) as tf:
        assert tf.getnames()[:2] == ["pack.json", "pack.sig"]


def test_a_forged_pack_with_its_manifest_rehashed_fails_verify_trust(tmp_path, artifacts, keys):
    pack = _signed(tmp_path, artifacts, keys)
    _forge(pack, TEST_SH, b"exit 0\n")
    code, out = _verify(str(pack), "--trust", str(keys[1]))
    assert code == 2
    assert "does not match pack.json: pack.json or pack.sig was changed after signing" in out


def test_a_forged_pack_fails_even_without_a_trust_list_while_its_signature_is_present(
    tmp_path, artifacts, keys
):
    pack = _signed(tmp_path, artifacts, keys)
    _forge(pack, TEST_SH, b"exit 0\n")
    assert _verify(str(pack))[0] == 2


def test_a_forged_pack_with_the_signature_removed_is_refused_when_trust_is_given(
    tmp_path, artifacts, keys
):
    pack = _signed(tmp_path, artifacts, keys)
    _forge(pack, TEST_SH, b"exit 0\n")
    (pack / "pack.sig").unlink()
    assert _verify(str(pack))[0] == 0  # hashes alone cannot tell: the reason for signing
    code, out = _verify(str(pack), "--trust", str(keys[1]))
    assert code == 2 and "the pack is not signed" in out
    assert TrustedKeys.load([keys[1]]).listing() in out  # type: ignore[union-attr]


def test_a_forged_pack_resigned_by_another_key_is_refused_naming_that_key(
    tmp_path, artifacts, keys
):
    pack = _signed(tmp_path, artifacts, keys)
    _forge(pack, TEST_SH, b"exit 0\n")
    forger_private, forger_public, forger_fp = generate_keypair(tmp_path / "forger")
    from envfactory.packs.signing import sign_manifest

    sig = sign_manifest((pack / "pack.json").read_bytes(), load_private_key(forger_private))
    (pack / "pack.sig").write_text(sig.model_dump_json())
    assert _verify(str(pack), "--trust", str(forger_public))[0] == 0
    code, out = _verify(str(pack), "--trust", str(keys[1]))
    assert code == 2 and f"signed by key {forger_fp}, which is not trusted" in out


def test_a_tampered_signature_fails(tmp_path, artifacts, keys):
    pack = _signed(tmp_path, artifacts, keys)
    raw = json.loads((pack / "pack.sig").read_text())
    sig = bytearray(base64.b64decode(raw["signature"]))
    sig[0] ^= 1
    raw["signature"] = base64.b64encode(bytes(sig)).decode()
    (pack / "pack.sig").write_text(json.dumps(raw))
    code, out = _verify(str(pack), "--trust", str(keys[1]))
    assert code == 2 and "does not match pack.json" in out
    (pack / "pack.sig").write_text("not json")
    with pytest.raises(InvalidPack, match="pack.sig: not a valid pack signature"):
        verify_pack(pack)


def test_a_tampered_signature_in_a_tar_is_refused_before_any_member_is_extracted(
    tmp_path, artifacts, keys
):
    pack = _signed(tmp_path, artifacts, keys, "p.tar")
    evil = tmp_path / "evil.tar"
    with tarfile.open(pack) as tin, tarfile.open(evil, "w") as tout:
        for info in tin:
            data = tin.extractfile(info).read()  # type: ignore[union-attr]
            if info.name == "pack.sig":
                raw = json.loads(data)
                raw["signature"] = base64.b64encode(bytes(64)).decode()
                data = json.dumps(raw).encode()
                info.size = len(data)
            tout.addfile(info, io.BytesIO(data))
    with pytest.raises(InvalidPack, match="does not match pack.json"):
        open_verified(evil, tmp_path / "x", trust=TrustedKeys.load([keys[1]]))
    assert not (tmp_path / "x").exists() or not any((tmp_path / "x").rglob("*"))


def test_an_unsigned_pack_is_refused_by_import_when_a_trust_directory_is_set(
    tmp_path, artifacts, keys
):
    unsigned = tmp_path / "u.tar"
    export_pack([make_item(artifacts)], unsigned, artifacts=artifacts, created_by="t")
    signed = _signed(tmp_path, artifacts, keys, "s.tar")
    trust_dir = tmp_path / "trusted"
    trust_dir.mkdir()
    (trust_dir / "alice.pub").write_bytes(keys[1].read_bytes())
    env = {"ENVFACTORY_HOME": str(tmp_path / "home"), "ENVFACTORY_PACKS__TRUST_DIR": str(trust_dir)}
    runner = CliRunner()
    res = runner.invoke(app, ["pack", "import", str(unsigned), "--no-build"], env=env)
    assert res.exit_code == 2 and "the pack is not signed" in res.output
    assert TrustedKeys.load([keys[1]]).listing() in res.output  # type: ignore[union-attr]
    from envfactory.core.settings import Settings
    from envfactory.store import Store

    store = Store.from_settings(Settings(home=tmp_path / "home"))
    assert store.packs.list() == [] and store.environments.list() == []
    res = runner.invoke(app, ["pack", "import", str(signed), "--no-build", "--json"], env=env)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["imported"] == ["env-hello v1"]


def test_train_refuses_an_unsigned_pack_when_a_trust_directory_is_set(tmp_path, artifacts, keys):
    unsigned = tmp_path / "u.tar"
    export_pack([make_item(artifacts)], unsigned, artifacts=artifacts, created_by="t")
    trust_dir = tmp_path / "trusted"
    trust_dir.mkdir()
    (trust_dir / "alice.pub").write_bytes(keys[1].read_bytes())
    res = CliRunner().invoke(
        app,
        ["train", "--pack", str(unsigned), "--steps", "1"],
        env={"ENVFACTORY_PACKS__TRUST_DIR": str(trust_dir)},
    )
    assert res.exit_code == 2 and "the pack is not signed" in res.output


def test_a_trust_directory_without_keys_is_a_configuration_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds no public keys"):
        TrustedKeys.load((), tmp_path / "empty")
    with pytest.raises(ConfigError, match="does not exist"):
        TrustedKeys.load((), tmp_path / "missing")


def test_an_openssh_public_key_is_accepted_as_a_trusted_key(tmp_path, keys):
    from cryptography.hazmat.primitives import serialization

    key = load_private_key(keys[0]).public_key()
    ssh = tmp_path / "alice.pub"
    ssh.write_bytes(
        key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    )
    assert load_public_key(ssh) == load_public_key(keys[1])
