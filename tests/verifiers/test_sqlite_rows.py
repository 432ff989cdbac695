"""SQLite outputs through the gate battery (real Docker): the probes built from the
oracle's database change its rows through SQLite, so the file stays a valid database.

The task: close the stale pending tickets of a helpdesk database. Four verifiers:
- one that only opens the database and runs its integrity check: every row probe must
  leave a database it accepts (before, `truncated-outputs` cut the file's bytes and every
  verifier gave 0 — nothing was tested);
- one that counts the changed tickets and checks each looks closed, never which:
  `other-records-changed@oracle` (the same number of *other* tickets closed) must catch it;
- one that checks the closed tickets' aggregates (count, total and largest hours):
  `permuted-cells@oracle` (the hours swapped between the two) must catch it;
- a sound one comparing every row with constants: every probe at 0, the vacuumed
  database (a correct alternative) at 1, nothing called a shortcut.
"""

from __future__ import annotations

import pytest

from envfactory.core.models import (
    BuildContext,
    CheckKind,
    EnvironmentSpec,
    Step,
    TaskVerdict,
)
from verifiers.probes.rewards import RewardFile

from .gate_tasks import context_tar, gate_shell

pytestmark = [pytest.mark.docker, pytest.mark.slow]

MAKE_DB = """import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE tickets (id INTEGER PRIMARY KEY, status TEXT NOT NULL CHECK (status IN ('open', 'pending', 'closed')), updated TEXT NOT NULL, closed_at TEXT, hours INTEGER)")
db.executemany("INSERT INTO tickets VALUES (?, ?, ?, NULL, ?)", [
    (1, "pending", "2024-04-01", 3), (2, "open", "2024-04-02", 1), (3, "pending", "2024-05-20", 2),
    (4, "pending", "2024-03-10", 5), (5, "closed", "2024-02-01", 4), (6, "pending", "2024-05-25", 7),
    (7, "pending", "2024-05-28", 2),
])
db.commit()
"""
DOCKERFILE = (
    "FROM python:3.12-slim\nCOPY make_db.py /tmp/make_db.py\n"
    "RUN mkdir -p /app && python3 /tmp/make_db.py /app/helpdesk.db && rm /tmp/make_db.py\n"
    "WORKDIR /app\n"
)
REFERENCE = """set -e
python3 - <<'PY'
import sqlite3
db = sqlite3.connect("/app/helpdesk.db")
with db:
    db.execute("UPDATE tickets SET status = 'closed', closed_at = '2024-06-03', hours = hours + 1 WHERE status = 'pending' AND updated < '2024-05-01'")
PY
"""
SPEC = EnvironmentSpec(
    id="env-helpdesk",
    name="helpdesk",
    instruction=(
        "In the SQLite database /app/helpdesk.db, close every pending ticket last updated "
        "before 2024-05-01: status closed, closed_at 2024-06-03, and one more hour logged "
        "(hours + 1). Change no other ticket."
    ),
    build=BuildContext(files=()),
    workdir="/app",
    workspace_paths=("/app",),
    reference_solution=(Step(title="close", script=REFERENCE),),
)

_PY = "#!/bin/sh\nexec /usr/local/bin/python3 -I - <<'PY'\nimport sqlite3, sys\n"
#: weak: any valid database passes
INTEGRITY = (
    _PY
    + """db = sqlite3.connect("file:/app/helpdesk.db?mode=ro", uri=True)
ok = db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
db.execute("SELECT count(*) FROM tickets").fetchone()
sys.exit(0 if ok else 1)
PY
"""
).encode()
#: weak: two tickets changed, each closed; which two is never asked
COUNTS = (
    _PY
    + """ORIGINAL = {1: "pending", 2: "open", 3: "pending", 4: "pending", 5: "closed", 6: "pending", 7: "pending"}
db = sqlite3.connect("file:/app/helpdesk.db?mode=ro", uri=True)
rows = {i: (s, c) for i, s, c in db.execute("SELECT id, status, closed_at FROM tickets")}
changed = [i for i in rows if rows[i][0] != ORIGINAL[i]]
sys.exit(0 if len(changed) == 2 and all(rows[i] == ("closed", "2024-06-03") for i in changed) else 1)
PY
"""
).encode()
#: weak: the closed tickets by their aggregates (how many, total and largest hours)
AGGREGATES = (
    _PY
    + """db = sqlite3.connect("file:/app/helpdesk.db?mode=ro", uri=True)
got = db.execute("SELECT count(*), sum(hours), max(hours) FROM tickets WHERE status = 'closed' AND closed_at IS NOT NULL").fetchone()
sys.exit(0 if got == (2, 10, 6) else 1)
PY
"""
).encode()
#: sound: every row against constants
SOUND = (
    _PY
    + """WANT = [(1, "closed", "2024-04-01", "2024-06-03", 4), (2, "open", "2024-04-02", None, 1),
    (3, "pending", "2024-05-20", None, 2), (4, "closed", "2024-03-10", "2024-06-03", 6),
    (5, "closed", "2024-02-01", None, 4), (6, "pending", "2024-05-25", None, 7), (7, "pending", "2024-05-28", None, 2)]
try:
    db = sqlite3.connect("file:/app/helpdesk.db?mode=ro", uri=True)
    got = db.execute("SELECT * FROM tickets ORDER BY id").fetchall()
except sqlite3.Error:
    sys.exit(1)
sys.exit(0 if got == WANT else 1)
PY
"""
).encode()


@pytest.fixture(scope="module")
def image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    return docker_engine.build(context_tar({"Dockerfile": DOCKERFILE, "make_db.py": MAKE_DB})).image


def _gate(engine, image, script: bytes):  # type: ignore[no-untyped-def]
    # the oracle-derived probes are what is tested here
    return gate_shell(engine, image, SPEC, script, probes=(RewardFile(),), omissions=False)


ROW_PROBES = {
    "probe:truncated-rows@oracle",
    "probe:perturbed-cells-zero@oracle",
    "probe:perturbed-cells-scaled@oracle",
    "probe:placeholder-cells@oracle",
    "probe:columns-reverted@oracle",
    "probe:permuted-cells@oracle",
    "probe:superset-rows@oracle",
    "probe:other-records-changed@oracle",
}


def _observed(report) -> dict[str, list[int]]:  # type: ignore[no-untyped-def]
    return {c.name: list(c.observed) for c in report.checks}


def test_every_row_probe_leaves_a_valid_database(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, INTEGRITY)
    observed = _observed(report)
    assert ROW_PROBES <= set(observed)
    assert {n: observed[n] for n in ROW_PROBES} == {n: [1] for n in ROW_PROBES}
    assert "probe:truncated-outputs@oracle" not in observed  # no byte edit of the database
    assert report.outcome == TaskVerdict.REJECTED


def test_a_verifier_that_counts_changed_rows_is_caught_by_other_records(
    docker_engine, image
) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, COUNTS)
    failing = {c.name for c in report.checks if c.kind == CheckKind.PROBE and not c.passed}
    assert "probe:other-records-changed@oracle" in failing
    assert "probe:truncated-rows@oracle" not in failing
    assert report.outcome == TaskVerdict.REJECTED


def test_a_verifier_of_aggregates_is_caught_by_permuted_cells(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, AGGREGATES)
    failing = {c.name for c in report.checks if c.kind == CheckKind.PROBE and not c.passed}
    assert "probe:permuted-cells@oracle" in failing
    assert "probe:perturbed-cells-zero@oracle" not in failing  # the total moved: caught there
    assert report.outcome == TaskVerdict.REJECTED


def test_a_sound_database_verifier_is_accepted(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, SOUND)
    observed = _observed(report)
    assert {n: observed[n] for n in ROW_PROBES} == {n: [0] for n in ROW_PROBES}
    assert observed["probe:sqlite-vacuumed@oracle"] == [1]
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    assert report.too_strict == ()
