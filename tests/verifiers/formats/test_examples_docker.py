"""Every example task builds on the local engine, its oracle solution runs step by step
with exit 0, and its own verifier accepts the oracle state (sound tasks also reject the
untouched environment). Uses the real Docker engine through `sandboxes.DockerEngine`.

This is a smoke test of the Terminal-Bench examples (examples/tasks-tb), not the gates.
The envfactory examples (examples/tasks) are not built here again: `tests/verifiers/
test_examples.py` runs `envfactory validate` on each, which builds it, runs its oracle
and its no-op through the runner and pins the same facts (oracle 1, and no-op 0 for the
sound ones) before the whole gauntlet.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from envfactory.core.models import BuildContext, Purpose
from verifiers.formats import ImportedTask, context_tar, load_task

from .formats_helpers import TB_EXAMPLES

pytestmark = [pytest.mark.docker, pytest.mark.slow]

FIXED_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
VERIFIER_DIR = "/run/envfactory-verifier-examples"
TASKS = sorted(p for p in TB_EXAMPLES.iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def engine(docker_engine):  # type: ignore[no-untyped-def]
    """The session's labelled DockerEngine (tests/conftest.py); it cleans up at the end."""
    return docker_engine


def run_verifier(sandbox, task: ImportedTask, artifacts) -> tuple[int | None, str]:  # type: ignore[no-untyped-def]
    """Copy the verifier in now (at its mount path), run its entry as the runner does."""
    tar = context_tar(BuildContext(files=task.verifier.files), artifacts.get)
    vdir = task.verifier.mount_path or VERIFIER_DIR
    sandbox.exec(f"mkdir -p {vdir}", user="root")
    sandbox.put_archive(vdir, tar)
    cmd = (
        f"cd {task.verifier.cwd or vdir} && env -i PATH={FIXED_PATH} HOME=/root "
        f"/bin/sh -c {shlex.quote(task.verifier.entry)}"
    )
    result = sandbox.exec(cmd, timeout=task.verifier.timeout_s)
    return result.exit_code, result.stdout + result.stderr


@pytest.mark.parametrize("path", TASKS, ids=lambda p: p.name)
def test_example_builds_and_its_oracle_passes_its_own_verifier(engine, artifacts, path: Path):
    task = load_task(path, artifacts)
    spec = task.spec
    image = engine.build(context_tar(spec.build, artifacts.get)).image
    with engine.sandbox(image, limits=spec.limits, purpose=Purpose.TEST) as sb:
        for number, step in enumerate(spec.reference_solution, start=1):
            result = sb.exec(step.script, workdir=spec.workdir, timeout=spec.limits.exec_timeout_s)
            assert result.exit_code == 0, f"step {number} ({step.title}): {result.stderr[-2000:]}"
        code, output = run_verifier(sb, task, artifacts)
        assert code == 0, f"verifier rejected the oracle state: {output[-2000:]}"
    if task.expected_failure is None:  # sound tasks must also reject the untouched state
        with engine.sandbox(image, limits=spec.limits, purpose=Purpose.TEST) as sb:
            code, output = run_verifier(sb, task, artifacts)
            assert code != 0, f"verifier accepted the untouched environment: {output[-2000:]}"
