"""Fault on the real stack: a repository mined over two workers, one SIGKILLed mid-run.

Two `envfactory worker` processes with separate homes share what a deployment shares:
PostgreSQL (a throwaway cluster), the Temporal dev server and S3-compatible artifacts (the
local S3 server). `MineRepository` fans 20 commits out, one child workflow each; while
commits are in flight the first worker is SIGKILLed and then restarted. Every commit must
end exactly once with its own outcome (two fixes published, eighteen coverage commits
dropped for having no fail-to-pass test), each environment stored once with one gate
report, and both workers must have mined.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from real_stack import Worker, owned_containers, remove_containers, stack_env, wait_for

from envfactory.core.models import EnvStatus
from envfactory.store import Store
from envfactory.store.migrate import upgrade
from tests.pg_cluster import pg_cluster
from tests.repos.made_repos import many_commits_repo
from tests.s3_server import CREDENTIALS, new_bucket, s3_server
from workflows import client as wfclient
from workflows.types import PipelineConfig, RepoMineInput, RepoMineResult

pytestmark = [
    pytest.mark.faults,
    pytest.mark.temporal,
    pytest.mark.docker,
    pytest.mark.postgres,
    pytest.mark.slow,
]

FIXES, COVERAGE = 2, 18


@pytest.fixture
def shared() -> Iterator[dict[str, str]]:
    """What both workers share besides Temporal: the database and the artifact bucket."""
    with pg_cluster() as cluster, s3_server() as endpoint:
        upgrade(cluster.url)
        yield {
            "ENVFACTORY_DATABASE_URL": cluster.url,
            "ENVFACTORY_ARTIFACTS__BACKEND": "s3",
            "ENVFACTORY_ARTIFACTS__S3_BUCKET": new_bucket(endpoint),
            "ENVFACTORY_ARTIFACTS__S3_ENDPOINT_URL": endpoint,
            "ENVFACTORY_ARTIFACTS__S3_REGION": "us-east-1",
            "ENVFACTORY_ARTIFACTS__S3_ACCESS_KEY_ID": CREDENTIALS["s3_access_key_id"],
            "ENVFACTORY_ARTIFACTS__S3_SECRET_ACCESS_KEY": CREDENTIALS["s3_secret_access_key"],
            "ENVFACTORY_SANDBOX__JANITOR_PERIOD_S": "2",
        }


def test_mining_over_two_workers_one_killed_ends_every_commit_once(
    temporal_env, loop, tmp_path: Path, queues: tuple[str, str], shared: dict[str, str]
) -> None:
    repo = many_commits_repo(tmp_path / "calc", FIXES, COVERAGE)
    address = temporal_env.client.service_client.config.target_host
    envs = [stack_env(tmp_path / f"home-{n}", address, queues, **shared) for n in ("a", "b")]
    config = PipelineConfig(repeats=1, heartbeat_timeout_s=10, task_queue_agents=queues[0],
                            task_queue_sandbox=queues[1])  # fmt: skip
    inp = RepoMineInput(source=str(repo.path), revisions=(f"{repo.commits['root']}..main",),
                        suite="calc", parallel=4, config=config)  # fmt: skip
    client = docker.from_env()
    first = Worker(envs[0], tmp_path / "worker-a.log").wait_ready()
    second = Worker(envs[1], tmp_path / "worker-b.log").wait_ready()
    workers = [first, second]
    try:
        handle = loop.run(wfclient.astart_mining(temporal_env.client, inp))
        status = lambda: loop.run(wfclient.mining_status(temporal_env.client, handle.id))  # noqa: E731
        wait_for(lambda: len(status().ended) >= 4 and owned_containers(client, first.pid),
                 900, first.why)  # fmt: skip
        first.kill()  # mid-run: commits in flight, sandboxes running
        ended_at_kill = len(status().ended)
        killed_at = time.monotonic()
        workers.append(Worker(envs[0], tmp_path / "worker-a2.log").wait_ready())  # restarted
        result = RepoMineResult.model_validate(loop.run(handle.result(), 2400))
        took = time.monotonic() - killed_at
    finally:
        for w in workers:
            w.stop()
        remove_containers(client, [w.pid for w in workers])
    rows = {r.commit: r for r in result.candidates}
    by = {label: rows.get(sha) for label, sha in repo.commits.items() if label != "root"}
    assert len(result.candidates) == len(rows) == FIXES + COVERAGE  # each commit ends once
    assert all(r is not None for r in by.values())
    for label, row in by.items():
        assert row is not None
        if label.startswith("fix"):
            assert row.outcome == "published", (label, row)
        else:
            assert (row.outcome, row.reason_kind) == ("dropped", "no_fail_to_pass"), (label, row)
    with Store.open(shared["ENVFACTORY_DATABASE_URL"]) as store:
        envs_stored = store.environments.list(suite="calc")
        assert sorted(e.spec.id for e in envs_stored) == sorted(
            r.env_id for r in result.candidates if r.env_id
        )  # one environment per fix, none twice
        for e in envs_stored:
            assert e.status == EnvStatus.PUBLISHED
            assert len(store.gate_reports.list(e.spec.id)) == 1
    assert result.totals.published == FIXES and result.totals.scanned == FIXES + COVERAGE
    for n in ("a", "b"):  # both workers mined: each opened the clone from the bucket
        assert list((tmp_path / f"home-{n}" / "repos" / "clones").iterdir()), n
    assert owned_containers(client, first.pid) == []  # the janitor took the dead one's
    print(f"killed after {ended_at_kill} commits ended; the run ended {took:.0f} s later")
