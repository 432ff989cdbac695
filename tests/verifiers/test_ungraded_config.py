"""Configuration, CI and packaging files no verification reads are ungraded (real Docker,
traced with the host's strace).

The task: fix /app/calc.py so that `add` adds. The reference fixes it (step 1), then, as
real fixes do, updates the repository's CI workflow and its tox.ini (step 2). The prefix
state after step 1 has the whole fix and only lacks those two files' changes: a verifier
running the tests cannot tell it from the reference's state, and no sound one should.
With the trace showing the verification never read them, that row is *not applicable*
(and the task is accepted); without a trace it stays and rejects, as in doubt every row
does. Configuration the instruction names stays graded: there the same prefix is a
partial state the verifier must refuse.
"""

from __future__ import annotations

import pytest

from envfactory.core.models import BuildContext, EnvironmentSpec, Step, TaskVerdict
from verifiers.probes.rewards import RewardFile
from verifiers.surface import strace_bundle

from .gate_tasks import context_tar, gate_shell

pytestmark = [pytest.mark.docker, pytest.mark.slow]

DOCKERFILE = (
    "FROM python:3.12-slim\nWORKDIR /app\n"
    "RUN mkdir -p .github/workflows && printf 'def add(a, b):\\n    return a - b\\n' > calc.py"
    " && printf '[tox]\\nenvlist = py311\\n' > tox.ini"
    " && printf 'on: push\\njobs: {}\\n' > .github/workflows/ci.yml\n"
)
FIX = "printf 'def add(a, b):\\n    return a + b\\n' > calc.py\n"
CONFIG = (
    "printf '[tox]\\nenvlist = py312\\n' > tox.ini\n"
    "printf 'on: [push, pull_request]\\njobs: {}\\n' > .github/workflows/ci.yml\n"
)
#: the sums printed, compared with the right ones (a module that exits 0 on import fails)
VERIFIER = (
    b"#!/bin/sh\ncd /app || exit 1\n"
    b"got=$(python3 -c 'import calc; print(calc.add(2, 3), calc.add(10, -4), calc.add(0, 0))')\n"
    b'[ "$got" = "5 6 0" ]\n'
)
PREFIX = "prefix-1"


def _spec(instruction: str) -> EnvironmentSpec:
    return EnvironmentSpec(
        id="env-calc-config",
        name="calc fix",
        instruction=instruction,
        build=BuildContext(files=()),
        workdir="/app",
        workspace_paths=("/app",),
        reference_solution=(
            Step(title="fix", script=f"set -e\n{FIX}"),
            Step(title="ci", script=f"set -e\n{CONFIG}"),
        ),
    )


UNNAMED = _spec("Fix add() in /app/calc.py: it subtracts. Keep the project's tooling current.")
NAMED = _spec("Fix add() in /app/calc.py, and set /app/tox.ini's envlist to py312.")


@pytest.fixture(scope="module")
def image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    if strace_bundle() is None:
        pytest.skip("no strace on this host: nothing is traced")
    return docker_engine.build(context_tar({"Dockerfile": DOCKERFILE})).image


def _gate(engine, image, spec, *, trace: bool):  # type: ignore[no-untyped-def]
    return gate_shell(
        engine, image, spec, VERIFIER, traced=trace, probes=(RewardFile(),), omissions=False
    )


def _row(report, name: str):  # type: ignore[no-untyped-def]
    return next(c for c in report.checks if c.name == name)


def test_a_prefix_lacking_only_unread_configuration_is_not_applicable(  # type: ignore[no-untyped-def]
    docker_engine, image
) -> None:
    report = _gate(docker_engine, image, UNNAMED, trace=True)
    prefix = _row(report, PREFIX)
    assert prefix.observed == (1,)  # the verifier cannot tell it from the reference's state
    assert prefix.not_applicable and "configuration files the verifier never read" in (
        prefix.not_applicable
    )
    assert "/app/tox.ini" in prefix.not_applicable
    assert report.outcome == TaskVerdict.PASSED, report.reasons


def test_without_a_trace_the_prefix_row_stays(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, UNNAMED, trace=False)
    assert PREFIX in {f.check for f in report.failures}


def test_configuration_the_instruction_names_stays_graded(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, NAMED, trace=True)
    assert _row(report, PREFIX).not_applicable is None
    assert PREFIX in {f.check for f in report.failures}
    assert report.outcome == TaskVerdict.REJECTED
