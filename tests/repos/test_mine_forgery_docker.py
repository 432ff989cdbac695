"""A mined environment against forgeries appended to its module under test, on Docker.

The Python repository the tests make (made_repos.python_repo) is mined at its `sub` fix;
its untouched state (the fix not done) gets, appended to calc.py, either the two lines
that passed published mined environments or the `in-process-forgery` probe's payload.
The check.py published environments carry (tests/repos/check_unguarded.py: pytest in the
process that imports calc.py, the verdict from its JUnit file) gives both 1; today's
check.py, whose tests run under the guard in a child process, gives both 0.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from envfactory.core.models import EnvironmentSpec, FileEntry
from envfactory.core.models.repos import CandidateInput
from envfactory.core.settings import Settings
from envfactory.repos import RepoMiner, clone_repository
from envfactory.store import ArtifactStore, Store
from sandboxes import DockerEngine
from verifiers.formats import context_tar, load_task
from verifiers.probes import by_name
from verifiers.probes.base import Probe
from verifiers.runner import verifier_tar, verify_prepared
from verifiers.states import pristine_state, produce_probe

from .made_repos import python_repo

pytestmark = [pytest.mark.docker, pytest.mark.slow]

UNGUARDED = Path(__file__).with_name("check_unguarded.py")


class IssueLines(Probe):
    """The two lines appended to the module under test that passed published mined
    environments (issue 43)."""

    name = "issue-lines"

    def script(self, spec: EnvironmentSpec) -> str:
        lines = "import _pytest.python as p\\np.Function.runtest = lambda self: None\\n"
        return f"printf '\\n{lines}' >> {spec.workdir}/calc.py"


@pytest.fixture
def engine(settings: Settings):  # type: ignore[no-untyped-def]
    eng = DockerEngine(settings.sandbox, run_id=f"test-forge-{uuid.uuid4().hex[:8]}")
    yield eng
    eng.gc(run_id=eng.run_id, include_live=True, images=True)


def test_forgeries_in_the_module_under_test_pass_the_old_check_and_fail_the_guarded_one(
    tmp_path: Path, engine: DockerEngine, store: Store, artifacts: ArtifactStore
) -> None:
    repo = python_repo(tmp_path / "calc")
    snap = clone_repository(str(repo.path), artifacts)
    miner = RepoMiner(engine, artifacts, store, tmp_path / "work")
    mined = miner.mine_candidate(CandidateInput(snapshot=snap, commit=repo.commits["sub-fix"]))
    assert mined.outcome == "stored", mined
    task = load_task(tmp_path / "work" / "tasks" / f"repo-{mined.commit[:12]}", artifacts)
    spec, guarded = task.spec, task.verifier
    image = engine.build(context_tar(spec.build, artifacts.get)).image
    unguarded = guarded.model_copy(
        update={
            "files": tuple(
                FileEntry(path=f.path, key=artifacts.put_bytes(UNGUARDED.read_bytes()), mode=f.mode)
                if f.path.endswith("check.py")
                else f
                for f in guarded.files
            )
        }
    )
    noop = pristine_state(engine, image, spec)
    seen: dict[tuple[str, str], int] = {}
    for probe in (IssueLines(), by_name("in-process-forgery")):
        state = produce_probe(engine, image, spec, noop, probe)
        for label, verifier in (("unguarded", unguarded), ("guarded", guarded)):
            prepared = replace(state.prepared, premise_file=probe.premise_file)
            res = verify_prepared(
                engine,
                prepared,
                spec=spec,
                verifier=verifier,
                verifier_files=verifier_tar(verifier, artifacts.get),
            )
            seen[(probe.name, label)] = res.reward
            if probe.premise_file:
                assert res.premise and "pytest" in res.premise, res  # the payload ran
    untouched = verify_prepared(
        engine, noop.prepared, spec=spec, verifier=guarded,
        verifier_files=verifier_tar(guarded, artifacts.get),
    )  # fmt: skip
    assert untouched.reward == 0
    assert seen == {
        ("issue-lines", "unguarded"): 1,
        ("issue-lines", "guarded"): 0,
        ("in-process-forgery", "unguarded"): 1,
        ("in-process-forgery", "guarded"): 0,
    }
