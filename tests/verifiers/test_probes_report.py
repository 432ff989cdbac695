"""The probes the sum task cannot show, on a second task (`reporttask`): a stale output
already in the workspace (refreshed-mtimes), a solver program the verifier runs
(forged-pass-lines), a several-line answer (truncated-outputs, applied to the oracle).
Each fools a verifier with that one mistake; the sound verifier passes every gate."""

from __future__ import annotations

import pytest

from envfactory.core.models import GateVerdict, Purpose
from verifiers.gates import GateInput, run_gates
from verifiers.probes import by_name
from verifiers.runner import verifier_tar, verify_prepared
from verifiers.states import pristine_state, produce_probe

from .naive import naive_verify
from .reporttask import EXPECTED, NAIVE, RECOMPUTE_PY, SOUND, SPEC, context_tar
from .sumtask import make_verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def report_image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    return docker_engine.build(context_tar()).image


def _verifier(files, entry: str):  # type: ignore[no-untyped-def]
    return make_verifier(files, entry, {"expected.csv": EXPECTED, "recompute.py": RECOMPUTE_PY})


@pytest.mark.parametrize("naive", [*sorted(NAIVE), "sound"])
def test_every_verifier_rejects_the_untouched_workspace(docker_engine, report_image, files, naive):  # type: ignore[no-untyped-def]
    entry = SOUND if naive == "sound" else NAIVE[naive]
    with docker_engine.sandbox(report_image, purpose=Purpose.TEST) as box:
        assert naive_verify(box, _verifier(files, entry), files, settle_s=0) == 0


@pytest.mark.parametrize(
    ("probe_name", "naive"),
    [
        ("refreshed-mtimes", "trusts-fresh-mtime"),
        ("forged-pass-lines", "greps-the-whole-log"),
        ("hanging-programs", "skips-timeouts"),
        ("crashing-programs", "skips-crashes"),
        ("killer-programs", "no-failure-line"),
        ("killer-programs", "last-line-passed"),
    ],
)
def test_the_probe_fools_its_naive_verifier_and_not_the_sound_one(
    docker_engine, report_image, files, probe_name, naive
):  # type: ignore[no-untyped-def]
    probe = by_name(probe_name)
    with docker_engine.sandbox(report_image, purpose=Purpose.TEST) as box:
        probe.apply(box, SPEC)
        assert naive_verify(box, _verifier(files, NAIVE[naive]), files, settle_s=0) == 1
    noop = pristine_state(docker_engine, report_image, SPEC)
    state = produce_probe(docker_engine, report_image, SPEC, noop, probe)
    sound = _verifier(files, SOUND)
    res = verify_prepared(
        docker_engine,
        state.prepared,
        spec=SPEC,
        verifier=sound,
        verifier_files=verifier_tar(sound, files),
    )
    assert res.reward == 0, res.stdout + res.stderr


def _gates(engine, image, files, entry):  # type: ignore[no-untyped-def]
    return run_gates(
        GateInput(
            engine=engine,
            spec=SPEC,
            verifier=_verifier(files, entry),
            files=files,
            image=image,
            repeats=1,
            concurrency=2,
        )
    )


def test_a_verifier_that_checks_the_first_lines_fails_the_truncated_oracle(
    docker_engine, report_image, files
):  # type: ignore[no-untyped-def]
    report = _gates(docker_engine, report_image, files, NAIVE["checks-first-lines"])
    assert report.reasons == (
        "probe probe:truncated-outputs@oracle: expected 0, got [1]",
        # nor does it run report.py: the stub back, the summary kept, it passes
        "probe probe:undone-file-2@oracle: expected 0, got [1]",
    )


def test_a_verifier_that_recomputes_from_the_data_accepts_the_reference_run_on_other_data(
    docker_engine, report_image, files
):  # type: ignore[no-untyped-def]
    report = _gates(docker_engine, report_image, files, NAIVE["recomputes-the-summary"])
    assert report.reasons == (
        "probe probe:inputs-minimal+reference@no-op: expected 0, got [1]",
        "probe probe:undone-file-2@oracle: expected 0, got [1]",  # report.py never run
    )


def test_the_sound_verifier_passes_every_gate_including_the_new_probes(
    docker_engine, report_image, files
):  # type: ignore[no-untyped-def]
    report = _gates(docker_engine, report_image, files, SOUND)
    assert report.verdict == GateVerdict.PASSED, report.reasons
    names = {c.name for c in report.checks}
    assert {
        "probe:truncated-outputs@oracle",
        "probe:refreshed-mtimes@no-op",
        "probe:forged-pass-lines@prefix-1",
        "probe:inputs-minimal+reference@no-op",
        "probe:perturbed-numbers-zero@oracle",
        "probe:perturbed-numbers-one@oracle",
        "probe:perturbed-numbers-scaled@oracle",
        "probe:placeholder-lines@oracle",
        "probe:candidate-flood@no-op",
    } <= names
