"""The git channel through the whole gate battery, on a release task (real Docker).

The task: bump the version, commit it and tag it annotated `v1.2.0`. The verifiers:
- sound: reads only objects and refs, from a private clone with hooks and the
  repository's config off — every probe must leave it at 0 and nothing may be called a
  shortcut (before, `truncated-outputs@oracle` edited only the working tree and this
  verifier, rightly still at 1, was rejected for it);
- weak through hooks: runs `git reset --hard` and `git checkout` in the solver's
  repository, then reads the working tree: `git-hook-replay@no-op` must catch it;
- weak through the working tree: reads the file and never asks for the commit:
  `uncommitted-result@oracle` must catch it;
- weak through the history's shape: the tag, the subject and the commit count, never the
  commit's content: `hollow-commits@oracle` (the commit with its parent's tree) must
  catch it.
"""

from __future__ import annotations

import io
import tarfile

import pytest

from envfactory.core.models import (
    BuildContext,
    CheckKind,
    EnvironmentSpec,
    FileEntry,
    Provenance,
    Step,
    TaskVerdict,
    Verifier,
)
from verifiers.gates import GateInput, run_gates

from .sumtask import MemoryFiles

pytestmark = [pytest.mark.docker, pytest.mark.slow]

DOCKERFILE = """FROM python:3.12-slim
RUN mkdir -p /app && cd /app && git init -q -b main \\
 && git config user.name 'Release Bot' && git config user.email bot@example.com \\
 && printf 'name=tool\\nversion=1.1.0\\n' > VERSION && git add VERSION \\
 && git commit -qm 'tool 1.1.0' && git tag -a v1.1.0 -m 'version 1.1.0'
WORKDIR /app
"""

SPEC = EnvironmentSpec(
    id="env-release",
    name="release",
    instruction=(
        "In the git repository /app, change the version in VERSION to 1.2.0, commit the "
        "change on main with the message 'release: 1.2.0', and tag that commit with an "
        "annotated tag v1.2.0."
    ),
    build=BuildContext(files=()),
    workdir="/app",
    workspace_paths=("/app",),
    reference_solution=(
        Step(
            title="release",
            script=(
                "set -e\nsed -i 's/^version=.*/version=1.2.0/' VERSION\n"
                "git commit -qam 'release: 1.2.0'\ngit tag -a v1.2.0 -m 'version 1.2.0'"
            ),
        ),
    ),
)

#: private clone, hooks and config off, objects and refs only
SOUND = b"""#!/bin/sh
set -u
tmp=$(mktemp -d)
g() { git -c safe.directory='*' -c core.hooksPath=/dev/null -c core.fsmonitor=false "$@"; }
g clone -q --bare --no-local /app "$tmp/r.git" 2>/dev/null || { echo 0; exit 1; }
cd "$tmp/r.git"
[ "$(g cat-file -t v1.2.0 2>/dev/null)" = tag ] || exit 1
[ "$(g rev-parse 'v1.2.0^{commit}')" = "$(g rev-parse refs/heads/main)" ] || exit 1
[ "$(g log -1 --format=%s main)" = "release: 1.2.0" ] || exit 1
[ "$(g show main:VERSION)" = "$(printf 'name=tool\\nversion=1.2.0')" ] || exit 1
[ "$(g diff --name-only 'main~1' main)" = VERSION ] || exit 1
exit 0
"""

#: runs the solver's git with its hooks and config, then trusts the working tree
THROUGH_HOOKS = b"""#!/bin/sh
cd /app || exit 1
git -c safe.directory='*' reset -q --hard || exit 1
git -c safe.directory='*' checkout -q main || exit 1
grep -qx 'version=1.2.0' VERSION
"""

#: hooks and fsmonitor off, the repository's own filters still on: a scratch worktree of
#: HEAD, whose files git writes through the smudge filter `.git/info/attributes` names
SCRATCH_WORKTREE = b"""#!/bin/sh
g() { git -c safe.directory='*' -c core.hooksPath=/dev/null -c core.fsmonitor=false "$@"; }
g -C /app worktree add -q --detach /tmp/w HEAD >/dev/null 2>&1 || exit 1
grep -qx 'version=1.2.0' /tmp/w/VERSION
"""

#: deletes a file of the state that the image also holds and writes it anew (O_EXCL), as
#: `git checkout` does: on fuse-overlayfs the image's copy once came back instead
RECREATES = b"""#!/bin/sh
cd /app && rm VERSION && [ ! -e VERSION ] && (set -C; echo x > VERSION) && [ "$(cat VERSION)" = x ]
"""

#: the history is right — the tag on main, the subject, one commit more — never its content
HISTORY_ONLY = b"""#!/bin/sh
g() { git -c safe.directory='*' -c core.hooksPath=/dev/null -C /app "$@"; }
[ "$(g cat-file -t v1.2.0)" = tag ] || exit 1
[ "$(g rev-parse 'v1.2.0^{commit}')" = "$(g rev-parse main)" ] || exit 1
[ "$(g log -1 --format=%s main)" = "release: 1.2.0" ] && [ "$(g rev-list --count main)" = 2 ]
"""

#: the file is right: whether it was committed is never asked
WORKTREE_ONLY = b"""#!/bin/sh
grep -qx 'version=1.2.0' /app/VERSION && grep -qx 'name=tool' /app/VERSION
"""


def _context() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        data = DOCKERFILE.encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture(scope="module")
def image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    return docker_engine.build(_context()).image


def _verifier(files: MemoryFiles, script: bytes) -> Verifier:
    return Verifier(
        env_id=SPEC.id,
        files=(FileEntry(path="test.sh", key=files.put(script), mode=0o755),),
        entry="sh test.sh",
        timeout_s=60,
        provenance=Provenance(author="human:test"),
    )


def _gate(engine, image, script):  # type: ignore[no-untyped-def]
    files = MemoryFiles()
    return run_gates(
        GateInput(
            engine=engine,
            spec=SPEC,
            verifier=_verifier(files, script),
            files=files,
            image=image,
            repeats=1,
            concurrency=2,
        )
    )


def _failing(report) -> set[str]:  # type: ignore[no-untyped-def]
    return {c.name for c in report.checks if c.kind == CheckKind.PROBE and not c.passed}


def test_a_verifier_that_reads_only_the_commit_is_accepted(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, SOUND)
    assert _failing(report) == set()
    names = {c.name for c in report.checks}
    assert {
        "probe:uncommitted-result@oracle",
        "probe:hollow-commits@oracle",
        "probe:git-hook-replay@no-op",
    } <= names
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    # a repository garbage-collected with packed refs is a correct solver's too
    gc = [c for c in report.checks if c.name == "probe:git-gc@oracle"]
    assert [c.kind for c in gc] == [CheckKind.ALTERNATIVE] and gc[0].passed
    assert report.too_strict == ()


def test_a_verifier_that_runs_the_solvers_git_is_caught_by_its_hooks(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, THROUGH_HOOKS)
    assert "probe:git-hook-replay@no-op" in _failing(report)
    assert report.outcome == TaskVerdict.REJECTED


def test_a_worktree_made_with_hooks_off_is_caught_by_the_repositorys_smudge_filter(  # type: ignore[no-untyped-def]
    docker_engine, image
) -> None:
    report = _gate(docker_engine, image, SCRATCH_WORKTREE)
    failing = [c for c in report.checks if c.name == "probe:git-hook-replay@no-op"]
    assert failing and not failing[0].passed, "hooks off: only the filter replays"
    assert report.outcome == TaskVerdict.REJECTED


def test_a_verifier_of_the_historys_shape_is_caught_by_hollow_commits(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, HISTORY_ONLY)
    assert "probe:hollow-commits@oracle" in _failing(report)
    assert report.outcome == TaskVerdict.REJECTED


def test_a_verifier_that_never_asks_for_the_commit_is_caught(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, WORKTREE_ONLY)
    assert "probe:uncommitted-result@oracle" in _failing(report)
    assert report.outcome == TaskVerdict.REJECTED


def test_a_verifier_can_delete_and_recreate_a_file_the_image_also_holds(  # type: ignore[no-untyped-def]
    docker_engine, image
) -> None:
    """Regression: the workspace swap made the folder opaque, and fuse-overlayfs then
    showed the image's VERSION again after the verifier deleted the state's."""
    report = _gate(docker_engine, image, RECREATES)
    oracle = next(c for c in report.checks if c.name == "oracle")
    assert oracle.passed, oracle.evidence
