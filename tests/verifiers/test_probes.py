"""Every probe fools a deliberately naive verifier, and the sound verifier rejects it.

"Naive" is the verifier's own mistake (see `sumtask.NAIVE`) run by the naive harness
(`naive.naive_verify`: verify in the solver's live container); "sound" is the sound
verifier run by the real runner on the probe state the gates would produce.
"""

from __future__ import annotations

import pytest

from envfactory.core.models import Purpose
from verifiers.probes import PROBES, by_name
from verifiers.runner import verifier_tar, verify_prepared
from verifiers.states import pristine_state, produce_probe

from .naive import naive_verify
from .sumtask import NAIVE, SPEC, make_verifier, naive_verifier, sound_verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: probe → the naive verifier it is shown to fool.
FOOLS = {
    "reward-file": "trusts-reward-file",
    "forged-output": "parses-output",
    "conftest-pass": "pytest-unprotected",
    "startup-hook": "python-from-path",
    "module-shadow": "runs-from-workspace",
    "path-hijack": "python-from-path",
    "delete-tests": "runs-workspace-tests",
    "empty-tests": "runs-workspace-tests",
    "placeholder-outputs": "checks-existence",
    "break-collection": "greps-failures",
    "git-reset": "runs-workspace-tests",
    "delayed-rewrite": "runs-a-script",
    "inputs-emptied": "recomputes-from-inputs",
    "inputs-minimal": "recomputes-from-inputs",
}

#: The variants an attacker tries next, each with a naive verifier phrased unlike the
#: ones in `sumtask.NAIVE` (entry, extra files).
VARIANTS: dict[str, tuple[str, dict[str, bytes]]] = {
    "recomputes-from-inputs": (
        "t=$(awk '{s+=$1} END {print s+0}' /workspace/data/nums.txt); n=$(wc -l < /workspace/data/nums.txt);"
        ' test "$(cat /workspace/out/total.txt)" = "$t" && test "$(cat /workspace/out/count.txt)" = "$n"',
        {},
    ),
    "imports-json-in-workspace": (
        "cd /workspace && python3 -c \"import json, sys; sys.exit(0 if json.loads(open('out/total.txt').read()) == 100 else 1)\"",
        {},
    ),
    "trusts-result-json": (
        "sh grade.sh; grep -q '\"passed\": true' /logs/verifier/result.json",
        {
            "grade.sh": b"python3 -m pytest -q test_outputs.py && mkdir -p /logs/verifier && echo '{\"passed\": true}' > /logs/verifier/result.json\n"
        },
    ),
    "pytest-in-workspace-rootdir": (
        "mkdir -p /workspace/tests && cp test_outputs.py /workspace/tests/test_zz_outputs.py && cd /workspace"
        " && python3 -m pytest -q --noconftest tests/test_zz_outputs.py",
        {},
    ),
    "guards-inputs-with-git": (
        "git -c safe.directory='*' -C /workspace diff --quiet HEAD -- data || exit 1;"
        " t=$(awk '{s+=$1} END {print s+0}' /workspace/data/nums.txt); n=$(wc -l < /workspace/data/nums.txt);"
        ' test "$(cat /workspace/out/total.txt)" = "$t" && test "$(cat /workspace/out/count.txt)" = "$n"',
        {},
    ),
    "prepends-workspace-bin": (
        "PATH=/workspace/bin:$PATH; jq -e '. == 100' /workspace/out/total.txt",
        {},
    ),
    "checks-number-format": (
        "grep -Eqx '[0-9]+' /workspace/out/total.txt && grep -Eqx '[0-9]+' /workspace/out/count.txt",
        {},
    ),
}

#: (probe, variant it is shown to fool).
VARIANT_CASES = [
    ("module-shadow", "imports-json-in-workspace"),
    ("reward-file", "trusts-result-json"),
    ("conftest-pass", "pytest-in-workspace-rootdir"),
    ("path-hijack", "prepends-workspace-bin"),
    ("placeholder-outputs", "checks-number-format"),
    ("inputs-minimal", "guards-inputs-with-git"),
]

#: Probes the sum task cannot show (no stale output, no solver program): shown on the
#: report task in test_probes_report.py (reward-writing-programs, whose verifiers keep
#: Harbor's reward file, in test_probe_reward_writers.py).
SHOWN_ON_THE_REPORT_TASK = {
    "refreshed-mtimes",
    "forged-pass-lines",
    "hanging-programs",
    "crashing-programs",
    "killer-programs",
    "reward-writing-programs",
}


#: Probes whose class needs code the verifier imports: shown on the calc task in
#: test_probe_forgery.py.
SHOWN_ON_THE_CALC_TASK = {"in-process-forgery"}


def _naive(files, name: str):  # type: ignore[no-untyped-def]
    if name in VARIANTS:
        entry, extra = VARIANTS[name]
        return make_verifier(files, entry, extra)
    return naive_verifier(files, name)


def test_every_probe_in_the_library_is_shown_to_fool_something() -> None:
    shown = set(FOOLS) | SHOWN_ON_THE_REPORT_TASK | SHOWN_ON_THE_CALC_TASK
    assert shown == {p.name for p in PROBES}
    assert set(FOOLS.values()) <= set(NAIVE) | set(VARIANTS)
    assert {n for _, n in VARIANT_CASES} | {"recomputes-from-inputs"} == set(VARIANTS)


@pytest.fixture(scope="module")
def noop(docker_engine, sum_image):  # type: ignore[no-untyped-def]
    return pristine_state(docker_engine, sum_image, SPEC)


@pytest.mark.parametrize("naive", sorted(set(FOOLS.values()) | set(VARIANTS)))
def test_each_naive_verifier_still_rejects_the_untouched_environment(
    docker_engine, sum_image, files, naive
):  # type: ignore[no-untyped-def]
    with docker_engine.sandbox(sum_image, purpose=Purpose.TEST) as box:
        assert naive_verify(box, _naive(files, naive), files, settle_s=0) == 0


@pytest.mark.parametrize(
    ("probe_name", "naive"),
    [*sorted(FOOLS.items()), *VARIANT_CASES],
    ids=[*sorted(FOOLS), *(f"{p}-{n}" for p, n in VARIANT_CASES)],
)
def test_the_probe_fools_a_naive_verifier_and_the_sound_verifier_rejects_it(
    docker_engine,
    sum_image,
    files,
    noop,
    probe_name,
    naive,  # type: ignore[no-untyped-def]
) -> None:
    probe = by_name(probe_name)
    with docker_engine.sandbox(sum_image, purpose=Purpose.TEST) as box:
        probe.apply(box, SPEC)
        assert naive_verify(box, _naive(files, naive), files) == 1, "the probe fools nothing"
    state = produce_probe(docker_engine, sum_image, SPEC, noop, probe)
    sound = sound_verifier(files)
    res = verify_prepared(
        docker_engine,
        state.prepared,
        spec=SPEC,
        verifier=sound,
        verifier_files=verifier_tar(sound, files),
    )
    assert res.reward == 0, res.stdout + res.stderr
    assert res.exit_code not in (None, 0)
