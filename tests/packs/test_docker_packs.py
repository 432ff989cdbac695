"""Packs on the real Docker engine: episodes, docker-save packs, and the store round trip.

The example environment is tiny on purpose (a file to write), so the cost is the
container starts, not the task: oracle's actions → 1, no actions → 0.
"""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

import pytest

from envfactory.core.errors import PublishBlocked
from envfactory.core.models import EnvStatus, VerifyScope
from envfactory.packs import ExportItem, export_pack, verify_pack
from envfactory.packs.images import DockerImages
from envfactory.packs.registry import import_pack, items_from_store
from envfactory.packs.runtime import Pack, capture_state
from verifiers.formats import load_task

from .conftest import gate_report, make_item

pytestmark = pytest.mark.docker

ORACLE = "echo hello > /workspace/out.txt"


@pytest.fixture
def engine(docker_engine):  # type: ignore[no-untyped-def]
    """The session's Docker engine (tests/conftest.py): labelled, cleaned up at the end."""
    return docker_engine


def _item(artifacts, env_id="env-hello", entry="bash test.sh"):
    item = make_item(artifacts, env_id)
    verifier = item.verifier.model_copy(update={"entry": entry})
    return ExportItem(item.spec, verifier, item.gate_report.model_copy(), item.seed)


def test_an_episode_from_a_pack_rewards_the_oracle_and_not_the_noop(tmp_path, artifacts, engine):
    export_pack([_item(artifacts)], tmp_path / "p.tar", artifacts=artifacts, created_by="t")
    with Pack.open(tmp_path / "p.tar", engine=engine) as pack:
        env = pack.environments[0]
        with env.reset() as ep:
            assert "input.txt" not in ep.exec("ls /workspace/verifier* 2>&1; ls /")
            ep.exec(ORACLE)
            assert ep.exec("cat /workspace/out.txt") == "hello"
            assert ep.reward() == 1
        with env.reset() as ep:
            assert ep.reward() == 0


def test_the_solver_cannot_reach_the_network_or_see_the_verifier(tmp_path, artifacts, engine):
    export_pack([_item(artifacts)], tmp_path / "p", artifacts=artifacts, created_by="t")
    with Pack.open(tmp_path / "p", engine=engine) as pack, pack.environments[0].reset() as ep:
        found = ep.exec(
            "grep -rl 'grep -qx hello' / --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr 2>/dev/null; true"
        )
        assert found == ""
        # the same search does find what the solver may see (a positive control)
        assert ep.exec("grep -rl hello /workspace") == "/workspace/input.txt"
        assert "[exit code" in ep.exec(
            "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), 2)'"
        )


def test_concurrent_episodes_on_docker_get_their_own_rewards(tmp_path, artifacts, engine):
    export_pack([_item(artifacts)], tmp_path / "p.tar", artifacts=artifacts, created_by="t")

    async def rollout(env, solve: bool) -> int:
        async with await env.areset() as ep:
            if solve:
                await ep.aexec(ORACLE)
            return await ep.areward()

    async def main(env):
        return await asyncio.gather(*(rollout(env, i % 2 == 0) for i in range(4)))

    with Pack.open(tmp_path / "p.tar", engine=engine) as pack:
        assert asyncio.run(main(pack.environments[0])) == [1, 0, 1, 0]


def test_a_docker_save_pack_loads_its_image_and_runs(tmp_path, artifacts, engine):
    item = _item(artifacts)
    image = engine.build(_context(item, artifacts), dockerfile="Dockerfile").image
    item = ExportItem(
        item.spec.model_copy(update={"image": image}), item.verifier, item.gate_report
    )
    manifest = export_pack(
        [item],
        tmp_path / "p.tar",
        artifacts=artifacts,
        created_by="t",
        images="save",
        saver=DockerImages.from_engine(engine),
    )
    assert manifest.environments[0].image_format == "docker-save"
    assert any(m.path.endswith("solver/image.tar") and m.size > 1_000_000 for m in manifest.members)
    with Pack.open(tmp_path / "p.tar", engine=engine) as pack:
        env = pack.environments[0]
        assert env.image() == engine.client.images.get(image).id
        with env.reset() as ep:
            ep.exec(ORACLE)
            assert ep.reward() == 1


def _context(item, artifacts) -> bytes:
    from verifiers.formats import context_tar

    return context_tar(item.spec.build, artifacts.get)


def _gate(engine, spec, verifier, files, image):
    from verifiers.gates import GateInput, run_gates

    return run_gates(
        GateInput(
            engine=engine,
            spec=spec,
            verifier=verifier,
            files=files,
            image=image,
            repeats=1,
            concurrency=2,
        )
    )


def _verdicts(report):
    return report.verdict, sorted((c.kind.value, c.name, c.passed) for c in report.checks)


@pytest.mark.slow
def test_export_verify_import_and_revalidate_gives_the_same_verdicts(tmp_path, engine):
    from envfactory.store import ArtifactStore, Store
    from envfactory.store.migrate import upgrade

    def store_at(name: str):
        url = f"sqlite:///{tmp_path / name}.db"
        upgrade(url)
        return Store.open(url), ArtifactStore(tmp_path / f"{name}-artifacts")

    src, src_art = store_at("source")
    item = _item(src_art)  # ArtifactStore has the same put_bytes/get contract
    image = engine.build(_context(item, src_art)).image
    spec = item.spec.model_copy(update={"image": image})
    report = _gate(engine, spec, item.verifier, src_art.get, image)
    assert report.verdict == "passed", report.reasons
    src.environments.add(spec, EnvStatus.PUBLISHED)
    src.verifiers.add(item.verifier)
    src.gate_reports.add(report)

    export_pack(
        items_from_store(src, [spec.id]), tmp_path / "p.tar", artifacts=src_art, created_by="t"
    )
    verify_pack(tmp_path / "p.tar")

    dst, dst_art = store_at("dest")
    result = import_pack(tmp_path / "p.tar", store=dst, artifacts=dst_art, engine=engine)
    assert [(e.env_id, e.already_present) for e in result.environments] == [(spec.id, False)]
    imported = dst.environments.get(spec.id)
    assert dst.environments.record(spec.id).status == EnvStatus.IMPORTED  # gated elsewhere
    again = _gate(engine, imported, dst.verifiers.get(spec.id), dst_art.get, imported.image)
    assert _verdicts(again) == _verdicts(report) == _verdicts(dst.gate_reports.latest(spec.id))
    # importing the same pack twice changes nothing
    second = import_pack(tmp_path / "p.tar", store=dst, artifacts=dst_art, engine=engine)
    assert [e.already_present for e in second.environments] == [True]


@pytest.mark.slow
def test_a_verifier_that_always_passes_fails_the_gates_and_is_not_exported(
    tmp_path, artifacts, engine
):
    item = _item(artifacts, entry="true")
    image = engine.build(_context(item, artifacts)).image
    report = _gate(engine, item.spec, item.verifier, artifacts.get, image)
    assert report.verdict == "failed"
    with pytest.raises(PublishBlocked, match="no-op"):
        export_pack(
            [ExportItem(item.spec, item.verifier, report)],
            tmp_path / "p",
            artifacts=artifacts,
            created_by="t",
        )


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"


def test_an_example_task_as_a_pack_rewards_the_oracle_steps_and_nothing_else(
    tmp_path, artifacts, engine
):
    """examples/tasks/csv-report: the reference steps → 1; no actions → 0; the authored
    partial solution (a plain re-run that misses the EU export) → 0."""
    task = load_task(EXAMPLES / "csv-report", artifacts)
    item = ExportItem(task.spec, task.verifier, gate_report(task.spec.id))
    export_pack([item], tmp_path / "p.tar", artifacts=artifacts, created_by="t")
    partial = task.spec.partial_solutions[0]
    with Pack.open(tmp_path / "p.tar", engine=engine) as pack:
        env = pack.environment(task.spec.id)
        assert "report" in env.instruction
        rewards = []
        for steps in (task.spec.reference_solution, (), partial.steps):
            with env.reset() as ep:
                for step in steps:
                    ep.exec(step.script)
                rewards.append(ep.reward())
    assert rewards == [1, 0, 0]


@pytest.mark.slow
def test_a_full_state_environment_rewards_from_a_committed_state(tmp_path, artifacts, engine):
    """Scope full-state: the final container is committed and verified as a whole; a
    change outside the workspace (tamper evidence) forces 0 even with the right answer."""
    item = _item(artifacts)
    spec = item.spec.model_copy(update={"verify_scope": VerifyScope.FULL_STATE})
    export_pack(
        [ExportItem(spec, item.verifier, item.gate_report)],
        tmp_path / "p",
        artifacts=artifacts,
        created_by="t",
    )
    with Pack.open(tmp_path / "p", engine=engine) as pack:
        env = pack.environments[0]
        rewards = []
        for actions in (
            [ORACLE],
            [],
            [ORACLE, "echo 'exit 0' > /usr/local/bin/grep; chmod +x /usr/local/bin/grep"],
        ):
            with env.reset() as ep:
                for a in actions:
                    ep.exec(a)
                rewards.append(ep.reward())
    assert rewards == [1, 0, 0]


def test_workspace_scope_ignores_a_hijacked_tool_and_can_still_record_it(
    tmp_path, artifacts, engine
):
    """Workspace scope verifies the workspace inside the pristine image: replacing `grep`
    outside the workspace cannot fake a pass; with evidence on, the change is recorded."""
    export_pack([_item(artifacts)], tmp_path / "p", artifacts=artifacts, created_by="t")
    hijack = "printf '#!/bin/sh\\nexit 0\\n' > /usr/bin/grep; chmod +x /usr/bin/grep"
    capture = functools.partial(capture_state, evidence=True)
    with Pack.open(tmp_path / "p", engine=engine, capture=capture) as pack:
        env = pack.environments[0]
        with env.reset() as ep:
            assert (
                ep.exec(hijack + "; grep -q anything /nonexistent && echo hijacked") == "hijacked"
            )
            assert ep.reward() == 0
            assert any(c.path == "/usr/bin/grep" for c in ep.verification.tamper)
        with env.reset() as ep:
            ep.exec(ORACLE)
            assert ep.reward() == 1
