"""Imported limits are clamped to the operator's ceilings, with a warning naming the field
and both values; values that are no number are refused at import."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.core.errors import InvalidTask
from envfactory.core.models import LimitCaps
from verifiers.formats import load_task

GREEDY = """version = "1.0"
[environment]
cpus = 4096
memory_mb = 99999999
storage_mb = 90000000
[agent]
timeout_sec = 1e12
[verifier]
timeout_sec = 1e12
"""


def test_a_task_asking_for_more_than_the_ceilings_gets_the_ceilings_and_a_warning_each(
    harbor_task, artifacts
):
    caps = LimitCaps(cpus=2, memory_mb=2048, disk_mb=4096, exec_timeout_s=600)
    task = load_task(harbor_task({"task.toml": GREEDY}), artifacts, caps)
    limits = task.spec.limits
    assert (limits.cpus, limits.memory_mb, limits.disk_mb) == (2, 2048, 4096)
    assert limits.exec_timeout_s == 600 and task.verifier.timeout_s == caps.verifier_timeout_s
    warnings = [n for n in task.notes if "clamped" in n]
    assert len(warnings) == 5
    assert (
        "task.toml: memory_mb = 99999999 is above the operator's ceiling; clamped to 2048 "
        "(ENVFACTORY_SANDBOX__TASK_CAPS__MEMORY_MB allows more)"
    ) in warnings
    assert any("the verifier's timeout_s = 1000000000000" in w for w in warnings)


def test_a_task_within_the_ceilings_is_unchanged_and_warns_of_nothing(harbor_task, artifacts):
    path = harbor_task({"task.toml": 'version = "1.0"\n[environment]\nmemory_mb = 4096\n'})
    task = load_task(path, artifacts, LimitCaps())
    assert task.spec.limits.memory_mb == 4096
    assert not [n for n in task.notes if "clamped" in n]


def test_the_default_ceilings_apply_when_the_caller_names_none(harbor_task, artifacts):
    task = load_task(harbor_task({"task.toml": GREEDY}), artifacts)
    assert task.spec.limits.memory_mb == LimitCaps().memory_mb
    assert task.spec.limits.cpus == LimitCaps().cpus


@pytest.mark.parametrize(
    "toml,field",
    [
        ("[verifier]\ntimeout_sec = inf\n", "[verifier].timeout_sec"),
        ("[verifier]\ntimeout_sec = nan\n", "[verifier].timeout_sec"),
        ("[agent]\ntimeout_sec = -5\n", "[agent].timeout_sec"),
        ("[environment]\ncpus = inf\n", "[environment].cpus"),
        ("[environment]\nmemory_mb = -1\n", "[environment].memory_mb"),
    ],
)
def test_a_limit_that_is_no_number_is_refused_naming_the_field(harbor_task, artifacts, toml, field):
    with pytest.raises(InvalidTask, match=field.replace("[", r"\[").replace("]", r"\]")):
        load_task(harbor_task({"task.toml": 'version = "1.0"\n' + toml}), artifacts)


@pytest.mark.parametrize("key", ["max_agent_timeout_sec", "max_test_timeout_sec"])
def test_a_terminal_bench_timeout_that_is_infinite_is_refused(tb_task, artifacts, key):
    with pytest.raises(InvalidTask, match=key):
        load_task(tb_task({"task.yaml": f"instruction: x\n{key}: .inf\n"}), artifacts)


def test_task_import_prints_each_clamped_limit_as_a_warning(harbor_task, tmp_path):
    path = harbor_task({"task.toml": GREEDY})
    env = {
        "ENVFACTORY_HOME": str(tmp_path / "home"),
        "ENVFACTORY_DATABASE_URL": None,
        "ENVFACTORY_SANDBOX__TASK_CAPS__MEMORY_MB": "3000",
        "COLUMNS": "250",
    }
    runner = CliRunner()
    res = runner.invoke(app, ["task", "import", str(path)], env=env)
    assert res.exit_code == 0, res.output
    assert "warning" in res.stdout and "memory_mb = 99999999" in res.stdout
    as_json = runner.invoke(app, ["task", "import", str(path), "--json"], env=env)
    (entry,) = json.loads(as_json.stdout)["imported"]
    assert any("clamped to 3000" in w for w in entry["warnings"])
