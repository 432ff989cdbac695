"""in-process-forgery: the module under test forges the verdict of the test runner that
imports it. The task (fixtures/calc): fix `sub` in the package /workspace/calc. The
verifiers are written the ways such checks are written: pytest run on the verifier's
tests with the workspace on sys.path (weak: the solver's code shares its process), the
mined environments' check.py with its guard (sound), a check that runs the code in a
subprocess and compares what it prints (sound, the payload loads), and one that reads the
source and never imports it (the premise never holds: not applicable)."""

from __future__ import annotations

import io
import json
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from envfactory.core.models import (
    BuildContext,
    EnvironmentSpec,
    FileEntry,
    GateVerdict,
    PartialSolution,
    Provenance,
    Step,
    Verifier,
)
from envfactory.repos.taskdir import CHECK_GUARD, CHECK_SCRIPT
from verifiers.gates import GateInput, run_gates
from verifiers.probes import by_name
from verifiers.runner import verifier_tar, verify_prepared
from verifiers.states import pristine_state, produce_probe

pytestmark = [pytest.mark.docker, pytest.mark.slow]

FIXTURE = Path(__file__).parent / "fixtures" / "calc"

SPEC = EnvironmentSpec(
    id="env-calc",
    name="calc",
    instruction="Fix sub() in /workspace/calc/ops.py: sub(a, b) must return a minus b.",
    build=BuildContext(files=()),
    reference_solution=(
        Step(title="fix", script="sed -i 's/return b - a/return a - b/' calc/ops.py"),
    ),
    partial_solutions=(
        PartialSolution(
            name="negated",
            steps=(Step(script="sed -i 's/return b - a/return -(b + a)/' calc/ops.py"),),
        ),
    ),
)

TESTS = b"""from calc import add, sub


def test_add():
    assert add(2, 3) == 5


def test_sub():
    assert sub(5, 3) == 2
    assert sub(3, 5) == -2
"""

CHECK_CONFIG = {
    "runner": "pytest",
    "python": "/usr/local/bin/python3",
    "workspace": "/workspace",
    "restore": ["tests/test_calc.py"],
    "conftests": [],
    "targets": ["tests/test_calc.py"],
    "expect": ["tests.test_calc::test_add", "tests.test_calc::test_sub"],
    "timeout": 60,
}

#: name → (entry, files)
VERIFIERS: dict[str, tuple[str, dict[str, bytes]]] = {
    "pytest-in-process": (
        "PYTHONPATH=/workspace /usr/local/bin/python3 -m pytest -q -p no:cacheprovider "
        '--noconftest -c pytest.ini --rootdir="$PWD" test_calc.py',
        {"test_calc.py": TESTS, "pytest.ini": b"[pytest]\n"},
    ),
    "check-py-guarded": (
        "/usr/local/bin/python3 -I check.py",
        {
            "check.py": CHECK_SCRIPT.read_bytes(),
            "check_guard.py": CHECK_GUARD.read_bytes(),
            "pytest.ini": b"[pytest]\n",
            "expected.json": json.dumps(CHECK_CONFIG).encode(),
            "files/tests/test_calc.py": TESTS,
        },
    ),
    "prints-in-a-subprocess": (
        "out=$(cd /workspace && /usr/local/bin/python3 -c "
        "'import calc; print(calc.sub(5, 3), calc.sub(3, 5), calc.add(2, 3))'); "
        'test "$out" = "2 -2 5"',
        {},
    ),
    "reads-the-source": ("grep -q 'return a - b' /workspace/calc/ops.py", {}),
}


def context_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        tf.add(FIXTURE / "Dockerfile", arcname="Dockerfile")
    return buf.getvalue()


@pytest.fixture(scope="module")
def calc_image(docker_engine, base_image):  # type: ignore[no-untyped-def]
    return docker_engine.build(context_tar()).image


def _verifier(files, name: str) -> Verifier:  # type: ignore[no-untyped-def]
    entry, members = VERIFIERS[name]
    return Verifier(
        env_id=SPEC.id,
        files=tuple(FileEntry(path=n, key=files.put(d), mode=0o644) for n, d in members.items()),
        entry=entry,
        timeout_s=90,
        provenance=Provenance(author="human:test"),
    )


@pytest.mark.parametrize(
    ("name", "verdict"),
    [
        ("pytest-in-process", "rejected"),
        ("check-py-guarded", "passed"),
        ("prints-in-a-subprocess", "passed"),
        ("reads-the-source", "not applicable"),
    ],
)
def test_the_forgery_row_rejects_only_a_verifier_that_runs_the_tests_beside_the_solvers_code(  # type: ignore[no-untyped-def]
    docker_engine, calc_image, files, name, verdict
):
    report = run_gates(
        GateInput(
            engine=docker_engine,
            spec=SPEC,
            verifier=_verifier(files, name),
            files=files,
            image=calc_image,
            repeats=1,
            concurrency=2,
            probes=(by_name("in-process-forgery"),),
            derived_probes=False,
        )
    )
    rows = {c.name: c for c in report.checks}
    assert rows["oracle"].observed == (1,) and rows["no-op"].observed == (0,)
    row = rows["probe:in-process-forgery@no-op"]
    if verdict == "rejected":
        assert report.reasons == ("probe probe:in-process-forgery@no-op: expected 0, got [1]",), (
            report.reasons
        )
    else:
        assert report.verdict == GateVerdict.PASSED, report.reasons
    if verdict == "not applicable":
        assert row.not_applicable and "premise did not hold" in row.not_applicable
    elif verdict == "passed":
        assert not row.not_applicable, row  # the payload loaded, and the verdict held


def test_the_payload_records_what_it_forged_where_pytest_imported_it(  # type: ignore[no-untyped-def]
    docker_engine, calc_image, files
):
    probe = by_name("in-process-forgery")
    noop = pristine_state(docker_engine, calc_image, SPEC)
    state = produce_probe(docker_engine, calc_image, SPEC, noop, probe)
    prepared = replace(state.prepared, premise_file=probe.premise_file)
    v = _verifier(files, "pytest-in-process")
    res = verify_prepared(
        docker_engine, prepared, spec=SPEC, verifier=v, verifier_files=verifier_tar(v, files)
    )
    assert res.reward == 1
    assert (res.premise or "").split() == ["pytest", "unittest", "exit", "/workspace/calc/ops.py"]
