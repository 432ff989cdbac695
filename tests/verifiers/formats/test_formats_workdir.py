"""The workdir of an imported task: what its files name wins, the built image decides the
rest (`settle_workdir`, after the build; the Docker test is in test_image_workdir_docker)."""

from __future__ import annotations

import pytest

from envfactory.core.errors import InvalidTask
from verifiers.formats import load_task, settle_workdir

from .formats_helpers import HARBOR_MIN


def test_a_dockerfile_without_workdir_imports_and_leaves_the_workdir_to_the_image(
    harbor_task, artifacts
):
    task = load_task(harbor_task({"environment/Dockerfile": "FROM suite-base:1\n"}), artifacts)
    assert task.spec.image_decides == ("workdir", "workspace_paths")
    settled, verifier = settle_workdir(task.spec, task.verifier, "/app")
    assert (settled.workdir, settled.workspace_paths, verifier.cwd) == ("/app", ("/app",), "/app")
    assert settled.id == task.spec.id  # the content id is the import's


@pytest.mark.parametrize(
    "dockerfile",
    ["FROM base\nWORKDIR $APP_HOME\n", "FROM base\nWORKDIR sub\n", "FROM base\nRUN true\n"],
)
def test_a_workdir_only_the_image_knows_is_settled_by_the_image(harbor_task, artifacts, dockerfile):
    task = load_task(harbor_task({"environment/Dockerfile": dockerfile}), artifacts)
    settled, _ = settle_workdir(task.spec, task.verifier, "/srv/app/sub")
    assert settled.workspace_paths == ("/srv/app/sub",)


def test_an_explicit_workdir_in_task_toml_wins_over_the_image(harbor_task, artifacts):
    toml = HARBOR_MIN["task.toml"] + '\n[envfactory]\nworkdir = "/work"\n'
    task = load_task(harbor_task({"task.toml": toml}), artifacts)
    assert task.spec.image_decides == ("workspace_paths",)
    settled, verifier = settle_workdir(task.spec, task.verifier, "/app")
    assert (settled.workdir, settled.workspace_paths, verifier.cwd) == (
        "/work",
        ("/work",),
        "/work",
    )


def test_explicit_workspace_paths_stay_while_the_image_gives_the_workdir(harbor_task, artifacts):
    toml = HARBOR_MIN["task.toml"] + '\n[envfactory]\nworkspace_paths = ["/data"]\n'
    task = load_task(harbor_task({"task.toml": toml}), artifacts)
    settled, _ = settle_workdir(task.spec, task.verifier, "/app")
    assert (settled.workdir, settled.workspace_paths) == ("/app", ("/data",))


def test_an_image_that_works_in_root_is_refused_after_the_build(harbor_task, artifacts):
    task = load_task(harbor_task({"environment/Dockerfile": "FROM base\n"}), artifacts)
    with pytest.raises(InvalidTask, match="would be '/'") as err:
        settle_workdir(task.spec, task.verifier, "")
    assert "WORKDIR" in (err.value.hint or "")


def test_settling_a_settled_task_again_changes_nothing(harbor_task, artifacts):
    task = load_task(harbor_task({}), artifacts)
    once = settle_workdir(task.spec, task.verifier, "/app")
    assert settle_workdir(*once, "/app") == once and once[1] is task.verifier


def test_a_heredoc_body_is_not_read_as_the_dockerfiles_workdir(harbor_task, artifacts):
    dockerfile = "FROM base\nWORKDIR /app\nRUN cat > /notes <<'EOF'\nWORKDIR /wrong\nEOF\n"
    task = load_task(harbor_task({"environment/Dockerfile": dockerfile}), artifacts)
    assert task.spec.workdir == "/app"
