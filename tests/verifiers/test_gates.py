"""The gates on a tiny real task: a sound verifier passes; each broken one fails for its reason."""

from __future__ import annotations

from dataclasses import replace

import pytest

from envfactory.core.models import CheckKind, GateVerdict, Purpose
from verifiers.evidence import findings_from_report
from verifiers.gates import GateInput, run_gates, run_gates_detailed
from verifiers.probes import PROBES, by_name

from .sumtask import SPEC, make_verifier, sound_verifier

FULL = SPEC.model_copy(update={"verify_scope": "full-state"})

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _gate(engine, image, files, verifier, **kw):  # type: ignore[no-untyped-def]
    kw.setdefault("repeats", 2)
    kw.setdefault("concurrency", 4)
    return GateInput(engine=engine, spec=SPEC, verifier=verifier, files=files, image=image, **kw)


def test_a_sound_verifier_passes_every_gate(docker_engine, sum_image, files) -> None:  # type: ignore[no-untyped-def]
    seen: list[tuple[int, int]] = []
    run = run_gates_detailed(
        _gate(
            docker_engine,
            sum_image,
            files,
            sound_verifier(files),
            progress=lambda d, t, _: seen.append((d, t)),
        )
    )
    report = run.report
    assert report.verdict == GateVerdict.PASSED, report.reasons
    names = {c.name for c in report.checks}
    assert {"oracle", "no-op", "prefix-1", "partial:wrong-total", "without-step-1"} <= names
    probes = [c for c in report.checks if c.kind == CheckKind.PROBE]
    # built from what the oracle wrote: its outputs cut short, their numbers zeroed, set to
    # one, scaled, doubled and made NaN, their lines made placeholders, their rows padded,
    # each one left undone; the reference run on inputs made
    # minimal; its outputs flooded on the no-op, and replayed by the repository's hooks
    from_oracle = {
        "probe:truncated-outputs@oracle",
        "probe:perturbed-numbers-zero@oracle",
        "probe:perturbed-numbers-one@oracle",
        "probe:perturbed-numbers-scaled@oracle",
        "probe:perturbed-numbers-doubled@oracle",
        "probe:perturbed-numbers-nan@oracle",
        "probe:placeholder-lines@oracle",
        "probe:superset-lines@oracle",
        # each file the instruction names left undone (count.txt, then total.txt: empty)
        "probe:undone-file-1@oracle",
        "probe:undone-file-2@oracle",
        "probe:inputs-minimal+reference@no-op",
        "probe:candidate-flood@no-op",
        # the workspace is a git repository: its hooks replay the reference's files
        "probe:git-hook-replay@no-op",
    }
    assert from_oracle <= {c.name for c in probes}
    # every probe on no-op, prefix-1 and the partial (the no-op-only ones on the no-op)
    per_state = sum(1 if p.noop_only else 3 for p in PROBES)
    assert len(probes) == per_state + len(from_oracle)
    # expected at once: run once (a row whose input is the no-op's shares the no-op's runs)
    own = [c for c in probes if not any("result shared" in e for e in c.evidence)]
    assert {c.name: c.observed for c in own if c.observed != (0,)} == {}
    rows = {c.name: c for c in report.checks}
    assert rows["oracle"].observed == (1, 1) and rows["no-op"].observed == (0, 0)
    # unsolved states the probes resample run once; the omission state, probed by
    # nothing, R times
    assert rows["prefix-1"].observed == rows["partial:wrong-total"].observed == (0,)
    assert rows["without-step-1"].observed == (0, 0)
    assert seen and seen[-1][0] == seen[-1][1] == len(report.checks)
    assert findings_from_report(report) == ()


def test_an_always_pass_verifier_fails_the_no_op_and_unsolved_gates(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    report = run_gates(
        _gate(docker_engine, sum_image, files, make_verifier(files, "true"), probes=())
    )
    assert report.verdict == GateVerdict.FAILED
    assert {r.split(":")[0] for r in report.reasons} == {
        "no-op no-op",
        "unsolved prefix-1",
        "unsolved partial",
        "unsolved without-step-1",
    }


def test_a_verifier_that_accepts_the_noop_state_fails_the_noop_gate(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    # Accepts "nothing done yet" as well as the solution: the no-op gate must catch it.
    v = make_verifier(
        files,
        'test ! -e /workspace/out || { test "$(cat /workspace/out/total.txt)" = 100 && test "$(cat /workspace/out/count.txt)" = 4; }',
    )
    report = run_gates(_gate(docker_engine, sum_image, files, v, probes=()))
    # without step 1 (`mkdir -p out`) step 2 writes nothing: that state is the no-op's too
    assert report.reasons == (
        "no-op no-op: expected 0, got [1, 1]",
        "unsolved without-step-1: expected 0, got [1, 1]",
    )


def test_a_verifier_that_accepts_a_partial_state_fails_the_unsolved_gate(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    v = make_verifier(files, 'test "$(cat /workspace/out/total.txt)" = 100')
    report = run_gates(_gate(docker_engine, sum_image, files, v, probes=()))
    assert report.reasons == ("unsolved prefix-1: expected 0, got [1, 1]",)


def test_an_unsolved_state_run_once_is_run_again_when_the_verifier_accepts_it(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    # With probes to resample it, prefix-1 runs once at first; accepted, it runs R times.
    v = make_verifier(files, 'test "$(cat /workspace/out/total.txt)" = 100')
    report = run_gates(
        _gate(docker_engine, sum_image, files, v, probes=(by_name("reward-file"),), repeats=3)
    )
    rows = {c.name: c for c in report.checks}
    assert rows["prefix-1"].observed == (1, 1, 1)
    assert rows["partial:wrong-total"].observed == (0,)
    # it never reads count.txt: left empty on the oracle, it still passes
    assert report.reasons == (
        "unsolved prefix-1: expected 0, got [1, 1, 1] (and 1 probe rows on it)",
        "probe probe:undone-file-1@oracle: expected 0, got [1, 1, 1]",
    )


def test_a_probe_that_fools_the_verifier_fails_its_gate_and_becomes_a_finding(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    v = make_verifier(files, "test -s /workspace/out/total.txt && test -s /workspace/out/count.txt")
    probes = (by_name("placeholder-outputs"), by_name("reward-file"))
    report = run_gates(_gate(docker_engine, sum_image, files, v, probes=probes))
    on_noop = {c.name for c in report.checks if c.name.endswith("@no-op") and not c.passed}
    # the outputs flooded with candidate answers exist too (built from the oracle's outputs)
    assert on_noop == {"probe:placeholder-outputs@no-op", "probe:candidate-flood@no-op"}
    # an unexpected first result is run again up to `repeats`; an expected one is not
    by = {c.name: c for c in report.checks}
    assert by["probe:placeholder-outputs@no-op"].observed == (1, 1)
    assert by["probe:reward-file@no-op"].observed == (0,)
    assert "probe probe:placeholder-outputs@prefix-1: expected 0, got [1, 1]" in report.reasons
    rules = {f.rule for f in findings_from_report(report)}
    assert "probe:placeholder-outputs" in rules


def test_full_state_gates_replay_each_state_and_fail_closed_on_tamper(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    full = SPEC.model_copy(update={"verify_scope": "full-state"})
    probes = tuple(by_name(n) for n in ("path-hijack", "placeholder-outputs", "delayed-rewrite"))
    inp = GateInput(
        engine=docker_engine,
        spec=full,
        verifier=sound_verifier(files),
        files=files,
        image=sum_image,
        repeats=1,
        concurrency=4,
        probes=probes,
    )
    report = run_gates(inp)
    assert report.verdict == GateVerdict.PASSED, report.reasons
    hijack = next(c for c in report.checks if c.name == "probe:path-hijack@no-op")
    assert "/usr/local/bin/python3" in {t.path for t in hijack.tamper}
    assert any("tamper" in e and "reward is 0" in e for e in hijack.evidence)
    oracle = next(c for c in report.checks if c.name == "oracle")
    assert oracle.tamper == () and oracle.observed == (1,)


def test_a_stored_shortcut_state_is_a_regression_check(docker_engine, sum_image, files) -> None:  # type: ignore[no-untyped-def]
    from envfactory.core.models import StateKind

    with docker_engine.sandbox(sum_image, purpose=Purpose.TEST) as box:
        box.exec(
            "mkdir -p out && echo 7 > out/total.txt && echo 7 > out/count.txt", workdir="/workspace"
        )
        shortcut = box.snapshot(StateKind.REGRESSION, label="placeholders")
    try:
        weak = make_verifier(
            files, "test -s /workspace/out/total.txt && test -s /workspace/out/count.txt"
        )
        failing = run_gates(
            _gate(docker_engine, sum_image, files, weak, probes=(), regressions=(shortcut,))
        )
        assert "regression regression:placeholders: expected 0, got [1, 1]" in failing.reasons
        assert [f.rule for f in findings_from_report(failing)] == ["regression"]
        sound = run_gates(
            _gate(
                docker_engine,
                sum_image,
                files,
                sound_verifier(files),
                probes=(),
                regressions=(shortcut,),
            )
        )
        assert sound.verdict == GateVerdict.PASSED, sound.reasons
    finally:
        docker_engine.remove_image(shortcut.image)


@pytest.mark.parametrize("scope", ["workspace", "full-state"])
def test_gates_finish_on_a_one_slot_engine(docker_engine, sum_image, files, scope) -> None:  # type: ignore[no-untyped-def]
    """Regression: capturing a state's diff used to start a pristine container while the
    state's own sandbox held its slot; with pool_size threads doing so at once, every
    thread waited for a slot that none would free (seen as a hung `envfactory demo`)."""
    from envfactory.core.settings import SandboxSettings
    from sandboxes import DockerEngine
    from verifiers import statediff

    statediff._pristine.clear()
    engine = DockerEngine(
        SandboxSettings(pool_size=1),
        client=docker_engine.client,
        run_id=docker_engine.run_id,
        pool_wait_s=60,
    )
    spec = SPEC.model_copy(update={"verify_scope": scope})
    inp = GateInput(
        engine=engine,
        spec=spec,
        verifier=sound_verifier(files),
        files=files,
        image=sum_image,
        repeats=1,
        concurrency=2,
        probes=(by_name("reward-file"),),
    )
    assert run_gates(inp).verdict == GateVerdict.PASSED


def test_a_gate_run_with_standby_containers_reports_what_one_without_does(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    """Standby changes when verification containers start, never what is verified: the
    same rows, rewards and verdict; every standby container was used once or removed.
    Full-state scope: its recipes are verified by exec, in containers started ahead
    (every other row's verification is its container's own command)."""
    from envfactory.core.settings import SandboxSettings
    from sandboxes import DockerEngine
    from sandboxes import labels as L

    def engine(standby: int) -> DockerEngine:
        return DockerEngine(
            SandboxSettings(pool_size=4, standby=standby),
            client=docker_engine.client,
            run_id=f"{docker_engine.run_id}-standby{standby}",
        )

    def rows(report):  # type: ignore[no-untyped-def]
        return (
            report.verdict,
            report.notes,
            report.skipped,
            sorted((c.name, c.kind, c.expected, c.observed, c.tamper) for c in report.checks),
        )

    weak = make_verifier(
        files, "test -s /workspace/out/total.txt && test -s /workspace/out/count.txt"
    )
    probes = (by_name("placeholder-outputs"), by_name("reward-file"), by_name("path-hijack"))
    reports = {}
    for standby in (0, 4):
        eng = engine(standby)
        for name, v in (("sound", sound_verifier(files)), ("weak", weak)):
            inp = _gate(eng, sum_image, files, v, probes=probes)
            reports[standby, name] = run_gates(replace(inp, spec=FULL))
        eng.prestarted.settle()  # the unused standby containers go in the background
        left = eng.client.api.containers(all=True, filters={"label": f"{L.RUN_ID}={eng.run_id}"})
        assert left == []  # the run's end removed every container, standby ones included
        if standby:
            assert eng.prestarted.handed_out > 0
            assert eng.prestarted.started == eng.prestarted.handed_out + eng.prestarted.discarded
    assert reports[0, "sound"].verdict == GateVerdict.PASSED
    assert reports[0, "weak"].verdict == GateVerdict.FAILED
    for name in ("sound", "weak"):
        assert rows(reports[4, name]) == rows(reports[0, name])
