"""Probes the verifier never reads are not applicable (real Docker, traced with the host's
strace).

The task: write a program /app/tool.sh that writes the lower-cased user names, sorted and
without duplicates, to /app/out/names.txt, and run it. The instruction asks for order and
uniqueness, so `records-reordered` and `record-duplicated` on the oracle are shortcut
probes. A verifier that runs the solver's program again before comparing its output
rewrites names.txt first: whatever a probe did to that file cannot change its verdict, and
calling its 1 there a shortcut would reject a verifier for a probe it never saw (the same
holds for `placeholder-lines` and `superset-lines`, which change names.txt alone). With the
trace, those rows are listed as not applicable; without it they stay (in doubt the row
stays) and reject. A verifier that reads names.txt as the solver left it and compares it
as a set is still caught. It never runs tool.sh either, the program the task asks for: the
row that empties tool.sh is not "not applicable" there but a finding of its own.
"""

from __future__ import annotations

import pytest

from envfactory.core.models import (
    BuildContext,
    EnvironmentSpec,
    Step,
    TaskVerdict,
)
from verifiers.probes.rewards import RewardFile
from verifiers.surface import strace_bundle

from .gate_tasks import context_tar, gate_shell

pytestmark = [pytest.mark.docker, pytest.mark.slow]

DOCKERFILE = "FROM python:3.12-slim\nWORKDIR /app\nCOPY users.txt /app/users.txt\n"
USERS = "Carol\nalice\nBob\nalice\ndave\n"
REFERENCE = """set -e
mkdir -p out
printf '#!/bin/sh\\ntr A-Z a-z < /app/users.txt | LC_ALL=C sort -u > /app/out/names.txt\\n' > tool.sh
sh tool.sh
"""
SPEC = EnvironmentSpec(
    id="env-names-tool",
    name="names tool",
    instruction=(
        "Write a shell program /app/tool.sh that writes the names of /app/users.txt in lower "
        "case to /app/out/names.txt, one per line, sorted, without duplicates; run it."
    ),
    build=BuildContext(files=()),
    workdir="/app",
    workspace_paths=("/app",),
    reference_solution=(Step(title="tool", script=REFERENCE),),
)
WANT = "printf 'alice\\nbob\\ncarol\\ndave\\n' > /tmp/want\n"
#: runs the program again (the file it writes emptied first), then compares that file
RERUNS = (
    "#!/bin/sh\n"
    + WANT
    + ": > /app/out/names.txt\nsh /app/tool.sh || exit 1\ncmp -s /tmp/want /app/out/names.txt\n"
).encode()
#: reads the file as left, as a set
AS_LEFT = (
    "#!/bin/sh\n" + WANT + "LC_ALL=C sort -u /app/out/names.txt | cmp -s /tmp/want -\n"
).encode()
ROWS = {"probe:records-reordered@oracle", "probe:record-duplicated@oracle"}
#: every probe on the oracle that changes names.txt alone
NAMES_ONLY = ROWS | {
    "probe:placeholder-lines@oracle",
    "probe:superset-lines@oracle",
    "probe:undone-file-1@oracle",  # names.txt left empty
}
#: tool.sh left empty (the program the instruction names)
UNRUN = "probe:undone-file-2@oracle"
#: tool.sh reads /app/users.txt itself, never its arguments or standard input: the
#: lookup-table wrapper judged nothing, its premise never held (whatever the trace says)
PREMISE_UNMET = "probe:visible-examples-only@no-op"


@pytest.fixture(scope="module")
def image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    if strace_bundle() is None:
        pytest.skip("no strace on this host: nothing is traced")
    return docker_engine.build(context_tar({"Dockerfile": DOCKERFILE, "users.txt": USERS})).image


def _gate(engine, image, script: bytes, *, trace: bool):  # type: ignore[no-untyped-def]
    return gate_shell(
        engine, image, SPEC, script, traced=trace, probes=(RewardFile(),), omissions=False
    )


def test_a_verifier_that_rewrites_the_file_first_is_not_judged_by_probes_of_it(  # type: ignore[no-untyped-def]
    docker_engine, image
) -> None:
    report = _gate(docker_engine, image, RERUNS, trace=True)
    na = {c.name: c.not_applicable for c in report.checks if c.not_applicable}
    assert set(na) == NAMES_ONLY | {PREMISE_UNMET}, report.not_applicable
    assert "premise did not hold" in na.pop(PREMISE_UNMET)
    assert all("overwrote" in why for why in na.values())
    assert "probe:truncated-outputs@oracle" not in na  # it cuts tool.sh too, which is read
    assert report.outcome == TaskVerdict.PASSED, report.reasons


def test_without_a_trace_the_rows_stay(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, RERUNS, trace=False)
    assert [line.split(": ")[0] for line in report.not_applicable] == [PREMISE_UNMET]
    assert {f.check for f in report.failures} == NAMES_ONLY


def test_a_verifier_that_reads_the_file_as_left_is_still_caught(docker_engine, image) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, image, AS_LEFT, trace=True)
    assert [line.split(": ")[0] for line in report.not_applicable] == [PREMISE_UNMET]
    reasons = {f.check: f.reason for f in report.failures}
    assert set(reasons) >= ROWS | {UNRUN}
    # the program it never runs, left empty: a finding saying so, not a row that cannot judge
    assert "never runs or reads /app/tool.sh, a program the task asks for" in reasons[UNRUN]
    assert report.outcome == TaskVerdict.REJECTED
