"""The reference with one step left out (`verifiers.omissions`): a verifier that checks
only what the last step does passes every prefix, and is caught here; a left-out step
that changes nothing the task is about (a backup copy) is not held against the verifier."""

from __future__ import annotations

import pytest

from envfactory.core.models import GateVerdict, Step
from verifiers.gates import GateInput, run_gates
from verifiers.omissions import decisive_changes, omission_chains

from .gate_tasks import workspace_of
from .sumtask import INSTRUCTION, SPEC, make_verifier, sound_verifier

PRISTINE = {"data/nums.txt": b"1\n2\n3\n94\n"}
ORACLE = {**PRISTINE, "out/total.txt": b"100\n", "out/count.txt": b"4\n", "nums.bak": b"x"}


def test_every_step_but_the_last_is_left_out_once() -> None:
    a, b, c = (Step(title=t, script=f"echo {t}") for t in "abc")
    assert omission_chains((a,)) == []
    named = [(str(row), steps) for row, steps in omission_chains((a, b))]
    assert named == [("without-step-1", (b,))]
    named = [(str(row), steps) for row, steps in omission_chains((a, b, c))]
    assert named == [("without-step-1", (b, c)), ("without-step-2", (a, c))]


def test_a_missing_named_output_decides_the_task() -> None:
    state = {k: v for k, v in ORACLE.items() if k != "out/total.txt"}
    got = decisive_changes(
        workspace_of(state), workspace_of(ORACLE), workspace_of(PRISTINE), INSTRUCTION, "/workspace"
    )
    assert got == ["/workspace/out/total.txt"]


def test_a_changed_starting_file_decides_the_task_though_the_instruction_does_not_name_it() -> None:
    state = {**ORACLE, "data/nums.txt": b"0\n"}
    instruction = "Write the sum of the numbers to out/total.txt."
    got = decisive_changes(
        workspace_of(state), workspace_of(ORACLE), workspace_of(PRISTINE), instruction, "/workspace"
    )
    assert got == ["/workspace/data/nums.txt"]


def test_an_unnamed_new_file_or_bytecode_is_incidental() -> None:
    state = {k: v for k, v in ORACLE.items() if k != "nums.bak"}
    oracle = {**ORACLE, "out/__pycache__/m.cpython-311.pyc": b"\x00"}
    got = decisive_changes(
        workspace_of(state), workspace_of(oracle), workspace_of(PRISTINE), INSTRUCTION, "/workspace"
    )
    assert got == []


def _gate(engine, image, files, verifier, spec=SPEC):  # type: ignore[no-untyped-def]
    return GateInput(
        engine=engine,
        spec=spec,
        verifier=verifier,
        files=files,
        image=image,
        repeats=2,
        concurrency=4,
        probes=(),
    )


@pytest.mark.docker
@pytest.mark.slow
def test_a_verifier_that_checks_only_the_last_step_is_caught_by_leaving_out_the_first(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    # prefix-1 wrote only the total, so checking the count rejects it; the reference
    # without step 1 wrote the count and no total: only this state shows the mistake
    v = make_verifier(files, 'test "$(cat /workspace/out/count.txt)" = 4')
    total, _ = SPEC.reference_solution
    count = Step(title="count", script="mkdir -p out && wc -l < data/nums.txt > out/count.txt")
    spec = SPEC.model_copy(  # steps that stand alone, and no authored partial state
        update={"reference_solution": (total, count), "partial_solutions": ()}
    )
    report = run_gates(_gate(docker_engine, sum_image, files, v, spec))
    assert report.verdict == GateVerdict.FAILED
    assert report.reasons == ("unsolved without-step-1: expected 0, got [1, 1]",)


@pytest.mark.docker
@pytest.mark.slow
def test_an_incidental_step_left_out_is_noted_not_failed(docker_engine, sum_image, files) -> None:  # type: ignore[no-untyped-def]
    total, count = SPEC.reference_solution
    backup = Step(title="backup", script="cp data/nums.txt nums.bak")
    spec = SPEC.model_copy(update={"reference_solution": (total, backup, count)})
    report = run_gates(_gate(docker_engine, sum_image, files, sound_verifier(files), spec))
    assert report.verdict == GateVerdict.PASSED, report.reasons
    rows = {c.name: c.observed for c in report.checks}
    assert rows["without-step-1"] == (0, 0)
    assert "without-step-2" not in rows
    assert any(n.startswith("without-step-2 not checked") for n in report.notes)
