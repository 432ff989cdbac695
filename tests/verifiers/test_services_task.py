"""A Harbor task with a side service (examples/tasks-services/visit-counter: an app plus a
Redis server built from Debian's packages, declared in its docker-compose.yaml) gated end
to end on real Docker: every state and every verification gets a fresh cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from envfactory.core.models import CheckKind, TaskVerdict
from verifiers.validate import validate_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks-services" / "visit-counter"


def test_a_task_with_a_redis_service_passes_its_gates_on_fresh_services(docker_engine, artifacts):
    result = validate_task(docker_engine, TASK, artifacts, repeats=2, probes=())
    report = result.report
    # the verifier expects the counter to print 1 then 2: two repeats agreeing means each
    # verification had a cache of its own, started empty
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    kinds = {c.kind for c in report.checks}
    assert {CheckKind.ORACLE, CheckKind.NOOP, CheckKind.UNSOLVED} <= kinds
    assert {c.name for c in report.checks if c.kind == CheckKind.UNSOLVED} >= {"prefix-1"}
    (cache,) = result.task.spec.services
    assert cache.name == "cache" and cache.ready == "redis-cli ping"
    client = docker_engine.client
    left = [
        c.name for c in client.containers.list(all=True) if c.name.startswith("envfactory-svc-")
    ]
    mine = [
        n
        for n in left
        if client.api.inspect_container(n)["Config"]["Labels"].get("envfactory.run_id")
        == docker_engine.run_id
    ]
    assert mine == []  # every service went with its sandbox
