"""Repository intake: a local path, a file:// URL → one bundle in the artifact store; an
unreachable, malformed or too large repository is an error naming it, and nothing of it
is stored."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from envfactory.core.errors import InvalidRepository
from envfactory.repos import clone_repository, open_snapshot
from envfactory.store import ArtifactStore

from .made_repos import python_repo


def _stored(artifacts: ArtifactStore) -> list[str]:
    return list(artifacts.keys()) if artifacts.root.exists() else []


def test_a_local_path_and_its_file_url_store_the_same_bundle_named_by_head(tmp_path: Path) -> None:
    repo = python_repo(tmp_path / "calc")
    artifacts = ArtifactStore(tmp_path / "artifacts")
    by_path = clone_repository(str(repo.path), artifacts)
    by_url = clone_repository(f"file://{repo.path}", artifacts)
    assert by_path.head == by_url.head == repo.git("rev-parse", "HEAD")
    assert by_path.bundle_key == by_url.bundle_key
    assert _stored(artifacts) == [by_path.bundle_key]
    bare = open_snapshot(by_path, artifacts, tmp_path / "cache")
    refs = subprocess.run(
        ["git", "-C", str(bare), "for-each-ref", "--format=%(refname)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert {"refs/heads/main", "refs/heads/later", "refs/tags/v1"} <= set(refs)


@pytest.mark.parametrize(
    "source, words",
    [
        ("", "empty"),
        (" /tmp/x", "padded"),
        ("-uhack", "may not start with '-'"),
        ("ftp://example.com/x.git", "unsupported URL scheme"),
        ("/no/such/repository/here", "no such file or directory"),
    ],
)
def test_a_malformed_source_is_refused_with_what_is_wrong(
    tmp_path: Path, source: str, words: str
) -> None:
    artifacts = ArtifactStore(tmp_path / "artifacts")
    with pytest.raises(InvalidRepository, match=words):
        clone_repository(source, artifacts)
    assert _stored(artifacts) == []


def test_an_unreachable_repository_is_an_error_and_stores_nothing(tmp_path: Path) -> None:
    artifacts = ArtifactStore(tmp_path / "artifacts")
    with pytest.raises(InvalidRepository, match="could not be cloned"):
        clone_repository("http://127.0.0.1:9/nothing.git", artifacts, timeout_s=30)
    assert _stored(artifacts) == []


def test_a_directory_that_is_no_repository_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.txt").write_text("a\n")
    artifacts = ArtifactStore(tmp_path / "artifacts")
    with pytest.raises(InvalidRepository, match="could not be cloned"):
        clone_repository(str(tmp_path / "plain"), artifacts)
    assert _stored(artifacts) == []


def test_a_repository_over_the_size_limit_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    repo = python_repo(tmp_path / "calc")
    artifacts = ArtifactStore(tmp_path / "artifacts")
    with pytest.raises(InvalidRepository, match="too large"):
        clone_repository(str(repo.path), artifacts, max_bytes=1000)
    assert _stored(artifacts) == []


def test_a_repository_without_commits_is_refused(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "empty")], check=True)
    artifacts = ArtifactStore(tmp_path / "artifacts")
    with pytest.raises(InvalidRepository):
        clone_repository(str(tmp_path / "empty"), artifacts)
    assert _stored(artifacts) == []
