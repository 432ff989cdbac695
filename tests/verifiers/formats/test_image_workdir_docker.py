"""Issue 45: a suite whose Dockerfiles set no WORKDIR of their own, since their base image
sets `/app`, validates with the workspace `/app` (real engine, a locally built base)."""

from __future__ import annotations

import io
import tarfile
import uuid

import pytest

from envfactory.core.models import TaskVerdict
from envfactory.core.settings import Settings
from envfactory.suites.intake import import_one
from sandboxes import DockerEngine
from verifiers.validate import validate_task
from workflows import types as t
from workflows.models_source import ModelSource
from workflows.store_services import build_services

from .formats_helpers import write_tree

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def context(dockerfile: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile.encode())
        tar.addfile(info, io.BytesIO(dockerfile.encode()))
    return buf.getvalue()


def task_files(base: str) -> dict[str, str]:
    return {
        "instruction.md": "Write the lines of input.txt, sorted, to sorted.txt.\n",
        "task.toml": 'version = "1.0"\n\n[verifier]\ntimeout_sec = 30.0\n',
        # no WORKDIR: the base image's /app is where it works, relative paths and all
        "environment/Dockerfile": f"FROM {base}\nRUN printf 'b\\na\\nc\\n' > input.txt\n",
        "solution/solve.sh": "#!/bin/bash\nsort input.txt > sorted.txt\n",
        # relative paths: the tests run from the workdir, as under Harbor
        "tests/test.sh": '#!/bin/bash\n[ "$(cat sorted.txt)" = "$(printf \'a\\nb\\nc\')" ]\n',
    }


@pytest.fixture
def suite_base(docker_engine, base_image):  # type: ignore[no-untyped-def]
    """A suite's own base image, built here: it sets WORKDIR /app."""
    tag = f"envfactory-test/suite-base:{uuid.uuid4().hex[:12]}"
    base = docker_engine.build(context(f"FROM {base_image}\nWORKDIR /app\n"), tag=tag)
    yield tag
    docker_engine.remove_image(base.tag)


@pytest.fixture
def suite_engine(docker_engine, suite_base):  # type: ignore[no-untyped-def]
    """The engine with the suite's base in the operator's `from_map`: an imported (untrusted)
    Dockerfile starts only from a base image envfactory or its operator names."""
    settings = docker_engine.settings.model_copy(update={"from_map": {suite_base: suite_base}})
    return DockerEngine(settings, client=docker_engine.client, run_id=docker_engine.run_id)


def test_a_task_without_workdir_on_a_base_that_sets_app_validates_with_workspace_app(
    suite_engine, suite_base, artifacts, tmp_path
):
    path = write_tree(tmp_path / "sorted-lines", task_files(suite_base))
    result = validate_task(suite_engine, path, artifacts, repeats=1, probes=())
    spec, verifier = result.task.spec, result.task.verifier
    assert (spec.workdir, spec.workspace_paths, verifier.cwd) == ("/app", ("/app",), "/app")
    assert result.report.outcome == TaskVerdict.PASSED, result.report.reasons


def test_the_durable_build_stores_the_workdir_its_image_gives_with_the_verifier_following(
    suite_engine, suite_base, tmp_path
):
    settings = Settings(home=tmp_path / "home", database_url=None)
    services = build_services(settings, suite_engine, ModelSource(settings.agents))
    try:
        path = write_tree(tmp_path / "sorted-lines", task_files(suite_base))
        entry = import_one(path, services.store, services.artifacts, suite="suite")
        services.build(t.EnvInput(env_id=entry.env_id))
        services.build(t.EnvInput(env_id=entry.env_id))  # a retried activity: no change
        spec = services.store.environments.get(entry.env_id)
        assert (spec.workdir, spec.workspace_paths) == ("/app", ("/app",)) and spec.image
        assert services.store.verifiers.versions(entry.env_id) == [1, 2]
        assert services.store.verifiers.get(entry.env_id).cwd == "/app"
    finally:
        services.store.close()
