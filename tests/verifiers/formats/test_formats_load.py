"""Loading Harbor and Terminal-Bench 1 task directories into spec + verifier."""

from __future__ import annotations

import pytest

from envfactory.core.errors import InvalidTask
from envfactory.core.models import CheckKind
from verifiers.formats import ONE_BLOCK_NOTE, load_task
from verifiers.formats.assemble import content_id

from .formats_helpers import EXAMPLES, TB_EXAMPLES, example_dirs


@pytest.mark.parametrize("path", example_dirs(), ids=lambda p: p.name)
def test_every_example_task_loads_as_harbor_with_a_workspace_and_verifier(path, artifacts):
    task = load_task(path, artifacts)
    assert task.format == "harbor" and task.spec.source == "harbor"
    assert task.spec.name == path.name
    assert task.spec.workdir == "/app" and "/app" in task.spec.workspace_paths
    assert task.verifier.entry == "bash /tests/test.sh"  # run as Harbor runs it
    assert task.verifier.mount_path == "/tests" and task.verifier.cwd == "/app"
    assert task.verifier.env_id == task.spec.id
    paths = {f.path for f in task.verifier.files}
    assert "test.sh" in paths
    assert "Dockerfile" in {f.path for f in task.spec.build.files}
    for entry in (*task.spec.build.files, *task.verifier.files):
        assert artifacts.get(entry.key)  # every file really is in the store


def test_the_example_set_has_four_sound_multi_step_tasks_and_seven_broken_ones(artifacts):
    tasks = [load_task(p, artifacts) for p in example_dirs()]
    sound = [t for t in tasks if not t.spec.name.startswith("broken-")]
    broken = [t for t in tasks if t.spec.name.startswith("broken-")]
    assert len(sound) >= 4 and all(len(t.spec.reference_solution) >= 2 for t in sound)
    assert all(t.expected_failure is None and t.spec.hidden_state_notes for t in sound)
    assert all(t.spec.partial_solutions for t in sound)
    assert {t.spec.name for t in broken} == {
        "broken-always-pass",
        "broken-accepts-noop",
        "broken-accepts-partial",
        "broken-forgeable-stdout",
        "broken-trusts-reward-file",
        "broken-python-from-path",
        "broken-pytest-conftest",
    }
    assert all(t.expected_failure and t.expected_failure_kind for t in broken)


def test_a_broken_example_names_the_gate_that_must_reject_it(artifacts):
    task = load_task(EXAMPLES / "broken-pytest-conftest", artifacts)
    assert task.expected_failure == "probe:conftest-pass"
    assert task.expected_failure_kind is CheckKind.PROBE


def test_wal_replay_reads_steps_partials_limits_and_scope_from_the_task(artifacts):
    task = load_task(EXAMPLES / "wal-replay", artifacts)
    spec = task.spec
    assert [s.title for s in spec.reference_solution] == [
        "apply the committed transactions recorded after the checkpoint",
        "move the checkpoint to the last applied record",
        "truncate the log",
    ]
    # the preamble (set -euo pipefail; cd /app) makes every step stand alone
    assert all(s.script.startswith("set -euo pipefail\ncd /app\n") for s in spec.reference_solution)
    assert [p.name for p in spec.partial_solutions] == ["include-torn", "replay-from-start"]
    assert spec.limits.memory_mb == 512 and spec.limits.exec_timeout_s == 120
    assert spec.limits.network is False
    assert task.verifier.timeout_s == 30 and spec.verify_scope == "workspace"
    assert "checkpoint_seq" in spec.success_criteria and task.prefix_states == 2
    modes = {f.path: f.mode for f in task.verifier.files}
    assert modes == {"test.sh": 0o755, "check_ledger.py": 0o644}
    assert ONE_BLOCK_NOTE not in task.notes


def test_a_one_block_solution_is_noted_as_having_no_prefix_states(artifacts):
    task = load_task(EXAMPLES / "broken-always-pass", artifacts)
    assert task.prefix_states == 0
    assert ONE_BLOCK_NOTE in task.notes


def test_loading_the_same_task_twice_gives_the_same_content_id(artifacts):
    first = load_task(EXAMPLES / "csv-report", artifacts)
    second = load_task(EXAMPLES / "csv-report", artifacts)
    other = load_task(EXAMPLES / "config-drift", artifacts)
    assert first.spec.id == second.spec.id != other.spec.id


def test_terminal_bench_example_maps_timeouts_entry_and_keeps_tests_out_of_the_image(artifacts):
    task = load_task(TB_EXAMPLES / "error-summary", artifacts)
    assert task.format == "terminal-bench" and task.spec.source == "terminal-bench"
    assert task.verifier.entry == "TEST_DIR=/tests bash /tests/run-tests.sh"
    assert {f.path for f in task.verifier.files} == {"run-tests.sh", "test_outputs.py"}
    build = {f.path for f in task.spec.build.files}
    assert build == {"Dockerfile", "logs/app.log", "logs/app.log.1"}
    assert task.spec.limits.exec_timeout_s == 180 and task.verifier.timeout_s == 30
    assert len(task.spec.reference_solution) == 2
    assert task.spec.hidden_state_notes.startswith("the rotated log")
    assert any("docker-compose.yaml ignored" in n for n in task.notes)


def test_terminal_bench_older_descriptions_form_gives_the_instruction(tb_task, artifacts):
    path = tb_task({"task.yaml": "descriptions:\n  - key: base\n    description: Do the thing.\n"})
    assert load_task(path, artifacts).spec.instruction == "Do the thing."


def test_harbor_env_tables_become_entry_prefixes_and_step_exports(harbor_task, artifacts):
    toml = (
        'version = "1.0"\n[verifier]\nenv = {MODE = "strict mode"}\n'
        '[solution]\nenv = {TARGET = "/app"}\n[environment]\nmemory = "1G"\n'
        "allow_internet = true\ncpus = 2\n[agent]\ntimeout_sec = 45.5\n"
    )
    task = load_task(harbor_task({"task.toml": toml}), artifacts)
    assert task.verifier.entry == "MODE='strict mode' bash /tests/test.sh"
    assert all(s.script.startswith("export TARGET=/app\n") for s in task.spec.reference_solution)
    limits = task.spec.limits
    assert (limits.memory_mb, limits.network, limits.cpus, limits.exec_timeout_s) == (
        1024,
        True,
        2.0,
        46,
    )


def test_harbor_defaults_follow_harbor_except_network_which_stays_off(harbor_task, artifacts):
    task = load_task(harbor_task({"task.toml": 'version = "1.0"\n'}), artifacts)
    assert task.verifier.timeout_s == 600 and task.spec.limits.memory_mb == 2048
    assert task.spec.limits.network is False


def test_envfactory_table_sets_scope_workspace_and_entry(harbor_task, artifacts):
    toml = (
        'version = "1.0"\n[envfactory]\nverify_scope = "full-state"\n'
        'workspace_paths = ["/app", "/srv/data/"]\nverifier_entry = "bash test.sh --strict"\n'
    )
    task = load_task(harbor_task({"task.toml": toml}), artifacts)
    assert task.spec.verify_scope == "full-state"
    assert task.spec.workspace_paths == ("/app", "/srv/data")
    assert task.verifier.entry == "bash test.sh --strict"


def test_verify_scope_may_also_sit_in_the_verifier_table(harbor_task, artifacts):
    toml = 'version = "1.0"\n[verifier]\nverify_scope = "full-state"\n'
    assert load_task(harbor_task({"task.toml": toml}), artifacts).spec.verify_scope == "full-state"


def test_workdir_is_the_final_stage_workdir_of_a_multi_stage_dockerfile(harbor_task, artifacts):
    dockerfile = (
        "FROM python:3.11-slim AS build\nWORKDIR /src\nRUN true\n"
        "FROM build\nWORKDIR sub\n# WORKDIR /ignored\nRUN echo \\\n  done\n"
    )
    task = load_task(harbor_task({"environment/Dockerfile": dockerfile}), artifacts)
    assert task.spec.workdir == "/src/sub" and task.spec.workspace_paths == ("/src/sub",)


def test_compose_files_and_cache_junk_stay_out_of_the_build_context(harbor_task, artifacts):
    path = harbor_task(
        {
            "environment/docker-compose.yaml": "services: {}\n",
            "environment/app/__pycache__/x.cpython-311.pyc": "junk",
            "environment/app/main.py": "print(1)\n",
        }
    )
    task = load_task(path, artifacts)
    assert {f.path for f in task.spec.build.files} == {"Dockerfile", "app/main.py"}
    assert any("docker-compose.yaml ignored" in n for n in task.notes)


def test_harbor_tests_go_to_slash_tests_and_a_reward_file_takes_harbors_contract(
    harbor_task, artifacts
):
    script = "#!/bin/bash\npytest /tests/test_outputs.py && echo 1 > /logs/verifier/reward.txt\n"
    task = load_task(harbor_task({"tests/test.sh": script}), artifacts)
    assert task.verifier.mount_path == "/tests"
    assert task.verifier.reward_dir == "/logs/verifier"
    plain = load_task(harbor_task({"tests/test.sh": "#!/bin/bash\nexit 0\n"}), artifacts)
    assert plain.verifier.reward_dir is None  # no reward file: the exit status decides


def test_a_compose_service_that_only_names_an_image_is_refused_naming_the_fix(
    harbor_task, artifacts
):
    compose = "services:\n  app:\n    build: .\n  db:\n    image: postgres:16\n"
    with pytest.raises(InvalidTask, match="service 'db': `image: postgres:16` with no `build`"):
        load_task(harbor_task({"environment/docker-compose.yaml": compose}), artifacts)


COMPOSE = """
services:
  main:
    build: .
    volumes: ["./logs:/logs"]
  db:
    build:
      context: ./db
      dockerfile: db.Dockerfile
    command: redis-server --save ""
    environment: [MODE=test]
    healthcheck:
      test: ["CMD", "redis-cli", "ping"]
    ports: ["6379:6379"]
"""


def test_a_compose_files_side_services_become_the_environments_services(harbor_task, artifacts):
    files = {
        "environment/docker-compose.yaml": COMPOSE,
        "environment/db/db.Dockerfile": "FROM debian:12\nRUN apt-get install -y redis-server\n",
        "environment/db/redis.conf": "port 6379\n",
    }
    task = load_task(harbor_task(files), artifacts)
    (db,) = task.spec.services
    assert db.name == "db" and db.build.dockerfile == "db.Dockerfile"
    assert {f.path for f in db.build.files} == {"db.Dockerfile", "redis.conf"}  # its own context
    assert db.command == ("sh", "-c", 'redis-server --save ""')
    assert db.env == {"MODE": "test"} and db.ready == "redis-cli ping"
    assert any("service 'db': ports left out" in n for n in task.notes)


def test_a_compose_build_context_outside_the_environment_is_refused(harbor_task, artifacts):
    compose = "services:\n  main:\n    build: .\n  db:\n    build: ../db\n"
    with pytest.raises(InvalidTask, match="build context '../db' is outside environment/"):
        load_task(harbor_task({"environment/docker-compose.yaml": compose}), artifacts)


@pytest.mark.parametrize(
    "test_py,scope,semantics",
    [
        ("assert open('/app/out.txt').read() == 'x'", "workspace", ("envfactory", "harbor")),
        ("assert open('/etc/myapp/app.conf').read()", "full-state", ("envfactory", "harbor")),
        ("import pwd\nassert pwd.getpwnam('svc')", "full-state", ("envfactory", "harbor")),
        # a service is only named: running the tests decides (verifiers.gates._harbor_only)
        (
            "import urllib.request as u\nu.urlopen('http://localhost:8080/')",
            "workspace",
            ("envfactory", "harbor"),
        ),
        ("assert cfg['listen'] == '127.0.0.1:9090'", "workspace", ("envfactory", "harbor")),
        # how a hardened verifier runs its checks is not system state it reads
        (
            "import os\nos.environ['PATH'] = '/usr/local/bin:/usr/bin:/bin'\n"
            "import subprocess\nsubprocess.run(['/usr/local/bin/python3', '/app/x.py'])",
            "workspace",
            ("envfactory", "harbor"),
        ),
        (
            "import shutil\nassert shutil.which('jq', path='/usr/local/bin')",
            "workspace",
            ("envfactory", "harbor"),
        ),  # fmt: skip
        # a program the solver is asked to install there is state
        (
            "assert open('/usr/local/bin/invoice-render').read()",
            "full-state",
            ("envfactory", "harbor"),
        ),  # fmt: skip
    ],
)
def test_the_scope_is_inferred_from_what_the_tests_touch(
    harbor_task, artifacts, test_py, scope, semantics
):
    task = load_task(harbor_task({"tests/test_outputs.py": test_py}), artifacts)
    assert task.spec.verify_scope == scope
    assert task.spec.semantics == semantics
    assert (scope == "workspace") == (not any("inferred" in n for n in task.notes))
    named = any("may query a running service" in n for n in task.notes)
    assert named == ("localhost" in test_py or "127.0.0.1" in test_py)


@pytest.mark.parametrize(
    "test_sh",
    [
        "#!/bin/sh\nexport PATH=/usr/local/bin:/usr/bin:/bin\ncd /app && sh run.sh\n",
        "#!/bin/sh\nenv -i PATH=/usr/local/sbin:/usr/local/bin:/usr/bin /usr/local/bin/perl t.pl\n",
        "#!/bin/sh\n/usr/local/bin/python3.11 -m pytest /tests/test_outputs.py\n",
    ],
)
def test_a_hardened_test_script_stays_in_workspace_scope(harbor_task, artifacts, test_sh):
    """Strangers' weak verifiers set PATH as hardened ones do: that is no system state, and
    full-state scope would have switched the probes built from the oracle's outputs off."""
    task = load_task(harbor_task({"tests/test.sh": test_sh}), artifacts)
    assert task.spec.verify_scope == "workspace"


def test_load_task_accepts_a_string_path(harbor_task, artifacts):
    assert load_task(str(harbor_task()), artifacts).spec.name == "mini"  # type: ignore[arg-type]


def test_ungraded_paths_are_read_absolute_and_left_out_of_the_content_id(harbor_task, artifacts):
    plain = load_task(harbor_task(), artifacts)
    toml = 'version = "1.0"\n[envfactory]\nungraded = ["/app/docs/versions.rst", "/app/x.pyi"]\n'
    task = load_task(harbor_task({"task.toml": toml}, name="ungraded"), artifacts)
    assert task.spec.ungraded_paths == ("/app/docs/versions.rst", "/app/x.pyi")
    assert task.spec.id != plain.spec.id
    bare = plain.spec.model_copy(update={"id": "env-pending"})
    assert content_id(bare) == plain.spec.id  # no ungraded paths: the id as before the field
    with pytest.raises(
        InvalidTask, match=r"\[envfactory\]\.ungraded: 'docs/x.rst' is not an absolute"
    ):
        bad = 'version = "1.0"\n[envfactory]\nungraded = ["docs/x.rst"]\n'
        load_task(harbor_task({"task.toml": bad}, name="relative"), artifacts)
