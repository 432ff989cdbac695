"""Oracle-derived probes change a committed result through its history (real Docker).

Regression of the integrity issue: on a sound git task (commit a version bump and tag it;
the verifier reads only objects and refs), `truncated-outputs@oracle` edited only the
working tree; the verifier rightly still gave 1 and the gates called it a shortcut. A
solver who commits a wrong result leaves the commit wrong and the tree matching it.
"""

from __future__ import annotations

import pytest

from envfactory.core.models import BuildContext, EnvironmentSpec, Purpose, Step
from verifiers.probes import TruncatedOutputs
from verifiers.probes.numbers import ZeroedNumbers

pytestmark = pytest.mark.docker

SPEC = EnvironmentSpec(
    id="env-git",
    name="git",
    instruction="Bump the version in /app/VERSION, commit it and tag it v1.2.0.",
    build=BuildContext(files=()),
    workdir="/app",
    workspace_paths=("/app",),
    reference_solution=(Step(script="true"),),
)

REPO = """
set -e
mkdir -p /app && cd /app && git init -q -b main
git config user.name Alice && git config user.email alice@example.com
printf 'name=tool\\nversion=1.1.0\\n' > VERSION && git add VERSION && git commit -qm 'start'
"""

COMMITTED = (
    REPO
    + """
printf 'name=tool\\nversion=1.2.0\\nchannel=stable\\n' > VERSION
GIT_COMMITTER_DATE='2026-01-02T03:04:05Z' git commit -qam 'release: 1.2.0'
git tag -a v1.2.0 -m 'version 1.2.0'
git branch release
"""
)


def _git(box, cmd: str) -> str:  # type: ignore[no-untyped-def]
    res = box.exec(["sh", "-c", f"cd /app && {cmd}"], user="root")
    assert res.exit_code == 0, res.stderr
    return res.stdout.strip()


@pytest.fixture
def box(docker_engine, base_image):  # type: ignore[no-untyped-def]
    with docker_engine.sandbox(base_image, purpose=Purpose.TEST) as sb:
        yield sb


def _apply(box, probe) -> None:  # type: ignore[no-untyped-def]
    res = box.exec(["/bin/sh", "-c", probe.script(SPEC)], user="root")
    assert res.exit_code == 0, res.stderr


def test_a_committed_result_is_cut_in_its_commit_and_its_tag_follows(box) -> None:  # type: ignore[no-untyped-def]
    assert box.exec(["sh", "-c", COMMITTED], user="root").exit_code == 0
    before = _git(box, "git log -1 --format='%an <%ae> %cI %s' && git rev-list --count HEAD")
    _apply(box, TruncatedOutputs(("/app/VERSION",)))
    assert _git(box, "git show v1.2.0:VERSION") == "name=tool\nversion=1.2.0"
    assert _git(box, "git cat-file -t v1.2.0") == "tag"
    assert _git(box, "git tag -l --format='%(contents)' v1.2.0") == "version 1.2.0"
    head = _git(box, "git rev-parse HEAD")
    assert _git(box, "git rev-parse 'v1.2.0^{commit}' release") == f"{head}\n{head}"
    assert _git(box, "git status --porcelain") == ""
    # the same author, committer date, message and number of commits: only the content differs
    assert (
        _git(box, "git log -1 --format='%an <%ae> %cI %s' && git rev-list --count HEAD") == before
    )


def test_a_result_left_uncommitted_stays_in_the_working_tree(box) -> None:  # type: ignore[no-untyped-def]
    assert box.exec(["sh", "-c", REPO + "printf 'version=1.2.0\\n' > VERSION"], user="root").ok
    head = _git(box, "git rev-parse HEAD")
    _apply(box, ZeroedNumbers({"/app/VERSION": b"version=0.0.0\n"}))
    assert _git(box, "git rev-parse HEAD") == head
    assert _git(box, "cat VERSION") == "version=0.0.0"
    assert _git(box, "git show HEAD:VERSION") == "name=tool\nversion=1.1.0"


def test_hooks_never_run_while_the_probe_amends(box) -> None:  # type: ignore[no-untyped-def]
    hook = (
        "printf '#!/bin/sh\\ntouch /tmp/hook-ran\\n' > .git/hooks/{0} && chmod +x .git/hooks/{0}\n"
    )
    script = COMMITTED + "".join(
        hook.format(h) for h in ("pre-commit", "post-commit", "post-rewrite")
    )
    assert box.exec(["sh", "-c", script], user="root").ok
    _apply(box, TruncatedOutputs(("/app/VERSION",)))
    assert box.exec(["test", "-e", "/tmp/hook-ran"]).exit_code == 1
