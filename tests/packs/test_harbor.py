"""Harbor-format packs: Harbor's task layout at the top, our records beside it, hashed."""

from __future__ import annotations

import pytest

from envfactory.core.errors import InvalidPack, PublishBlocked
from envfactory.packs import export_pack, verify_pack
from envfactory.packs.runtime import Pack
from verifiers.formats import load_task

from .conftest import make_item
from .fakes import FakeEngine, oracle_reward, snapshot_capture
from .test_runtime import ORACLE


def test_a_harbor_pack_lays_out_each_task_for_harbor_tools(tmp_path, artifacts):
    manifest = export_pack(
        [make_item(artifacts, "env-a")],
        tmp_path / "h",
        artifacts=artifacts,
        created_by="t",
        fmt="harbor",
    )
    task = tmp_path / "h/env-a"
    for rel in (
        "instruction.md",
        "task.toml",
        "environment/Dockerfile",
        "solution/solve.sh",
        "tests/test.sh",
    ):
        assert (task / rel).is_file(), rel
    vis = {m.path: m.visibility for m in manifest.members}
    assert vis["env-a/tests/test.sh"] == "verifier"
    assert vis["env-a/instruction.md"] == vis["env-a/environment/Dockerfile"] == "solver"
    assert vis["env-a/solution/solve.sh"] == vis["envfactory/env-a/meta/gate_report.json"] == "meta"
    assert manifest.format == "harbor" and verify_pack(tmp_path / "h").manifest == manifest


@pytest.mark.parametrize(
    "harbor_noop,why",
    [(None, "gated under envfactory's runtime only"), (1, "not safe under Harbor's runtime")],
)
def test_a_harbor_export_needs_a_verifier_gated_safe_under_harbors_runtime(
    tmp_path, artifacts, harbor_noop, why
):
    item = make_item(artifacts, "env-a", harbor_noop=harbor_noop)
    with pytest.raises(PublishBlocked, match=why):
        export_pack([item], tmp_path / "h", artifacts=artifacts, created_by="t", fmt="harbor")
    # the envfactory format promises envfactory's runtime only: that export goes ahead
    export_pack([item], tmp_path / "e", artifacts=artifacts, created_by="t")


def test_a_harbor_task_from_a_pack_loads_back_to_the_same_task(tmp_path, artifacts):
    item = make_item(artifacts, "env-a")
    export_pack([item], tmp_path / "h.tar", artifacts=artifacts, created_by="t", fmt="harbor")
    export_pack([item], tmp_path / "h", artifacts=artifacts, created_by="t", fmt="harbor")
    loaded = load_task(tmp_path / "h/env-a", artifacts)
    assert loaded.spec.instruction.strip() == item.spec.instruction.strip()
    assert (
        loaded.spec.reference_solution[0].script.strip() == item.spec.reference_solution[0].script
    )
    assert {f.key for f in loaded.verifier.files} >= {f.key for f in item.verifier.files}
    verify_pack(tmp_path / "h.tar")


def test_a_tampered_harbor_test_is_named(tmp_path, artifacts):
    export_pack(
        [make_item(artifacts, "env-a")],
        tmp_path / "h",
        artifacts=artifacts,
        created_by="t",
        fmt="harbor",
    )
    (tmp_path / "h/env-a/tests/test.sh").write_text("exit 0\n")
    with pytest.raises(InvalidPack, match="env-a/tests/test.sh: sha256 mismatch"):
        verify_pack(tmp_path / "h")


def test_a_harbor_pack_runs_episodes_like_our_own_format(tmp_path, artifacts):
    export_pack(
        [make_item(artifacts, "env-a")],
        tmp_path / "h.tar",
        artifacts=artifacts,
        created_by="t",
        fmt="harbor",
    )
    engine = FakeEngine()
    with Pack.open(
        tmp_path / "h.tar",
        engine=engine,
        reward_fn=oracle_reward(engine, ORACLE),
        capture=snapshot_capture,
    ) as pack:
        env = pack.environment("env-a")
        assert env.instruction.startswith("Write the word hello")
        with env.reset() as ep:
            ep.exec(ORACLE)
            assert ep.reward() == 1
    assert engine.builds == 1
