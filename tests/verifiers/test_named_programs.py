"""A program the task asks the solver to write, which the task does not start with: the
program probes write their payload at the path the instruction names (real Docker).

`forged-pass-lines` there fools a verifier that runs the asked-for program and trusts
what it prints; a verifier that checks what the program wrote is not fooled. The reward
writers do not write there (docs/verifiers.md says why).
"""

from __future__ import annotations

import pytest

from verifiers.probes import by_name
from verifiers.probes.workspace import named_program_paths
from verifiers.runner import verifier_tar, verify_prepared
from verifiers.states import pristine_state, produce_probe

from .reporttask import EXPECTED, SPEC, context_tar
from .sumtask import make_verifier

PROGRAM = "/workspace/bin/summarize.py"
SPEC_NEW = SPEC.model_copy(
    update={
        "instruction": SPEC.instruction.replace("Finish /workspace/report.py", f"Write {PROGRAM}")
    }
)
#: runs the asked-for program and believes its last line
TRUSTS_OUTPUT = f"/usr/local/bin/python3 {PROGRAM} | tail -n 1 | grep -qi pass"
#: runs it, then checks what it wrote
CHECKS_OUTPUT = f"/usr/local/bin/python3 {PROGRAM}; cmp -s /workspace/out/summary.csv expected.csv"


def test_the_program_probes_name_the_asked_for_program_and_the_reward_writers_do_not() -> None:
    assert named_program_paths(SPEC_NEW) == [PROGRAM]
    assert PROGRAM in by_name("forged-pass-lines").script(SPEC_NEW)
    assert PROGRAM not in by_name("reward-writing-programs").script(SPEC_NEW)


@pytest.mark.docker
@pytest.mark.slow
def test_forged_pass_lines_at_the_asked_for_program_fool_a_verifier_trusting_its_output(  # type: ignore[no-untyped-def]
    docker_engine, base_image, files
) -> None:
    image = docker_engine.build(context_tar()).image
    noop = pristine_state(docker_engine, image, SPEC_NEW)
    state = produce_probe(docker_engine, image, SPEC_NEW, noop, by_name("forged-pass-lines"))
    for entry, fooled in ((TRUSTS_OUTPUT, 1), (CHECKS_OUTPUT, 0)):
        v = make_verifier(files, entry, {"expected.csv": EXPECTED})
        vfiles = verifier_tar(v, files)
        for prepared, want in ((noop.prepared, 0), (state.prepared, fooled)):  # 0: no program
            got = verify_prepared(
                docker_engine, prepared, spec=SPEC_NEW, verifier=v, verifier_files=vfiles
            )
            assert got.reward == want, (entry, got)
