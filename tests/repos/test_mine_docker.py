"""Mining repositories the tests make, on the local Docker engine, through the pipeline's
own gates and publishing.

- the Python repository through `envfactory repo mine --json`: the root commit, a commit
  without a test change, a fix that is published, a fix one of whose hunks no test reads
  (rejected, the hunk reported), a commit changing only a requirements file and an
  unbuildable commit, each with its outcome and reason;
- the image of a mined environment holds nothing of the history after the parent: the
  fix's blobs, the later branch and tag are not recoverable;
- a Go fix is mined with `go test` and published.

Slow (builds images, runs the whole battery once per repeat): `docker` and `slow`.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.agents.chat_server import LocalChatServer, text_reply
from envfactory.agents.model import OpenAIChatModel
from envfactory.cli import app
from envfactory.core.models import EnvStatus
from envfactory.core.models.repos import CandidateInput
from envfactory.core.settings import Settings
from envfactory.repos import RepoMiner, clone_repository
from envfactory.repos.wording import model_writer
from envfactory.store import ArtifactStore, Store
from sandboxes import DockerEngine
from verifiers.formats import context_tar, load_task
from workflows.composition import make_services
from workflows.repo_mining import gate_candidate

from .made_repos import go_repo, python_repo

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture
def engine(settings: Settings):  # type: ignore[no-untyped-def]
    eng = DockerEngine(settings.sandbox, run_id=f"test-repo-{uuid.uuid4().hex[:8]}")
    yield eng
    eng.gc(run_id=eng.run_id, include_live=True, images=True)


def test_mining_a_python_history_publishes_the_tested_fix_and_drops_the_rest_with_reasons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = python_repo(tmp_path / "calc")
    monkeypatch.setenv("ENVFACTORY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ENVFACTORY_DATABASE_URL", raising=False)
    res = CliRunner().invoke(
        app, ["repo", "mine", str(repo.path), "--repeats", "1", "--json"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    body = json.loads(res.stdout.strip().splitlines()[-1])
    rows = {r["commit"]: r for r in body["candidates"]}
    by = {label: rows[sha] for label, sha in repo.commits.items()}
    assert (by["root"]["outcome"], by["root"]["reason_kind"]) == ("dropped", "root_commit")
    assert (by["docs"]["outcome"], by["docs"]["reason"]) == ("dropped", "no test file changed")
    assert by["bad-req"]["reason_kind"] == "no_test_change"
    assert by["after-bad-req"]["reason_kind"] == "unbuildable"
    assert "envfactory-no-such-package-for-tests" in by["after-bad-req"]["reason"] or (
        "requirements.txt" in by["after-bad-req"]["reason"]
    )
    sub = by["sub-fix"]
    assert sub["outcome"] == "published", sub
    assert sub["fail_to_pass"] == ["tests.test_calc::test_sub"]
    assert set(sub["pass_to_pass"]) == {
        "tests.test_calc::test_add",
        "tests.test_calc::test_describe",
    }
    clamp = by["clamp-fix"]
    assert clamp["outcome"] == "rejected", clamp
    assert clamp["findings"] == ["the tests do not exercise hunk 2 of calc.py"]
    assert body["totals"]["scanned"] == 6
    assert body["totals"]["reached"]["published"] == 1
    assert body["totals"]["reached"]["fail_to_pass"] == 2


def test_a_mined_workspace_holds_nothing_after_the_parent(
    tmp_path: Path, engine: DockerEngine, store: Store, artifacts: ArtifactStore
) -> None:
    repo = python_repo(tmp_path / "calc")
    snap = clone_repository(str(repo.path), artifacts)
    miner = RepoMiner(engine, artifacts, store, tmp_path / "work")
    result = miner.mine_candidate(CandidateInput(snapshot=snap, commit=repo.commits["sub-fix"]))
    assert result.outcome == "stored", result
    task = load_task(tmp_path / "work" / "tasks" / f"repo-{result.commit[:12]}", artifacts)
    image = engine.build(context_tar(task.spec.build, artifacts.get)).image
    script = (
        "cd /app && git cat-file --batch-all-objects --batch-check && echo REFS"
        " && git for-each-ref --format='%(refname)' && echo LOG && git log --all --format=%H"
        " && echo REFLOG && git reflog --all | wc -l && ls .git"
    )
    out, sb = engine.run(image, ["bash", "-c", script])
    sb.remove()
    objects, rest = out.stdout.split("REFS", 1)
    refs, rest = rest.split("LOG", 1)
    log, rest = rest.split("REFLOG", 1)
    fix = {repo.blob(c, p) for c in ("sub-fix", "clamp-fix", "after-bad-req")
           for p in ("calc.py", "tests/test_calc.py")}  # fmt: skip
    assert not {b for b in fix if b in objects}
    assert refs.split() == ["refs/heads/main"]
    assert log.split() == [repo.commits["root"]]
    assert rest.split()[0] == "0"  # no reflog entry


def test_a_go_fix_is_mined_with_go_test_and_published(
    tmp_path: Path, engine: DockerEngine, settings: Settings
) -> None:
    repo = go_repo(tmp_path / "mathx")
    services = make_services(settings, engine=engine)
    snap = clone_repository(str(repo.path), services.artifacts)
    miner = RepoMiner(engine, services.artifacts, services.store, tmp_path / "work")
    mined = miner.mine_candidate(CandidateInput(snapshot=snap, commit=repo.commits["abs-fix"]))
    assert (mined.runner, mined.fail_to_pass) == ("go", ("mathx::TestAbs",))
    assert mined.pass_to_pass == ("mathx::TestMax",)
    result = gate_candidate(services, mined, repeats=1)
    assert result.outcome == "published", result
    assert services.store.environments.record(result.env_id or "").status == EnvStatus.PUBLISHED


def test_a_configured_model_writes_the_instruction_of_a_mined_commit(
    tmp_path: Path, engine: DockerEngine, store: Store, artifacts: ArtifactStore
) -> None:
    repo = python_repo(tmp_path / "calc")
    snap = clone_repository(str(repo.path), artifacts)
    answer = "sub(a, b) must return a minus b: sub(5, 3) is 2, not -2."
    with LocalChatServer([text_reply(answer, usage=(90, 30))], auto_summary=False) as server:
        model = OpenAIChatModel(name="writer-model", api_key="", base_url=server.url)
        miner = RepoMiner(engine, artifacts, store, tmp_path / "work", writer=model_writer(model))
        sub = miner.mine_candidate(CandidateInput(snapshot=snap, commit=repo.commits["sub-fix"]))
        docs = miner.mine_candidate(CandidateInput(snapshot=snap, commit=repo.commits["docs"]))
        shown = json.dumps(server.requests)
    assert (sub.outcome, sub.instruction_source, sub.tokens) == ("stored", "model", 120)
    assert docs.outcome == "dropped" and len(server.requests) == 1  # asked for candidates only
    assert "return a - b" not in shown and "Fix sub" in shown  # the message, never the diff
    page = store.environments.get(sub.env_id or "").instruction
    assert page.startswith(answer) and "written by the model writer-model" in page
