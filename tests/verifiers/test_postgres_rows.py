"""A PostgreSQL cluster as the task's result, through the gates (real Docker): the probe
built from the pristine and oracle clusters' rows changes them through the cluster's own
server, in the oracle state re-created from its recipe (full-state scope).

The task: migrate an orders table's text amounts to a cents column and drop the duplicate
imports. Two verifiers:
- one that checks the migration by aggregates (row count, distinct references, sum and
  max of the cents): `pg-permuted-cells@oracle` (the amounts rotated among the kept
  rows) and `pg-other-records-changed@oracle` (the duplicates kept instead of the
  originals) must catch it, and nothing else;
- a sound one comparing every row with constants: every probe at 0, the task accepted.
"""

from __future__ import annotations

import pytest

from envfactory.core.models import (
    BuildContext,
    CheckKind,
    EnvironmentSpec,
    Step,
    TaskVerdict,
    VerifyScope,
)
from verifiers.probes.rewards import RewardFile

from .gate_tasks import context_tar, gate_shell

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SEED = """CREATE TABLE orders (id integer PRIMARY KEY, ref text NOT NULL, amount_text text NOT NULL);
INSERT INTO orders VALUES (1, 'W-1', '1,234.50 EUR'), (2, 'W-2', '19.99 EUR'),
  (3, 'W-3', '250.00 EUR'), (4, 'W-2', '19.99 EUR'), (5, 'P-7', '0.50 EUR');
"""
DOCKERFILE = """FROM debian:12
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-15 \\
    && rm -rf /var/lib/apt/lists/*
COPY seed.sql /tmp/seed.sql
RUN echo "listen_addresses = ''" > /etc/postgresql/15/main/conf.d/socket-only.conf \\
    && pg_ctlcluster 15 main start && runuser -u postgres -- createdb shop \\
    && runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d shop -f /tmp/seed.sql \\
    && pg_ctlcluster 15 main stop && rm /tmp/seed.sql
WORKDIR /var/lib/postgresql
"""
REFERENCE = """set -e
pg_ctlcluster 15 main start
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d shop <<'SQL'
ALTER TABLE orders ADD COLUMN cents bigint;
UPDATE orders SET cents = (replace(split_part(amount_text, ' ', 1), ',', '')::numeric * 100)::bigint;
ALTER TABLE orders ALTER COLUMN cents SET NOT NULL;
ALTER TABLE orders DROP COLUMN amount_text;
DELETE FROM orders o USING orders k WHERE o.ref = k.ref AND o.id > k.id;
SQL
pg_ctlcluster 15 main stop
"""
SPEC = EnvironmentSpec(
    id="env-pg-orders",
    name="pg-orders",
    instruction=(
        "In the shop database of the PostgreSQL cluster 15/main, replace orders.amount_text "
        "with a bigint column cents (the amount in cents), and delete the duplicate orders "
        "(same ref), keeping the lowest id. Stop the cluster when done."
    ),
    build=BuildContext(files=()),
    workdir="/var/lib/postgresql",
    workspace_paths=("/var/lib/postgresql",),
    verify_scope=VerifyScope.FULL_STATE,
    reference_solution=(Step(title="migrate", script=REFERENCE),),
)


def _verifier(query: str, want: str) -> bytes:
    return f"""#!/bin/sh
pg_ctlcluster 15 main start || exit 1
got=$(runuser -u postgres -- psql -X -At -d shop -c "{query}")
pg_ctlcluster 15 main stop
[ "$got" = "{want}" ]
""".encode()


#: weak: the totals of the kept orders, never which order holds which amount
AGGREGATES = _verifier(
    "SELECT count(*), count(DISTINCT ref), sum(cents), max(cents) FROM orders",
    "4|4|150499|123450",
)
#: sound: every row
SOUND = _verifier(
    "SELECT string_agg(id || ':' || ref || ':' || cents, ',' ORDER BY id) FROM orders",
    "1:W-1:123450,2:W-2:1999,3:W-3:25000,5:P-7:50",
)


@pytest.fixture(scope="module")
def image(docker_engine) -> str:  # type: ignore[no-untyped-def]
    return docker_engine.build(context_tar({"Dockerfile": DOCKERFILE, "seed.sql": SEED})).image


def _gate(engine, image, script: bytes):  # type: ignore[no-untyped-def]
    # the probes built from the clusters' rows are what is tested here
    return gate_shell(engine, image, SPEC, script, probes=(RewardFile(),), omissions=False)


def _observed(report) -> dict[str, list[int]]:  # type: ignore[no-untyped-def]
    return {c.name: list(c.observed) for c in report.checks}


CLUSTER_PROBES = {
    "probe:pg-perturbed-cells-zero@oracle",
    "probe:pg-perturbed-cells-scaled@oracle",
    "probe:pg-permuted-cells@oracle",
    "probe:pg-other-records-changed@oracle",
}


def test_a_verifier_of_aggregates_is_caught_by_permuted_and_other_rows(
    docker_engine, image
) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, AGGREGATES)
    observed = _observed(report)
    assert observed["oracle"] == [1]
    assert CLUSTER_PROBES <= set(observed)
    failing = {c.name for c in report.checks if c.kind == CheckKind.PROBE and not c.passed}
    assert failing == {"probe:pg-permuted-cells@oracle", "probe:pg-other-records-changed@oracle"}
    assert report.outcome == TaskVerdict.REJECTED


def test_a_sound_cluster_verifier_is_accepted(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, SOUND)
    observed = _observed(report)
    assert {n: observed[n] for n in CLUSTER_PROBES} == {n: [0] for n in CLUSTER_PROBES}
    assert report.outcome == TaskVerdict.PASSED, report.reasons
