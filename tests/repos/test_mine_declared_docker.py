"""Mining a repository that declares its own environment, on the local Docker engine: one
history mined once (a module fixture), one commit per rule.

- a test that imports a package of the project's `test` extra is fail-to-pass (the
  extra is installed; another extra is not);
- a test that imports a module nobody installs is dropped as a collection error naming
  the module, with counts at the parent and at the commit apart;
- a test of `git describe` passes at the commit: the past tag travels with the parent;
- a test requiring `LookupError` of an instruction that says "an exception" is held for
  review with the name;
- a revert of a commit in the visible history is dropped before anything is built;
- a requirement that builds only on Python 3.13 falls back from 3.11 to 3.13, and the
  row says why.

Slow (builds images): `docker` and `slow`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from envfactory.core.models.repos import CandidateInput, CandidateResult
from envfactory.core.settings import SandboxSettings
from envfactory.repos import RepoMiner, clone_repository
from envfactory.store import ArtifactStore, Store
from envfactory.store.migrate import upgrade
from sandboxes import DockerEngine

from .made_repos import declared_repo

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, CandidateResult]]:
    root = tmp_path_factory.mktemp("declared")
    repo = declared_repo(root / "shop")
    engine = DockerEngine(SandboxSettings(), run_id=f"test-declared-{uuid.uuid4().hex[:8]}")
    upgrade(url := f"sqlite:///{root / 'store.db'}")
    try:
        with Store.open(url) as store:
            artifacts = ArtifactStore(root / "artifacts")
            snap = clone_repository(str(repo.path), artifacts)
            miner = RepoMiner(engine, artifacts, store, root / "work")
            yield {
                label: miner.mine_candidate(CandidateInput(snapshot=snap, commit=sha))
                for label, sha in repo.commits.items()
            }
    finally:
        engine.gc(run_id=engine.run_id, include_live=True, images=True)


def test_a_test_extra_the_tests_import_is_installed(mined: dict[str, CandidateResult]) -> None:
    row = mined["extra-fix"]
    assert (row.outcome, row.fail_to_pass) == ("stored", ("tests.test_total::test_total",)), row
    assert "extra test (pyproject.toml)" in row.installed
    assert not [i for i in row.installed if "docs" in i]
    assert row.toolchain == "3.11" and "requires-python >=3.9" in row.toolchain_why


def test_a_collection_error_is_its_own_reason_naming_the_module(
    mined: dict[str, CandidateResult],
) -> None:
    row = mined["absent-fix"]
    assert (row.outcome, row.reason_kind) == ("dropped", "collection_error"), row
    assert "No module named 'envfactory_absent_module'" in row.reason
    assert "tests/test_tax.py" in row.reason
    assert row.parent_counts is not None and row.commit_counts is not None
    assert (row.commit_counts.errors, row.commit_counts.passed) == (1, 0)
    assert row.parent_counts.errors == 1


def test_a_version_test_passes_with_the_past_tag(mined: dict[str, CandidateResult]) -> None:
    row = mined["version-fix"]
    assert (row.outcome, row.fail_to_pass) == (
        "stored",
        ("tests.test_version::test_version",),
    ), row
    assert row.commit_counts is not None and row.commit_counts.passed == 1


def test_an_exception_the_instruction_does_not_name_holds_the_task(
    mined: dict[str, CandidateResult],
) -> None:
    row = mined["lookup-fix"]
    assert (row.outcome, row.reason_kind) == ("held", "underspecified"), row
    assert row.unsaid_names == ("LookupError",)
    assert row.findings == ("the tests require `LookupError`; the instruction does not say so",)
    assert row.env_id and row.fail_to_pass == ("tests.test_price::test_unknown",)


def test_a_revert_of_visible_history_is_dropped(mined: dict[str, CandidateResult]) -> None:
    row = mined["revert"]
    assert (row.outcome, row.reason_kind) == ("dropped", "reverts_visible_commit"), row
    assert mined["extra-fix"].commit[:12] in row.reason
    assert row.toolchain is None  # dropped before any image was built


def test_a_dependency_that_builds_only_on_another_python_falls_back(
    mined: dict[str, CandidateResult],
) -> None:
    row = mined["newonly-fix"]
    assert (row.outcome, row.fail_to_pass) == (
        "stored",
        ("tests.test_newest::test_newest",),
    ), row
    assert row.toolchain == "3.13"
    assert "did not build on Python 3.11" in row.toolchain_why
    assert "newonly needs Python 3.13 or newer" in row.toolchain_why
    assert "originates from a subprocess" not in row.toolchain_why
    assert "requirements requirements.txt" in row.installed
