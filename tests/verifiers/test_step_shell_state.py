"""A reference solution split at its `# step` markers runs like the one script it is
(real Docker): what a step leaves in its shell — a temp directory's name, a function —
is there in the steps after it, in the chain that produces the prefix states and in the
recipe that re-creates them.

Regression of a stranger's weak task that never reached the gates: its `solve.sh` set
``work=$(mktemp -d)`` before `# step 2` and used ``$work`` after it; each step ran in a
shell of its own and the reference failed at step 2 (`reference-failed`).
"""

from __future__ import annotations

import pytest

from envfactory.core.models import BuildContext, EnvironmentSpec, TaskVerdict
from verifiers.formats.steps import split_steps

from .gate_tasks import context_tar, gate_shell

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SOLVE = """#!/bin/bash
set -euo pipefail
# step 1: stage the input in a scratch directory
work=$(mktemp -d)
emit() { printf '%s\\n' "$@"; }
emit alpha beta gamma > "$work/in.txt"
# step 2: write the result from it
cd "$work"
sort -r in.txt > /app/out.txt
"""
VERIFIER = """#!/bin/sh
[ "$(cat /app/out.txt)" = "$(printf 'gamma\\nbeta\\nalpha')" ]
"""


def test_a_variable_and_a_function_from_step_one_reach_step_two(docker_engine, base_image) -> None:  # type: ignore[no-untyped-def]
    files = {"Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nRUN touch /app/.keep\n"}
    image = docker_engine.build(context_tar(files)).image
    steps = split_steps(SOLVE, where="solution/solve.sh")
    assert len(steps) == 2
    spec = EnvironmentSpec(
        id="env-step-state",
        name="steps",
        instruction="Write the words of the staged list to /app/out.txt in reverse order.",
        build=BuildContext(files=()),
        workdir="/app",
        workspace_paths=("/app",),
        reference_solution=steps,
    )
    report = gate_shell(docker_engine, image, spec, VERIFIER.encode(), omissions=False)
    assert report.reference_failure is None, report.reference_failure
    rows = {c.name: c for c in report.checks}
    assert rows["oracle"].observed == (1,) and rows["prefix-1"].observed == (0,)
    assert report.outcome == TaskVerdict.PASSED, report.reasons
