"""Record order and multiplicity through the gate battery (real Docker).

The task: write the user names of /app/users.txt in lower case to /app/out/users.txt. A
verifier that compares ``sort -u`` of the output with the expected names rewards the
records in any order and with repeats: a shortcut when the instruction asks for a sorted
list without duplicates, a *tolerance* (a warning, no rejection) when it does not. A
verifier that compares the exact lines rejects both probes either way.
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

DOCKERFILE = "FROM python:3.12-slim\nWORKDIR /app\nCOPY users.txt /app/users.txt\n"
USERS = "Carol\nalice\nBob\nalice\ndave\n"
REFERENCE = "set -e\nmkdir -p out\ntr 'A-Z' 'a-z' < users.txt | LC_ALL=C sort -u > out/users.txt\n"


def _spec(instruction: str) -> EnvironmentSpec:
    return EnvironmentSpec(
        id="env-users",
        name="users",
        instruction=instruction,
        build=BuildContext(files=()),
        workdir="/app",
        workspace_paths=("/app",),
        reference_solution=(Step(title="names", script=REFERENCE),),
    )


ASKS = _spec(
    "Write /app/out/users.txt: every name of /app/users.txt in lower case, one per line, "
    "sorted, without duplicates."
)
SILENT = _spec("Write /app/out/users.txt: the names of /app/users.txt in lower case, one per line.")

#: order and duplicates never checked
SET_COMPARE = b"""#!/bin/sh
printf 'alice\\nbob\\ncarol\\ndave\\n' > /tmp/want
LC_ALL=C sort -u /app/out/users.txt | cmp -s - /tmp/want
"""
#: the exact lines
EXACT = b"""#!/bin/sh
printf 'alice\\nbob\\ncarol\\ndave\\n' | cmp -s - /app/out/users.txt
"""
ROWS = {"probe:records-reordered@oracle", "probe:record-duplicated@oracle"}


@pytest.fixture(scope="module")
def image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    return docker_engine.build(context_tar({"Dockerfile": DOCKERFILE, "users.txt": USERS})).image


def _gate(engine, image, spec: EnvironmentSpec, script: bytes):  # type: ignore[no-untyped-def]
    # the oracle-derived probes are what is tested here
    return gate_shell(engine, image, spec, script, probes=(RewardFile(),), omissions=False)


def _rows(report) -> dict[str, tuple[CheckKind, list[int]]]:  # type: ignore[no-untyped-def]
    return {c.name: (c.kind, list(c.observed)) for c in report.checks if c.name in ROWS}


def test_a_set_comparison_is_caught_when_the_instruction_asks_for_order_and_uniqueness(  # type: ignore[no-untyped-def]
    docker_engine, image
) -> None:
    report = _gate(docker_engine, image, ASKS, SET_COMPARE)
    assert _rows(report) == {n: (CheckKind.PROBE, [1]) for n in ROWS}
    assert report.outcome == TaskVerdict.REJECTED
    assert {f.check for f in report.failures} >= ROWS


def test_a_set_comparison_is_a_tolerance_when_the_instruction_is_silent(  # type: ignore[no-untyped-def]
    docker_engine, image
) -> None:
    report = _gate(docker_engine, image, SILENT, SET_COMPARE)
    assert _rows(report) == {n: (CheckKind.TOLERANCE, [1]) for n in ROWS}
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    assert len(report.tolerances) == 2
    assert any("reverse order" in t for t in report.tolerances)


def test_an_exact_comparison_rejects_both_and_is_accepted(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, ASKS, EXACT)
    assert _rows(report) == {n: (CheckKind.PROBE, [0]) for n in ROWS}
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    assert report.tolerances == ()
