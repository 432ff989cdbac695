"""The reference's in-place changes to a table file made to other records
(`probes.other_records`): on literal files, then through the gates (real Docker) with a
verifier that counts the paid invoices (caught) and one that checks each (accepted)."""

from __future__ import annotations

import json

import pytest

from envfactory.core.models import BuildContext, CheckKind, EnvironmentSpec, Step, TaskVerdict
from verifiers.probes.other_records import other_records_probes
from verifiers.probes.rewards import RewardFile

from .gate_tasks import context_tar, gate_shell, workspace_of

LEDGER = (
    "invoice,customer,status,paid_on\n"
    "INV-1,Acme,open,\n"
    'INV-2,"Birch, Co",open,\n'
    "INV-3,Acme,void,\n"
    "INV-4,Nordlys,open,\n"
    "INV-5,Acme,open,\n"
)
PAID = LEDGER.replace('INV-2,"Birch, Co",open,', 'INV-2,"Birch, Co",paid,2024-06-03').replace(
    "INV-4,Nordlys,open,", "INV-4,Nordlys,paid,2024-06-04"
)


def _probe_files(before: dict[str, bytes], after: dict[str, bytes]) -> dict[str, bytes]:
    (probe,) = other_records_probes(workspace_of(after, "/app"), workspace_of(before, "/app"))
    return probe.files


def test_csv_changes_go_to_the_open_look_alikes_and_other_lines_keep_their_bytes() -> None:
    files = _probe_files({"ledger.csv": LEDGER.encode()}, {"ledger.csv": PAID.encode()})
    assert files["/app/ledger.csv"].decode() == (
        "invoice,customer,status,paid_on\n"
        "INV-1,Acme,paid,2024-06-03\n"
        'INV-2,"Birch, Co",open,\n'  # back as it was, quoting kept
        "INV-3,Acme,void,\n"  # not a look-alike: it was void, not open
        "INV-4,Nordlys,open,\n"
        "INV-5,Acme,paid,2024-06-04\n"
    )


def test_json_array_objects_keep_their_ids() -> None:
    items = [{"sku": f"S{i}", "id": i, "stock": i, "reorder": False} for i in range(1, 5)]
    done = [{**o, "reorder": True} if o["id"] in (1, 3) else o for o in items]
    reshaped = other_records_probes(
        workspace_of({"stock.json": json.dumps({"items": done}).encode()}, "/app"),
        workspace_of({"stock.json": json.dumps(items, indent=2).encode()}, "/app"),
    )
    assert reshaped == ()  # a list, then an object: records not paired
    files = _probe_files(
        {"stock.json": json.dumps({"items": items}).encode()},
        {"stock.json": json.dumps({"items": done}).encode()},
    )
    got = json.loads(files["/app/stock.json"])["items"]
    assert [o["reorder"] for o in got] == [False, True, False, True]
    assert [o["id"] for o in got] == [1, 2, 3, 4]


def test_no_probe_where_records_were_added_or_identities_changed() -> None:
    added = LEDGER + "INV-6,Acme,paid,2024-06-05\n"
    assert (
        other_records_probes(
            workspace_of({"l.csv": added.encode()}, "/app"),
            workspace_of({"l.csv": LEDGER.encode()}, "/app"),
        )
        == ()
    )
    renamed = LEDGER.replace("INV-1,", "INV-9,")
    assert (
        other_records_probes(
            workspace_of({"l.csv": renamed.encode()}, "/app"),
            workspace_of({"l.csv": LEDGER.encode()}, "/app"),
        )
        == ()
    )


DOCKERFILE = "FROM python:3.12-slim\nCOPY ledger.csv /app/ledger.csv\nWORKDIR /app\n"
REFERENCE = f"cat > /app/ledger.csv <<'CSV'\n{PAID}CSV\n"
SPEC = EnvironmentSpec(
    id="env-ledger",
    name="ledger",
    instruction=(
        "The bank statement says INV-2 was paid on 2024-06-03 and INV-4 on 2024-06-04: "
        "mark them paid in /app/ledger.csv with their dates. Change no other invoice."
    ),
    build=BuildContext(files=()),
    workdir="/app",
    workspace_paths=("/app",),
    reference_solution=(Step(title="pay", script=REFERENCE),),
)
_PY = "#!/bin/sh\nexec /usr/local/bin/python3 -I - <<'PY'\nimport csv, sys\n"
#: weak: two invoices paid, each with a date; which two is never asked
COUNTS = (
    _PY
    + """rows = list(csv.DictReader(open("/app/ledger.csv")))
paid = [r for r in rows if r["status"] == "paid"]
sys.exit(0 if len(rows) == 5 and len(paid) == 2 and all(r["paid_on"] for r in paid) else 1)
PY
"""
).encode()
#: sound: every invoice
SOUND = (
    _PY
    + """want = {"INV-1": ("open", ""), "INV-2": ("paid", "2024-06-03"), "INV-3": ("void", ""),
        "INV-4": ("paid", "2024-06-04"), "INV-5": ("open", "")}
rows = {r["invoice"]: (r["status"], r["paid_on"]) for r in csv.DictReader(open("/app/ledger.csv"))}
sys.exit(0 if rows == want else 1)
PY
"""
).encode()


@pytest.fixture(scope="module")
def image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    return docker_engine.build(context_tar({"Dockerfile": DOCKERFILE, "ledger.csv": LEDGER})).image


def _gate(engine, image, script: bytes):  # type: ignore[no-untyped-def]
    return gate_shell(engine, image, SPEC, script, probes=(RewardFile(),), omissions=False)


@pytest.mark.docker
@pytest.mark.slow
def test_a_verifier_counting_the_paid_invoices_is_caught(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, COUNTS)
    failing = {c.name for c in report.checks if c.kind == CheckKind.PROBE and not c.passed}
    assert "probe:other-records-in-file@oracle" in failing
    assert report.outcome == TaskVerdict.REJECTED


@pytest.mark.docker
@pytest.mark.slow
def test_a_verifier_of_every_invoice_is_accepted(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, SOUND)
    observed = {c.name: list(c.observed) for c in report.checks}
    assert observed["probe:other-records-in-file@oracle"] == [0]
    assert report.outcome == TaskVerdict.PASSED, report.reasons
