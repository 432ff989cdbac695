"""`visible-examples-only` through the gate battery, on a converter task (real Docker).

Regression of the integrity issue: a verifier whose cases are exactly the examples the
workspace shows was accepted; a lookup table of those examples passes it and converts
nothing else. The same task with a verifier that also tests dates the solver never saw
must be accepted, in Python and as a shell program.
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

INPUTS = "2024-01-05\n2023-12-31\n1999-07-04\n"
EXPECTED = "05/01/2024\n31/12/2023\n04/07/1999\n"

DOCKERFILE = """FROM python:3.12-slim
WORKDIR /app
COPY examples /app/examples
"""

PYTHON_REFERENCE = (
    "cat > /app/convert.py <<'EOF'\n"
    "import sys\n"
    "for line in sys.stdin:\n"
    "    y, m, d = line.strip().split('-')\n"
    "    print(f'{d}/{m}/{y}')\n"
    "EOF"
)
SHELL_REFERENCE = (
    "cat > /app/convert.sh <<'EOF'\n"
    "#!/bin/sh\n"
    'while IFS=- read -r y m d; do echo "$d/$m/$y"; done\n'
    "EOF\nchmod +x /app/convert.sh"
)

#: the workspace's own examples, nothing else
VISIBLE_ONLY = """#!/bin/sh
out=$({run} < /app/examples/inputs.txt) || exit 1
[ "$out" = "$(cat /app/examples/expected.txt)" ]
"""

#: the examples and dates the solver never saw
HIDDEN_TOO = """#!/bin/sh
out=$(printf '2020-02-29\\n2001-11-09\\n' | {run}) || exit 1
[ "$out" = "$(printf '29/02/2020\\n09/11/2001')" ] || exit 1
out=$({run} < /app/examples/inputs.txt) || exit 1
[ "$out" = "$(cat /app/examples/expected.txt)" ]
"""

CASES = {
    "python": (PYTHON_REFERENCE, "python3 /app/convert.py", "/app/convert.py"),
    "shell": (SHELL_REFERENCE, "/app/convert.sh", "/app/convert.sh"),
}


@pytest.fixture(scope="module")
def image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    files = {
        "Dockerfile": DOCKERFILE,
        "examples/inputs.txt": INPUTS,
        "examples/expected.txt": EXPECTED,
    }
    return docker_engine.build(context_tar(files)).image


def _report(engine, image, lang: str, verifier_sh: str):  # type: ignore[no-untyped-def]
    reference, run, path = CASES[lang]
    spec = EnvironmentSpec(
        id=f"env-dates-{lang}",
        name="dates",
        instruction=(
            f"Write {path}, which reads dates as YYYY-MM-DD, one per line on standard "
            "input, and prints each as DD/MM/YYYY. /app/examples shows inputs and the "
            "expected output."
        ),
        build=BuildContext(files=()),
        workdir="/app",
        workspace_paths=("/app",),
        reference_solution=(Step(title="converter", script=reference),),
    )
    return gate_shell(engine, image, spec, verifier_sh.format(run=run).encode())


def _failing(report) -> set[str]:  # type: ignore[no-untyped-def]
    return {c.name for c in report.checks if c.kind == CheckKind.PROBE and not c.passed}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_a_verifier_of_the_visible_examples_only_is_caught(docker_engine, image, lang) -> None:  # type: ignore[no-untyped-def]
    report = _report(docker_engine, image, lang, VISIBLE_ONLY)
    assert "probe:visible-examples-only@no-op" in _failing(report)
    assert report.outcome == TaskVerdict.REJECTED


@pytest.mark.parametrize("lang", sorted(CASES))
def test_a_verifier_with_inputs_of_its_own_is_accepted(docker_engine, image, lang) -> None:  # type: ignore[no-untyped-def]
    report = _report(docker_engine, image, lang, HIDDEN_TOO)
    assert "probe:visible-examples-only@no-op" in {c.name for c in report.checks}
    assert _failing(report) == set()
    assert report.outcome == TaskVerdict.PASSED, report.reasons


#: the program reads a file of the task's, never its arguments or standard input
FIXED_INPUT_REFERENCE = (
    "cat > /app/total.py <<'EOF'\n"
    "total = sum(int(x) for x in open('/app/examples/amounts.txt').read().split())\n"
    "print(total)\n"
    "EOF"
)
#: sound: runs the program and checks the total the task's file gives
FIXED_INPUT_VERIFIER = """#!/bin/sh
got=$(python3 /app/total.py) || exit 1
[ "$got" = 49 ]
"""


def test_a_program_given_no_input_to_judge_leaves_the_row_not_applicable(docker_engine) -> None:  # type: ignore[no-untyped-def]
    """Regression (make demo's redis seed): a program whose input comes from elsewhere (a
    service, a fixed file) meets nothing the lookup table could refuse, so the wrapped
    program *is* the reference's; its 1 is not a finding and the task is accepted."""
    files = {
        "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY examples /app/examples\n",
        "examples/amounts.txt": "12\n30\n7\n",
    }
    image = docker_engine.build(context_tar(files)).image
    spec = EnvironmentSpec(
        id="env-total-fixed",
        name="total",
        instruction="Write /app/total.py, which prints the sum of /app/examples/amounts.txt.",
        build=BuildContext(files=()),
        workdir="/app",
        workspace_paths=("/app",),
        reference_solution=(Step(title="total", script=FIXED_INPUT_REFERENCE),),
    )
    report = gate_shell(docker_engine, image, spec, FIXED_INPUT_VERIFIER.encode())
    row = next(c for c in report.checks if c.name == "probe:visible-examples-only@no-op")
    assert row.observed and set(row.observed) == {1}
    assert row.not_applicable and "premise did not hold" in row.not_applicable
    assert report.outcome == TaskVerdict.PASSED, report.reasons
