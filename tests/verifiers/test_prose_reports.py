"""A prose report beside a graded result, through the gate battery (real Docker).

Regression of make demo's sqlite seed: the reference writes the recovered data and a
Markdown report whose last sentence explains, in prose, what no verifier can grade. A
sound verifier checks the data and the facts the instruction asks the report to state;
cutting that sentence is a tolerance (a warning for review), not a rejection. A verifier
that checks only that the report exists is still caught, by the cut that removes a
number the report must state. Each probe row's evidence says what it changed.
"""

from __future__ import annotations

import pytest

from envfactory.core.models import BuildContext, CheckKind, EnvironmentSpec, Step, TaskVerdict
from verifiers.evidence import state_changes

from .gate_tasks import context_tar, gate_shell

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REFERENCE = """cat > /app/report.md <<'EOF'
# Count

Counted 3 records (ids 1-3).

The export dropped them because its header changed, so the loader skipped every line.
EOF
printf '1\\n2\\n3\\n' > /app/ids.txt
"""
INSTRUCTION = (
    "Write the ids of the records to /app/ids.txt, one per line, and /app/report.md "
    "stating how many records there are, their id range and why they were lost."
)
SOUND = """#!/bin/sh
[ "$(cat /app/ids.txt)" = "$(printf '1\\n2\\n3')" ] || exit 1
grep -q 'Counted 3 records (ids 1-3)' /app/report.md
"""
#: reads the report's explanation and never the facts it must state
WEAK = """#!/bin/sh
grep -q 'header changed' /app/report.md
"""
#: the report alone, its count on the last line
REPORT_COUNT_LAST = """cat > /app/report.md <<'EOF'
# Count

The export dropped them because its header changed, so the loader skipped every line.

Counted 3 records (ids 1-3).
EOF
"""


@pytest.fixture(scope="module")
def image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    files = {"Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nRUN touch /app/.keep\n"}
    return docker_engine.build(context_tar(files)).image


def _spec(reference: str) -> EnvironmentSpec:
    return EnvironmentSpec(
        id="env-prose-report",
        name="prose",
        instruction=INSTRUCTION,
        build=BuildContext(files=()),
        workdir="/app",
        workspace_paths=("/app",),
        reference_solution=(Step(title="report", script=reference),),
    )


def test_cutting_the_prose_of_a_report_is_a_tolerance_not_a_rejection(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = gate_shell(docker_engine, image, _spec(REFERENCE), SOUND.encode())
    prose = next(c for c in report.checks if c.name == "probe:truncated-prose@oracle")
    assert prose.kind == CheckKind.TOLERANCE and prose.observed == (1,)
    assert any(line.startswith("changed: /app/report.md") for line in prose.evidence)
    assert report.outcome == TaskVerdict.PASSED, report.reasons


def test_a_verifier_that_never_reads_the_reports_facts_is_still_caught(
    docker_engine, image
) -> None:  # type: ignore[no-untyped-def]
    """The report's last line holds the count: its cut is graded (a number), not prose."""
    report = gate_shell(docker_engine, image, _spec(REPORT_COUNT_LAST), WEAK.encode())
    failing = {c.name for c in report.checks if c.kind == CheckKind.PROBE and not c.passed}
    assert "probe:truncated-outputs@oracle" in failing
    assert report.outcome == TaskVerdict.REJECTED


def test_state_changes_say_what_changed_with_a_bounded_excerpt() -> None:
    before = {"/a/r.md": b"x\ny\n", "/a/gone": b"1", "/a/bin": b"\0\1"}
    after = {"/a/r.md": b"x\nz" + b"!" * 500 + b"\n", "/a/new": b"abc", "/a/bin": b"\0\2"}
    lines = state_changes(before, after)
    assert lines[0] == "changed: /a/bin (2 → 2 bytes), binary"
    assert lines[1] == "changed: removed /a/gone (1 bytes)"
    assert lines[2] == "changed: added /a/new (3 bytes)"
    assert lines[3].startswith("changed: /a/r.md (4 → 504 bytes), line 2: 'y' → 'z!!!")
    assert len(lines[3]) < 260
