"""End to end on the local Docker engine, for every example seed, with the scripted model:

research builds an EnvironmentSpec whose image builds and whose reference solution runs
(the finish tool proves it); the judge solves it in a fresh container; the verifier writer
writes a verifier from the instruction alone; and that verifier, run by the real verifier
runner, gives reward 1 to the judge's final state and 0 to the untouched environment and
to the red team's shortcut.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from envfactory.agents import ScriptedModel
from envfactory.agents.roles import (
    JudgeInput,
    RedTeamInput,
    ResearchInput,
    RoleRuntime,
    VerifierWriterInput,
    run_judge,
    run_red_team,
    run_research,
    run_verifier_writer,
)
from envfactory.agents.scripts import load_script
from envfactory.core.models import Attachment, Purpose, TaskSeed, Verifier
from envfactory.core.settings import AgentSettings, SeedLimits
from envfactory.seeds import load_seed
from envfactory.store import ArtifactStore
from verifiers.runner import verify_state

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SEEDS_DIR = Path(__file__).resolve().parents[2] / "examples" / "seeds"
EXAMPLES = sorted(p.name for p in SEEDS_DIR.iterdir() if (p / "seed.yaml").is_file())


@pytest.fixture(scope="module")
def engine(docker_engine):
    """The session's labelled engine (tests/conftest.py); it removes what we leave."""
    return docker_engine


def _seed(name: str, store: ArtifactStore) -> TaskSeed:
    draft = load_seed(SEEDS_DIR / name, SeedLimits())
    f = draft.fields
    return TaskSeed(
        id=draft.seed_id,
        title=f.title,
        description=f.description,
        domain=f.domain,
        attachments=tuple(
            Attachment(path=a.path, key=store.put_bytes(a.data), size=len(a.data))
            for a in draft.files
        ),
        repository=f.repository,
        constraints=f.constraints,
        source=f.source,
        content_hash=draft.content_hash,
    )


def _rt(seed: str, role: str, store: ArtifactStore) -> RoleRuntime:
    return RoleRuntime(
        model=ScriptedModel(load_script(seed, role)),
        settings=AgentSettings(max_turns=30),
        store=store,
    )


def _reward(engine, state, spec, verifier: Verifier, store: ArtifactStore) -> int:
    """The real verifier runner (fresh container, workspace scope, env -i, random dir)."""
    image, diff = (spec.image, ()) if state is None else (state.image, state.diff)
    return verify_state(
        engine,
        state_image=image,
        pristine_image=spec.image,
        spec=spec,
        verifier=verifier,
        files=store.get,
        state_diff=diff,
    ).reward


@pytest.mark.parametrize("seed", EXAMPLES)
def test_scripted_pipeline_yields_a_built_solvable_verified_environment(
    seed, engine, base_image, tmp_path
):
    store = ArtifactStore(tmp_path / "artifacts")
    base = base_image
    builder = engine.start(base, purpose=Purpose.TEST)
    try:
        res = asyncio.run(
            run_research(
                ResearchInput(seed=_seed(seed, store)),
                rt=_rt(seed, "research", store),
                builder=builder,
                engine=engine,
            )
        )
    finally:
        builder.remove()
    spec = res.spec
    assert spec.image == res.build.image and len(spec.reference_solution) >= 2
    assert any(e.path == "Dockerfile" for e in spec.build.files)

    async def in_fresh(role_fn, inp, role, rt=None):
        box = engine.start(spec.image, purpose=Purpose.TEST)
        try:
            return await role_fn(inp, rt=rt or _rt(seed, role, store), sandbox=box)
        finally:
            box.remove()

    judged = asyncio.run(in_fresh(run_judge, JudgeInput.from_spec(spec), "judge"))
    assert judged.claimed_solved and judged.final_state is not None
    red = asyncio.run(in_fresh(run_red_team, RedTeamInput.from_spec(spec), "red_team"))
    assert red.final_state is not None
    writer_rt = _rt(seed, "verifier", store)
    written = asyncio.run(
        in_fresh(run_verifier_writer, VerifierWriterInput.from_spec(spec), "verifier", writer_rt)
    )
    v = written.verifier
    # every prompt and tool output it was sent (its own assistant messages are its output)
    seen = json.dumps(
        [m for req in writer_rt.model.requests for m in req if m.get("role") != "assistant"]
    )
    # A solution line that is also in the environment's own files may legitimately be seen
    # (the writer explores the fresh environment); every other distinctive line must not be.
    env_text = "\n".join(store.get(f.key).decode("utf-8", "replace") for f in spec.build.files)
    for step in spec.reference_solution:
        for line in step.script.splitlines():
            text = line.strip()
            if len(text) < 30 or text in env_text:
                continue
            assert json.dumps(text)[1:-1] not in seen, line
    assert _reward(engine, judged.final_state, spec, v, store) == 1
    assert _reward(engine, None, spec, v, store) == 0
    assert _reward(engine, red.final_state, spec, v, store) == 0
    # snapshots are removed by the module's gc (labelled with our run id); the environment
    # image stays in the engine's content-addressed build cache for the next run
