"""The probes against loose comparisons of numbers, on the report task (`reporttask`):
its figures zeroed, set to one, scaled, doubled or made NaN, its lines made placeholders and its
rows padded with look-alikes from the inputs on the oracle state (perturbed-numbers-*,
placeholder-lines, superset-lines), its program and its
summary replaced by a flood of candidate answers on the no-op state (candidate-flood).
Each fools a verifier that compares loosely; the sound one (byte for byte) rejects it."""

from __future__ import annotations

import pytest

from envfactory.core.models import Purpose, StateKind
from envfactory.core.models.rows import RowId
from verifiers.gates import GateInput, run_gates
from verifiers.probes import CandidateFlood, Probe, perturbed_numbers, superset_lines
from verifiers.runner import verifier_tar, verify_prepared
from verifiers.states import ProducedState, pristine_state, produce_chain, produce_probe

from .naive import naive_verify
from .reporttask import EXPECTED, SOUND, SPEC, context_tar
from .sumtask import make_verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# Each reads the summary the way a hurried checker does; `expected.csv` is region,figure.
_FIGURES = (
    "import csv, sys\n"
    "want = {k: float(v) for k, v in csv.reader(open('expected.csv'))}\n"
    "got = {k: float(v) for k, v in csv.reader(open('/workspace/out/summary.csv'))}\n"
)
LOOSE = {
    # "close enough": a tolerance as wide as the figure itself holds 0 (and ×1.5); it at
    # least insists that the program was written
    "tolerance-holds-zero": _FIGURES
    + "import math\n"
    + "sys.exit(0 if 'not written yet' not in open('/workspace/report.py').read()"
    " and got.keys() == want.keys()"
    " and all(math.isclose(got[k], w, rel_tol=1.0) for k, w in want.items()) else 1)\n",
    # "at least the expected amount": checked from below only
    "lower-bounds-only": _FIGURES
    + "sys.exit(0 if all(got.get(k, -1) >= w for k, w in want.items()) else 1)\n",
    # "positive figures for the right keys" (once the program is written): signs only
    "signs-only": _FIGURES
    + "sys.exit(0 if 'not written yet' not in open('/workspace/report.py').read()"
    " and got.keys() == want.keys() and all(v > 0 for v in got.values()) else 1)\n",
    # "the regions' shares are right" (once the program is written): eu against na in the
    # expected proportion — shares, never the amounts
    "shares-only": _FIGURES
    + "sys.exit(0 if 'not written yet' not in open('/workspace/report.py').read()"
    " and abs(got['eu'] / got['na'] - want['eu'] / want['na']) < 1e-9 else 1)\n",
    # "as many lines as expected" (once the program is written): the shape only
    "line-count": "import sys\n"
    "n = len(open('/workspace/out/summary.csv').read().splitlines())\n"
    "written = 'not written yet' not in open('/workspace/report.py').read()\n"
    "sys.exit(0 if written and n == len(open('expected.csv').read().splitlines()) else 1)\n",
    # "fail when a figure is off by more than a cent": written as a rejection test, so a
    # NaN (every comparison with it false) is never off
    "fails-when-off": _FIGURES + "sys.exit(1 if got.keys() != want.keys()"
    " or any(abs(got[k] - w) > 0.01 for k, w in want.items()) else 0)\n",
    # "every expected row is there" (once the program is written): never that nothing
    # else is
    "rows-present": "import sys\n"
    "got = set(open('/workspace/out/summary.csv').read().splitlines())\n"
    "written = 'not written yet' not in open('/workspace/report.py').read()\n"
    "sys.exit(0 if written and set(open('expected.csv').read().splitlines()) <= got else 1)\n",
    # "the expected figures appear": every figure found somewhere in what the program
    # printed or in the summary
    "figures-appear": "import re, subprocess, sys\n"
    "run = subprocess.run([sys.executable, '/workspace/report.py'], capture_output=True, text=True)\n"
    "seen = set(re.findall(r'-?\\d+(?:\\.\\d+)?', run.stdout + open('/workspace/out/summary.csv').read()))\n"
    "sys.exit(0 if {l.split(',')[1].strip() for l in open('expected.csv')} <= seen else 1)\n",
    # the same, on the summary as the solver left it (without running anything)
    "summary-holds-figures": "import re, sys\n"
    "seen = set(re.findall(r'-?\\d+(?:\\.\\d+)?', open('/workspace/out/summary.csv').read()))\n"
    "sys.exit(0 if {l.split(',')[1].strip() for l in open('expected.csv')} <= seen else 1)\n",
}


def _verifier(files, name: str):  # type: ignore[no-untyped-def]
    if name == "sound":
        return make_verifier(files, SOUND, {"expected.csv": EXPECTED})
    extra = {"expected.csv": EXPECTED, "check.py": LOOSE[name].encode()}
    return make_verifier(files, "/usr/local/bin/python3 -I check.py", extra)


@pytest.fixture(scope="module")
def report_image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    return docker_engine.build(context_tar()).image


@pytest.fixture(scope="module")
def states(docker_engine, report_image) -> tuple[ProducedState, ProducedState]:  # type: ignore[no-untyped-def]
    noop = pristine_state(docker_engine, report_image, SPEC)
    *_, oracle = produce_chain(
        docker_engine,
        report_image,
        SPEC,
        SPEC.reference_solution,
        rows=[None, RowId.oracle()],
        kinds=[StateKind.PARTIAL, StateKind.ORACLE],
        want_diff=False,
    )
    return noop, oracle


def _derived(states, name: str) -> tuple[Probe, ProducedState]:  # type: ignore[no-untyped-def]
    noop, oracle = states
    ws, pristine = oracle.prepared.workspace, noop.prepared.workspace
    if name == "candidate-flood":
        return CandidateFlood.for_oracle(ws, pristine, SPEC.instruction, SPEC.workdir), noop
    derived = perturbed_numbers(ws, pristine, SPEC.instruction, SPEC.workdir)
    derived += superset_lines(ws, pristine, SPEC.instruction, SPEC.workdir)
    by = {p.name: p for p in derived}
    return by[name], oracle


@pytest.mark.parametrize("name", [*sorted(LOOSE), "sound"])
def test_every_verifier_accepts_the_oracle_and_rejects_the_untouched_workspace(
    docker_engine, report_image, files, name
):  # type: ignore[no-untyped-def]
    v = _verifier(files, name)
    with docker_engine.sandbox(report_image, purpose=Purpose.TEST) as box:
        assert naive_verify(box, v, files, settle_s=0) == 0
    with docker_engine.sandbox(report_image, purpose=Purpose.TEST) as box:
        for step in SPEC.reference_solution:
            assert box.exec(["bash", "-c", step.script], workdir=SPEC.workdir).ok
        assert naive_verify(box, v, files, settle_s=0) == 1


@pytest.mark.parametrize(
    ("probe_name", "loose", "fooled"),
    [
        ("perturbed-numbers-zero", "tolerance-holds-zero", True),
        ("perturbed-numbers-scaled", "tolerance-holds-zero", True),
        ("perturbed-numbers-zero", "lower-bounds-only", False),  # why the scaled variant
        ("perturbed-numbers-scaled", "lower-bounds-only", True),
        ("perturbed-numbers-zero", "signs-only", False),  # why the variant with ones
        ("perturbed-numbers-one", "signs-only", True),
        ("perturbed-numbers-nan", "fails-when-off", True),
        ("perturbed-numbers-scaled", "fails-when-off", False),  # why the NaN variant
        ("perturbed-numbers-doubled", "shares-only", True),
        ("perturbed-numbers-scaled", "shares-only", False),  # why the doubled variant
        ("perturbed-numbers-one", "shares-only", False),
        ("perturbed-numbers-zero", "fails-when-off", False),
        ("placeholder-lines", "line-count", True),
        ("superset-lines", "rows-present", True),
        ("placeholder-lines", "rows-present", False),  # why the superset
        ("perturbed-numbers-one", "rows-present", False),
        ("candidate-flood", "figures-appear", True),
        ("candidate-flood", "summary-holds-figures", True),
    ],
)
def test_the_probe_fools_a_loose_verifier_and_not_the_sound_one(
    docker_engine, report_image, files, states, probe_name, loose, fooled
):  # type: ignore[no-untyped-def]
    probe, base = _derived(states, probe_name)
    with docker_engine.sandbox(report_image, purpose=Purpose.TEST) as box:
        if base.kind == StateKind.ORACLE:
            for step in SPEC.reference_solution:
                assert box.exec(["bash", "-c", step.script], workdir=SPEC.workdir).ok
        assert probe.apply(box, SPEC).ok
        assert naive_verify(box, _verifier(files, loose), files, settle_s=0) == int(fooled)
    state = produce_probe(docker_engine, report_image, SPEC, base, probe)
    sound = _verifier(files, "sound")
    res = verify_prepared(
        docker_engine,
        state.prepared,
        spec=SPEC,
        verifier=sound,
        verifier_files=verifier_tar(sound, files),
    )
    assert res.reward == 0, res.stdout + res.stderr


def _gates(engine, image, files, name):  # type: ignore[no-untyped-def]
    return run_gates(
        GateInput(
            engine=engine,
            spec=SPEC,
            verifier=_verifier(files, name),
            files=files,
            image=image,
            repeats=1,
            concurrency=2,
        )
    )


def test_a_one_sided_check_is_caught_only_by_the_figures_made_larger(
    docker_engine, report_image, files
):  # type: ignore[no-untyped-def]
    report = _gates(docker_engine, report_image, files, "lower-bounds-only")
    # it reads the lines into a dict: the order the instruction asks for ("sorted by
    # region") is never checked either, nor that report.py was finished (the stub back,
    # the summary kept)
    assert report.reasons == (
        "probe probe:perturbed-numbers-doubled@oracle: expected 0, got [1]",
        "probe probe:perturbed-numbers-scaled@oracle: expected 0, got [1]",
        "probe probe:records-reordered@oracle: expected 0, got [1]",
        "probe probe:undone-file-2@oracle: expected 0, got [1]",
    )


def test_a_verifier_that_finds_the_figures_somewhere_is_caught_by_the_flood_and_the_padding(
    docker_engine, report_image, files
):  # type: ignore[no-untyped-def]
    # on the no-op, a flood of candidates; on the oracle, its rows among look-alikes: the
    # figures are there both times and nothing else is asked
    report = _gates(docker_engine, report_image, files, "summary-holds-figures")
    assert report.reasons == (
        "probe probe:candidate-flood@no-op: expected 0, got [1]",
        "probe probe:records-reordered@oracle: expected 0, got [1]",  # nor the order
        "probe probe:superset-lines@oracle: expected 0, got [1]",
        "probe probe:undone-file-2@oracle: expected 0, got [1]",  # nor the program
    )
