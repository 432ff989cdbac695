"""reward-writing-programs: a solver program the verifier runs keeps rewriting the reward
file after the verifier wrote its verdict (Harbor's contract, `reward_dir`). The
verifiers here are written in the styles such checks take in the wild — a Python checker
that runs the program case by case under a timeout, a shell one that pipes its output —
not in the probe's own terms; the sound one runs the program as a user who cannot write
the reward directory."""

from __future__ import annotations

import pytest

from envfactory.core.models import GateVerdict
from verifiers.gates import GateInput, run_gates
from verifiers.probes import by_name
from verifiers.runner import verifier_tar, verify_prepared
from verifiers.states import pristine_state, produce_probe

from .reporttask import EXPECTED, SPEC, context_tar
from .sumtask import make_verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REWARD_DIR = "/logs/verifier"

#: Each verifier takes the summary the solver left, then reruns the program to see that it
#: reproduces it (so the untouched workspace still has its program run), and judges both.

#: Python, subprocess with a timeout, the verdict written with open(): a common shape.
CHECK_PY = b"""import pathlib, subprocess, sys
want = pathlib.Path('expected.csv').read_bytes()
out = pathlib.Path('/workspace/out/summary.csv')
stored = out.read_bytes() if out.exists() else None
out.unlink(missing_ok=True)
try:
    subprocess.run([sys.executable, '/workspace/report.py'], timeout=20, capture_output=True)
    again = out.read_bytes() if out.exists() else None
except subprocess.TimeoutExpired:
    again = None
ok = stored == want and again == want
pathlib.Path('/logs/verifier/reward.txt').write_text('1' if ok else '0')
"""

_RERUN = "python3 /workspace/report.py 2>&1 | tee /tmp/run.log >/dev/null; "
_JUDGE = (
    'if [ "$stored" = 1 ] && cmp -s /workspace/out/summary.csv expected.csv; '
    "then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi"
)
_STORED = (
    "stored=0; cmp -s /workspace/out/summary.csv expected.csv && stored=1; "
    "rm -f /workspace/out/summary.csv; "
)

#: Shell: the program's output through tee into a log, the reward echoed at the end.
CHECK_SH = _STORED + _RERUN + _JUDGE

#: Sound: the program runs as nobody (its output directory opened to it); the reward
#: directory stays root's, so nothing the program starts can write the verdict.
SOUND_SH = (
    _STORED
    + "mkdir -p /workspace/out && chmod 0777 /workspace/out; "
    + "setpriv --reuid=65534 --regid=65534 --clear-groups "
    + "/usr/local/bin/python3 -I /workspace/report.py >/dev/null 2>&1; "
    + _JUDGE
)

VERIFIERS = {
    "python-subprocess": "/usr/local/bin/python3 -I check.py",
    "shell-tee": CHECK_SH,
    "sound-as-nobody": SOUND_SH,
}


@pytest.fixture(scope="module")
def report_image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    return docker_engine.build(context_tar()).image


def _verifier(files, name: str):  # type: ignore[no-untyped-def]
    v = make_verifier(files, VERIFIERS[name], {"expected.csv": EXPECTED, "check.py": CHECK_PY})
    return v.model_copy(update={"reward_dir": REWARD_DIR})


@pytest.fixture(scope="module")
def probe_state(docker_engine, report_image):  # type: ignore[no-untyped-def]
    noop = pristine_state(docker_engine, report_image, SPEC)
    return produce_probe(
        docker_engine, report_image, SPEC, noop, by_name("reward-writing-programs")
    )


@pytest.mark.parametrize(("name", "fooled"), [(n, not n.startswith("sound")) for n in VERIFIERS])
def test_a_verifier_that_leaves_the_program_running_with_the_reward_writable_is_fooled(
    docker_engine, report_image, files, probe_state, name, fooled
):  # type: ignore[no-untyped-def]
    v = _verifier(files, name)
    vfiles = verifier_tar(v, files)
    # each verifier judges the untouched workspace 0 (the gates test below: the oracle 1)
    noop = pristine_state(docker_engine, report_image, SPEC)
    res = verify_prepared(
        docker_engine, noop.prepared, spec=SPEC, verifier=v, verifier_files=vfiles
    )
    assert res.reward == 0, res
    rewards = [
        verify_prepared(
            docker_engine, probe_state.prepared, spec=SPEC, verifier=v, verifier_files=vfiles
        ).reward
        for _ in range(3)
    ]
    # the rewrite races the runner's kill: it won 199 of 200 runs of these two verifiers
    # here, so two of three is the bar; against the sound one it never wins
    assert sum(rewards) >= 2 if fooled else rewards == [0, 0, 0], rewards


def test_the_gates_name_the_probe_for_such_a_verifier_and_pass_the_sound_one(
    docker_engine, report_image, files
):  # type: ignore[no-untyped-def]
    probe = by_name("reward-writing-programs")
    for name, verdict in (("python-subprocess", "failed"), ("sound-as-nobody", "passed")):
        report = run_gates(
            GateInput(
                engine=docker_engine,
                spec=SPEC,
                verifier=_verifier(files, name),
                files=files,
                image=report_image,
                repeats=1,
                concurrency=2,
                probes=(probe,),
                derived_probes=False,
            )
        )
        if verdict == "passed":
            assert report.verdict == GateVerdict.PASSED, report.reasons
        else:
            assert report.reasons == (
                "probe probe:reward-writing-programs@no-op: expected 0, got [1]",
            ), report.reasons
