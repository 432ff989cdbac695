"""Solver-writable inputs the verifier trusts (`verifiers/probes/trusted.py`): a setting
the verifier reads from the workspace changed, then the reference run for it.

On real Docker (traced): a report task whose period sits in /app/config.ini. A verifier
that takes the period from that file is rejected by `trusted-inputs+reference` (the
reference, run for the month before, earns 1); one that knows the period itself never
reads the file and has no such row. Then the setting changes without Docker.
"""

from __future__ import annotations

import pytest

from envfactory.core.models import TaskVerdict
from verifiers.probes import by_name
from verifiers.probes.trusted import changed_setting
from verifiers.surface import strace_bundle

from .gate_tasks import app_spec, context_tar, gate_shell

SALES = "date,amount\n2024-02-10,5\n2024-03-01,10\n2024-03-15,20\n"
DOCKERFILE = (
    "FROM python:3.12-slim\nWORKDIR /app\n"
    "COPY sales.csv /app/data/sales.csv\nCOPY config.ini /app/config.ini\n"
)
PERIOD = "p=$(sed -n 's/^period *= *//p' /app/config.ini)"
SUM = "awk -F, -v p=\"$p\" 'index($1,p)==1{s+=$2} END{print s+0}'"
SPEC = app_spec(
    "trusted-inputs",
    "Write /app/out/total.txt: the sum of the amounts in /app/data/sales.csv for the "
    "period 2024-03 (March 2024), as a bare number.",
    ("sum", f"{PERIOD}; mkdir -p out; {SUM} data/sales.csv > out/total.txt"),
)
#: takes the period from the workspace's config, the data from its own copy
TRUSTING = (
    f"#!/bin/sh\ncat > /tmp/sales.csv <<'EOF'\n{SALES}EOF\n{PERIOD}\n"
    f'want=$({SUM} /tmp/sales.csv)\n[ "$(cat /app/out/total.txt)" = "$want" ]\n'
).encode()
KNOWING = b'#!/bin/sh\n[ "$(cat /app/out/total.txt)" = 30 ]\n'


@pytest.mark.docker
@pytest.mark.slow
def test_a_verifier_that_takes_the_period_from_the_workspace_is_rejected_for_it(  # type: ignore[no-untyped-def]
    docker_engine, base_image
) -> None:
    if strace_bundle() is None:
        pytest.skip("no strace on this host")
    files = {"Dockerfile": DOCKERFILE, "sales.csv": SALES, "config.ini": "period = 2024-03\n"}
    image = docker_engine.build(context_tar(files)).image
    probes = (by_name("reward-file"),)
    weak = gate_shell(docker_engine, image, SPEC, TRUSTING, traced=True, probes=probes)
    rows = {c.name: c for c in weak.checks}
    row = rows["probe:trusted-inputs+reference@no-op"]
    assert row.observed == (1,), row
    assert any("/app/config.ini" in e for e in row.evidence), row.evidence
    assert weak.outcome == TaskVerdict.REJECTED, weak.reasons
    assert any("trusted-inputs+reference" in r for r in weak.reasons), weak.reasons

    sound = gate_shell(docker_engine, image, SPEC, KNOWING, traced=True, probes=probes)
    assert not [c for c in sound.checks if "trusted" in c.name], sound.checks
    assert sound.outcome == TaskVerdict.PASSED, sound.reasons


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("period = 2024-03\n", "period = 2024-02\n"),
        ("period = 2024-01\n", "period = 2023-12\n"),
        ("start: 2024-03-01\nend: 2024-01-01\n", "start: 2024-02-29\nend: 2023-12-31\n"),
        ("quarter=2024Q1\nq: 2024-Q3\n", "quarter=2023Q4\nq: 2024-Q2\n"),
        ("YEAR=2023\nversion=1.2.3\n", "YEAR=2022\nversion=1.2.3\n"),
        ("strict: true\nDEBUG=False\nmode: 'on'\n", "strict: false\nDEBUG=True\nmode: 'off'\n"),
        ("it is true that 2024 was good\n", "it is true that 2024 was good\n"),
        ("name: report\nrows: 12\n", "name: report\nrows: 12\n"),
    ],
)
def test_a_setting_changes_by_one_step_and_prose_does_not(before: str, after: str) -> None:
    assert changed_setting(before) == after
