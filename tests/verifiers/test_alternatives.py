"""Correct alternatives through the gate battery (real Docker): a verifier that rejects
a correct solver's other final state is *too strict* — a warning, not a rejection.

The task writes a JSON summary, the same summary as YAML and a CSV. A verifier comparing
exact bytes is sound against every shortcut but rejects the same data re-serialised,
quoted or without its final newline; one that parses what it reads accepts them all.
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

from .gate_tasks import context_tar, gate_shell

pytestmark = [pytest.mark.docker, pytest.mark.slow]

DOCKERFILE = "FROM python:3.12-slim\nWORKDIR /app\nCOPY sales.csv /app/sales.csv\n"
SALES = "region,amount\nnorth,10\nsouth,5\nnorth,7\n"
REFERENCE = """set -e
mkdir -p out
python3 - <<'PY'
import csv, json
rows = list(csv.DictReader(open("sales.csv")))
totals = {}
for r in rows:
    totals[r["region"]] = totals.get(r["region"], 0) + int(r["amount"])
json.dump({"total": sum(totals.values()), "regions": totals}, open("out/summary.json", "w"))
with open("out/summary.yaml", "w") as f:
    f.write(f"total: {sum(totals.values())}\\nregions:\\n" + "".join(f"  {k}: {v}\\n" for k, v in sorted(totals.items())))
with open("out/totals.csv", "w") as f:
    f.write("region,total\\n" + "".join(f"{k},{v}\\n" for k, v in sorted(totals.items())))
PY
"""
SPEC = EnvironmentSpec(
    id="env-sales-summary",
    name="sales summary",
    instruction=(
        "From /app/sales.csv, write /app/out/summary.json with the grand total and the "
        "total per region, the same summary as YAML in /app/out/summary.yaml, and /app/out/totals.csv with a header region,total and one row "
        "per region in alphabetical order."
    ),
    build=BuildContext(files=()),
    workdir="/app",
    workspace_paths=("/app",),
    reference_solution=(Step(title="summary", script=REFERENCE),),
)

#: exact bytes: sound against every shortcut, and too strict
EXACT = b"""#!/bin/sh
[ "$(cat /app/out/summary.json)" = '{"total": 22, "regions": {"north": 17, "south": 5}}' ] || exit 1
printf 'total: 22\\nregions:\\n  north: 17\\n  south: 5\\n' | cmp -s - /app/out/summary.yaml || exit 1
printf 'region,total\\nnorth,17\\nsouth,5\\n' | cmp -s - /app/out/totals.csv
"""

#: reads what the files mean
PARSED = b"""#!/bin/sh
exec /usr/bin/env python3 -I - <<'PY'
import csv, json, sys
s = json.load(open("/app/out/summary.json"))
ok = s == {"total": 22, "regions": {"north": 17, "south": 5}}
# the YAML is two levels of "key: value"; nesting by indentation, as YAML's block style
y, inner = {}, None
for line in open("/app/out/summary.yaml").read().splitlines():
    key, _, value = line.strip().partition(":")
    if line[:1].isspace() and inner is not None:
        inner[key] = int(value)
    elif value.strip():
        y[key], inner = int(value), None
    else:
        y[key] = inner = {}
ok = ok and y == {"total": 22, "regions": {"north": 17, "south": 5}}
rows = list(csv.reader(open("/app/out/totals.csv")))
ok = ok and rows == [["region", "total"], ["north", "17"], ["south", "5"]]
sys.exit(0 if ok else 1)
PY
"""


@pytest.fixture(scope="module")
def image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    return docker_engine.build(context_tar({"Dockerfile": DOCKERFILE, "sales.csv": SALES})).image


def _report(engine, image, script: bytes):  # type: ignore[no-untyped-def]
    return gate_shell(engine, image, SPEC, script)


def _alternatives(report) -> dict[str, bool]:  # type: ignore[no-untyped-def]
    return {c.name: c.passed for c in report.checks if c.kind == CheckKind.ALTERNATIVE}


def test_a_byte_exact_verifier_is_too_strict_but_not_rejected(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _report(docker_engine, image, EXACT)
    assert _alternatives(report) == {
        "probe:json-reserialised@oracle": False,
        "probe:yaml-reserialised@oracle": False,
        "probe:csv-quoted@oracle": False,
        "probe:final-newline@oracle": False,
    }
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    assert len(report.too_strict) == 4
    assert any("re-serialised" in w for w in report.too_strict)


def test_a_verifier_that_parses_accepts_every_alternative(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _report(docker_engine, image, PARSED)
    assert set(_alternatives(report).values()) == {True}
    assert report.too_strict == ()
    assert report.outcome == TaskVerdict.PASSED, report.reasons
