"""The research role's finish tool: invalid output, a failed build and a failing step all go
back to the model for repair; only a proven environment comes out. The engine here is a
small hand-written one over host directories (the real Docker path runs in the example-seed
stage, tests/examples)."""

from __future__ import annotations

import asyncio
import hashlib
import io
import tarfile
from pathlib import Path

from envfactory.agents import Script, ScriptedModel
from envfactory.agents.build_context import context_tar, load_context
from envfactory.agents.recording import get_model
from envfactory.agents.roles import ResearchInput, RoleRuntime, run_research
from envfactory.core.errors import ImageBuildFailed
from envfactory.core.models import BuildResult, EnvironmentSpec, TaskSeed, Trajectory
from envfactory.core.settings import AgentSettings


class DirEngine:
    """Builds "images" by unpacking the context into a directory (no Dockerfile semantics
    beyond: it must start with FROM); `start` copies that directory into a fresh sandbox."""

    def __init__(self, root: Path, make_sandbox) -> None:
        self.root, self.builds, self.started = root, 0, 0
        self.make_sandbox = make_sandbox
        self.images: dict[str, bytes] = {}

    def build(
        self, context_tar: bytes, *, dockerfile: str = "Dockerfile", tag: str | None = None
    ) -> BuildResult:
        self.builds += 1
        with tarfile.open(fileobj=io.BytesIO(context_tar)) as tar:
            df = tar.extractfile(dockerfile)
            text = df.read().decode() if df else ""
        if not text.startswith("FROM "):
            raise ImageBuildFailed(
                f"Step 1/1 : {text.splitlines()[0] if text else ''}\n"
                "unknown instruction: expected FROM"
            )
        image = "dir-" + hashlib.sha256(context_tar).hexdigest()[:12]
        self.images[image] = context_tar
        return BuildResult(
            image=image, tag=image, context_hash=hashlib.sha256(context_tar).hexdigest()
        )

    def start(self, image: str, **kw: object):
        self.started += 1
        root = self.root / f"box{self.started}"
        (root / "workspace").mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(self.images[image])) as tar:
            tar.extractall(root / "workspace")  # our own build context (Debian 12: no filter=)
        return self.make_sandbox(root)


def _seed() -> TaskSeed:
    return TaskSeed(
        id="seed-1",
        title="Sum the ledger",
        description="An analyst sums a ledger.",
        domain="data",
        content_hash="b" * 64,
    )


FINISH = {
    "name": "ledger-sum",
    "instruction": "Write the total of ledger.csv to /workspace/total.txt.",
    "success_criteria": "total.txt holds the sum of the amount column of ledger.csv.",
    "hidden_state_notes": "one row is a refund with a negative amount",
    "reference_solution": [{"title": "sum", "script": "exit 3"}],
    "partial_solutions": [{"name": "nothing", "steps": [{"script": "true"}]}],
}
GOOD_STEPS = [{"title": "sum", "script": "test -f ledger.csv && echo 5 > total.txt"}]


def _turns() -> Script:
    w = lambda p, c: {"calls": [{"tool": "write_file", "args": {"path": p, "content": c}}]}  # noqa: E731
    f = lambda a: {"calls": [{"tool": "finish", "args": a}]}  # noqa: E731
    return Script.model_validate(
        {
            "role": "research",
            "turns": [
                w("/env/Dockerfile", "FORM python:3.11-slim\n"),
                w("/env/ledger.csv", "amount\n7\n-2\n"),
                f(
                    {k: v for k, v in FINISH.items() if k != "instruction"}
                ),  # invalid: field missing
                f(FINISH),  # the build fails: FORM
                w("/env/Dockerfile", "FROM python:3.11-slim\nCOPY ledger.csv /workspace/\n"),
                f(FINISH),  # the reference solution's step exits 3
                f(FINISH | {"reference_solution": GOOD_STEPS}),
            ],
        }
    )


def test_research_repairs_invalid_output_build_failures_and_failing_steps(
    tmp_path, sandbox, store, make_sandbox
):
    engine = DirEngine(tmp_path / "engine", make_sandbox)
    model = ScriptedModel(_turns())
    rt = RoleRuntime(model=model, settings=AgentSettings(max_turns=10), store=store)
    res = asyncio.run(
        run_research(ResearchInput(seed=_seed()), rt=rt, builder=sandbox, engine=engine)
    )
    traj = get_model(store, res.trajectory_key, Trajectory)
    obs = [s.observations[0] for s in traj.steps]
    assert "instruction" in obs[2] and "Field required" in obs[2]
    assert "did not build" in obs[3] and "expected FROM" in obs[3]
    assert "reference solution step 1 (sum) failed: exit code 3" in obs[5]
    assert obs[6].startswith("environment built")
    assert engine.builds == 3 and traj.stop_reason == "finished"

    spec = get_model(store, res.spec_key, EnvironmentSpec)
    assert spec == res.spec and spec.seed_id == "seed-1" and spec.image == res.build.image
    assert [s.script for s in spec.reference_solution] == [GOOD_STEPS[0]["script"]]
    assert {e.path for e in spec.build.files} == {"Dockerfile", "ledger.csv"}
    files = load_context(store, spec.build)  # the stored context rebuilds the same image
    assert engine.build(context_tar(files)).image == spec.image
    assert traj.env_id == spec.id


def test_research_task_shows_the_seed_and_where_to_write(tmp_path, sandbox, store, make_sandbox):
    model = ScriptedModel(_turns())
    rt = RoleRuntime(model=model, settings=AgentSettings(max_turns=10), store=store)
    asyncio.run(
        run_research(
            ResearchInput(seed=_seed()),
            rt=rt,
            builder=sandbox,
            engine=DirEngine(tmp_path / "e", make_sandbox),
        )
    )
    task = model.requests[0][1]["content"]
    assert "Sum the ledger" in task and "An analyst sums a ledger." in task and "/env" in task


def test_a_reference_solution_whose_last_step_changes_nothing_is_refused(
    tmp_path, sandbox, store, make_sandbox
):
    w = lambda p, c: {"calls": [{"tool": "write_file", "args": {"path": p, "content": c}}]}  # noqa: E731
    f = lambda a: {"calls": [{"tool": "finish", "args": a}]}  # noqa: E731
    check_last = GOOD_STEPS + [{"title": "check", "script": "grep -q 5 total.txt"}]
    model = ScriptedModel(
        Script.model_validate(
            {
                "turns": [
                    w("/env/Dockerfile", "FROM python:3.11-slim\nCOPY ledger.csv /workspace/\n"),
                    w("/env/ledger.csv", "amount\n7\n-2\n"),
                    f(FINISH | {"reference_solution": check_last, "partial_solutions": []}),
                    f(FINISH | {"reference_solution": GOOD_STEPS, "partial_solutions": []}),
                ]
            }
        )
    )
    rt = RoleRuntime(model=model, settings=AgentSettings(max_turns=10), store=store)
    res = asyncio.run(
        run_research(
            ResearchInput(seed=_seed()),
            rt=rt,
            builder=sandbox,
            engine=DirEngine(tmp_path / "e", make_sandbox),
        )
    )
    traj = get_model(store, res.trajectory_key, Trajectory)
    assert "the last step changes nothing in /workspace" in traj.steps[2].observations[0]
    assert len(res.spec.reference_solution) == 1
