"""Episode runtime over the recording engine: plumbing and the reward invariants."""

from __future__ import annotations

import asyncio

import pytest

from envfactory.core.errors import InvalidPack, NotFound
from envfactory.packs import export_pack
from envfactory.packs.runtime import EpisodeFinished, Pack

from .conftest import make_item
from .fakes import FakeEngine, oracle_reward, snapshot_capture

ORACLE = "echo hello > /workspace/out.txt"


@pytest.fixture
def pack_path(tmp_path, artifacts):
    items = [make_item(artifacts, "env-a"), make_item(artifacts, "env-b")]
    export_pack(items, tmp_path / "p.tar", artifacts=artifacts, created_by="t")
    return tmp_path / "p.tar"


def _open(pack_path, engine):
    return Pack.open(
        pack_path, engine=engine, reward_fn=oracle_reward(engine, ORACLE), capture=snapshot_capture
    )


def test_the_oracle_actions_earn_reward_one_and_no_actions_earn_zero(pack_path):
    engine = FakeEngine()
    with _open(pack_path, engine) as pack:
        env = pack.environment("env-a")
        assert env.instruction.startswith("Write the word hello")
        with env.reset() as ep:
            assert ep.exec(ORACLE) == f"ran: {ORACLE}"
            assert ep.reward() == 1
        with env.reset() as ep:
            assert ep.reward() == 0


def test_the_solver_container_is_gone_before_the_verifier_runs(pack_path):
    engine = FakeEngine()
    with _open(pack_path, engine) as pack, pack.environments[0].reset() as ep:
        ep.exec(ORACLE)
        ep.reward()
    order = [e.split()[0] for e in engine.events]
    assert order == ["start", "exec", "restart", "snapshot", "remove", "verify"]
    # the verifier's files reached verification, and never the solver's sandbox
    assert "grep -qx hello" in engine.events[-1]
    assert not any(e.startswith(("write", "put_archive", "put_dir")) for e in engine.events)
    assert engine.removed_images == ["state-of-box0"]


def test_an_episode_is_rewarded_once_and_refuses_actions_afterwards(pack_path):
    engine = FakeEngine()
    with _open(pack_path, engine) as pack, pack.environments[0].reset() as ep:
        ep.exec(ORACLE)
        assert ep.reward() == 1 and ep.reward() == 1
        with pytest.raises(EpisodeFinished):
            ep.exec("ls")
    assert sum(e.startswith("verify") for e in engine.events) == 1


def test_a_failing_action_shows_its_exit_code_in_the_observation(pack_path):
    engine = FakeEngine()
    with _open(pack_path, engine) as pack, pack.environments[0].reset() as ep:
        assert ep.exec("false").endswith("[exit code 1]")


def test_concurrent_episodes_share_nothing_and_build_the_image_once(pack_path):
    engine = FakeEngine()

    async def rollout(env, solve: bool) -> int:
        async with await env.areset() as ep:
            await ep.aexec("ls")
            if solve:
                await ep.aexec(ORACLE)
            return await ep.areward()

    async def main(pack) -> list[int]:
        jobs = [rollout(pack.environments[i % 2], solve=i % 3 == 0) for i in range(8)]
        return await asyncio.gather(*jobs)

    with _open(pack_path, engine) as pack:
        rewards = asyncio.run(main(pack))
    assert rewards == [1 if i % 3 == 0 else 0 for i in range(8)]
    assert engine.builds == 2  # one per environment, however many resets raced
    assert len({b.id for b in engine.started}) == 8 and all(b.removed for b in engine.started)


def test_an_unknown_environment_is_named_with_the_ones_the_pack_holds(pack_path):
    with _open(pack_path, FakeEngine()) as pack, pytest.raises(NotFound, match="env-a, env-b"):
        pack.environment("env-zzz")


def test_opening_a_tampered_pack_fails_and_leaves_no_scratch_behind(tmp_path, artifacts):
    export_pack([make_item(artifacts)], tmp_path / "p", artifacts=artifacts, created_by="t")
    (tmp_path / "p/envs/env-hello/verifier/files/test.sh").write_text("exit 0\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with pytest.raises(InvalidPack, match="verifier/files/test.sh: sha256 mismatch"):
        Pack.open(tmp_path / "p", engine=FakeEngine(), scratch_dir=scratch)


def test_closing_a_pack_removes_the_extracted_copy(pack_path):
    pack = _open(pack_path, FakeEngine())
    scratch = pack._scratch
    assert scratch is not None and (scratch / "pack.json").is_file()
    pack.close()
    assert not scratch.exists()


def test_a_pack_level_reset_takes_each_environment_in_turn(pack_path):
    """The trainer's adapter only calls `pack.reset()`: every environment must get episodes."""
    engine = FakeEngine()
    with _open(pack_path, engine) as pack:
        env_ids = []
        for _ in range(4):
            with pack.reset() as ep:
                env_ids.append(ep.env.env_id)
    assert env_ids == ["env-a", "env-b", "env-a", "env-b"]
