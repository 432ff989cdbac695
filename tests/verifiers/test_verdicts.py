"""Verdicts that say whose fault a rejection is, early verdicts, Harbor's reward contract,
and the rows gated under Harbor's runtime — on the tiny `sum` task, real Docker."""

from __future__ import annotations

import re

import pytest

from envfactory.core.models import CheckKind, Step, TaskVerdict
from verifiers.gates import GateInput, run_gates, run_gates_detailed
from verifiers.probes import by_name

from .inline import InlineProbe
from .sumtask import SPEC, make_verifier, sound_verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: A Harbor-style verifier: the check's status goes to /logs/verifier/reward.txt and
#: test.sh exits 0 either way (Terminal-Bench 2's stock form).
HARBOR_SH = b"""#!/bin/bash
python3 -I -m pytest -q -p no:cacheprovider --noconftest /tests/test_outputs.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
exit 0
"""
#: Harbor reads reward.json before reward.txt and removes both before each run
#: (`Verifier.verify`, harbor 0.26.0): this one writes reward.json only on success and a
#: reward.txt of 0 always, so the oracle earns 1 only where reward.json is read first, and
#: the no-op 0 only where a reward.json the solver planted was removed. Its output goes
#: only to a file, which every row's evidence quotes.
JSON_FIRST_SH = b"""#!/bin/bash
python3 -I -m pytest -q -p no:cacheprovider --noconftest /tests/test_outputs.py > /logs/verifier/pytest.log 2>&1 && echo '{"reward": 1.0}' > /logs/verifier/reward.json
echo 0 > /logs/verifier/reward.txt
exit 0
"""
#: Broken under Harbor's runtime only: the check's verdict goes through status.txt in the
#: reward directory, which Harbor does not clear, so a status.txt the solver planted stands.
#: A failing check pays 0.25: graded, a fraction the report shows and never rewards.
STATUS_SH = b"""#!/bin/bash
python3 -I -m pytest -q -p no:cacheprovider --noconftest /tests/test_outputs.py && echo PASS > /logs/verifier/status.txt
if grep -qx PASS /logs/verifier/status.txt; then echo 1; else echo 0.25; fi > /logs/verifier/reward.txt
exit 0
"""


def _gate(engine, image, files, verifier, spec=SPEC, **kw):  # type: ignore[no-untyped-def]
    kw.setdefault("repeats", 1)
    kw.setdefault("concurrency", 4)
    return GateInput(engine=engine, spec=spec, verifier=verifier, files=files, image=image, **kw)


def _harbor_verifier(files, script: bytes):  # type: ignore[no-untyped-def]
    v = make_verifier(files, "bash test.sh", {"test.sh": script})
    return v.model_copy(update={"mount_path": "/tests", "reward_dir": "/logs/verifier"})


def test_a_failing_reference_step_is_reference_failed_naming_the_step_and_stops_early(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    broken = SPEC.model_copy(
        update={
            "reference_solution": (
                SPEC.reference_solution[0],
                Step(title="count", script="wc -l < data/nums.txt | tr -d ' ' > out/count.txt"),
                Step(
                    title="publish",
                    script="set -e\ncp out/total.txt /nonexistent-dir/total.txt\necho never",
                ),
            )
        }
    )
    run = run_gates_detailed(_gate(docker_engine, sum_image, files, sound_verifier(files), broken))
    report = run.report
    assert report.outcome == TaskVerdict.REFERENCE_FAILED
    assert report.reference_failure is not None and report.reference_failure.step == 3
    assert report.reference_failure.title == "publish"
    assert "nonexistent-dir" in report.reference_failure.output
    assert report.reasons[0].startswith("reference solution failed at step 3 (publish)")
    # early: nothing after the failing step is verified; probes never produced
    assert report.skipped and not any(c.kind == CheckKind.PROBE for c in report.checks)
    assert not any(c.kind in (CheckKind.ORACLE, CheckKind.UNSOLVED) for c in report.checks)


def test_a_reference_that_fails_in_every_runtime_is_reference_failed_naming_its_command(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    """The step goes on past a failing import and exits 0; the tests reject its state in
    envfactory's runtime and in Harbor's: the reference's fault, with the command."""
    broken = SPEC.model_copy(
        update={
            "semantics": ("envfactory", "harbor"),
            "reference_solution": (
                Step(
                    title="total",
                    script="mkdir -p out\n"
                    "python3 -c 'from json import no_such_name' > out/total.txt\necho written",
                ),
                SPEC.reference_solution[1],
            ),
        }
    )
    run = run_gates_detailed(_gate(docker_engine, sum_image, files, sound_verifier(files), broken))
    report = run.report
    assert report.outcome == TaskVerdict.REFERENCE_FAILED, report.reasons
    failure = report.reference_failure
    assert failure is not None and (failure.step, failure.exit_code) == (1, 1)
    assert failure.command == "python3 -c 'from json import no_such_name' > out/total.txt"
    assert "ImportError" in failure.output
    assert report.reasons[0] == (
        "reference solution failed at step 1 (total): "
        "`python3 -c 'from json import no_such_name' > out/total.txt` exited 1"
    )
    oracle = next(c for c in report.checks if c.kind == CheckKind.ORACLE)
    assert oracle.observed == (0,) and any(
        e.startswith("reference: step 1") for e in oracle.evidence
    )
    assert any("every runtime tried" in n for n in report.notes)


def test_a_verifier_missing_its_tools_is_unrunnable_not_rejected(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    v = make_verifier(files, "uvx -p 3.13 -w pytest==8.4.1 pytest test_outputs.py")
    report = run_gates(_gate(docker_engine, sum_image, files, v))
    assert report.outcome == TaskVerdict.VERIFIER_UNRUNNABLE
    assert any("uvx" in u for u in report.unrunnable), report.unrunnable
    assert not any(c.kind == CheckKind.PROBE for c in report.checks)


def test_a_verifier_that_rejects_the_oracle_is_rejected_and_settles_early(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    v = make_verifier(files, 'test "$(cat /workspace/out/total.txt)" = 101')
    report = run_gates(_gate(docker_engine, sum_image, files, v))
    assert report.outcome == TaskVerdict.REJECTED
    assert report.reasons[0] == "oracle oracle: expected 1, got [0]"
    assert any("oracle settled" in s.why or "rejects" in s.why for s in report.skipped)


def test_probes_on_an_accepted_partial_state_fold_under_it(docker_engine, sum_image, files) -> None:  # type: ignore[no-untyped-def]
    # Regression: each probe on top of a partial state the verifier already accepts added
    # its own reason line (13 derived lines beside the real cause).
    v = make_verifier(files, 'test "$(cat /workspace/out/total.txt)" = 100')
    probes = (by_name("reward-file"), by_name("placeholder-outputs"), by_name("git-reset"))
    report = run_gates(_gate(docker_engine, sum_image, files, v, probes=probes))
    # one line, its derived rows counted on it; then count.txt, which it never reads
    reason, count = report.reasons
    assert count == "probe probe:undone-file-1@oracle: expected 0, got [1]"
    assert re.fullmatch(
        r"unsolved prefix-1: expected 0, got \[1\] \(and [123] probe rows on it\)", reason
    )
    assert {c.derived_from for c in report.checks if c.name.endswith("@prefix-1")} == {"prefix-1"}


def test_harbors_reward_file_decides_and_a_planted_one_is_never_read(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    spec = SPEC.model_copy(update={"semantics": ("envfactory", "harbor")})
    report = run_gates(
        _gate(
            docker_engine,
            sum_image,
            files,
            _harbor_verifier(files, HARBOR_SH),
            spec,
            probes=(by_name("reward-file"),),
        )
    )
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    harbor = {c.name: c for c in report.checks if c.semantics == "harbor"}
    assert {"harbor:oracle", "harbor:no-op", "harbor:probe:reward-file@no-op"} <= set(harbor)
    noop = next(c for c in report.checks if c.name == "no-op")
    assert noop.observed == (0,)  # exit 0, reward.txt says 0: the file decides


#: state kept outside the overlay: a tmpfs, a file the engine bind-mounts, System V IPC
OUTSIDE = (
    InlineProbe("shm-file", "echo 1 > /dev/shm/envfactory-plant"),
    InlineProbe("hosts-line", "printf '10.9.9.9 planted.example\\n' >> /etc/hosts"),
    InlineProbe(
        "ipc-segment",
        "python3 -c 'import ctypes; ctypes.CDLL(None).shmget(0x5eed, 4096, 0o1666)'",
    ),
)
#: trusts each of those markers (the segment by its key, 0x5eed), else checks soundly
OUTSIDE_SH = b"""#!/bin/bash
if [ -e /dev/shm/envfactory-plant ] || grep -q planted /etc/hosts || grep -qw 24301 /proc/sysvipc/shm; then
  echo 1 > /logs/verifier/reward.txt; exit 0
fi
python3 -I -m pytest -q -p no:cacheprovider --noconftest /tests/test_outputs.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def _outside_gate(engine, image, files, **kw):  # type: ignore[no-untyped-def]
    """The verifier trusting OUTSIDE's markers, gated under both runtimes with OUTSIDE."""
    spec = SPEC.model_copy(update={"semantics": ("envfactory", "harbor")})
    verifier = _harbor_verifier(files, OUTSIDE_SH)
    return _gate(engine, image, files, verifier, spec, probes=OUTSIDE, **kw)


def test_every_harbor_probe_row_is_verified_in_the_container_its_replay_left(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    """The container's upper directory is empty after each of these replays, yet the
    verifier there sees what they left: each harbor row runs the verifier (none is taken
    for the no-op's), and the verifier trusting those markers is caught under harbor."""
    # every row, though the first failing one settles harbor
    run = run_gates_detailed(_outside_gate(docker_engine, sum_image, files, settle_early=False))
    rows = {c.name: c for c in run.report.checks}
    for p in OUTSIDE:
        name = f"harbor:probe:{p.name}@no-op"
        assert len(run.results[name]) == 1, name
        assert rows[name].observed == (1,), name
        assert not any("identical to" in line for line in rows[name].evidence)
    assert rows["harbor:no-op"].observed == (0,)
    assert not run.report.safe_under("harbor")


def test_once_a_harbor_row_fails_the_harbor_rows_not_started_are_skipped(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    """One failing row refuses Harbor's runtime (its export); the rows after it could not
    change that and are listed as skipped. Every envfactory row still runs."""
    # one at a time, rows in the order they are queued: the first harbor probe fails
    report = run_gates(_outside_gate(docker_engine, sum_image, files, concurrency=1))
    assert report.outcome == TaskVerdict.PASSED and not report.safe_under("harbor")
    harbor = [c.name for c in report.checks if c.semantics == "harbor"]
    assert harbor == ["harbor:oracle", "harbor:no-op", "harbor:probe:shm-file@no-op"], harbor
    skipped = {s.name: s.why for s in report.skipped}
    for p in OUTSIDE[1:]:
        why = skipped[f"harbor:probe:{p.name}@no-op"]
        assert why == (
            "harbor:probe:shm-file@no-op failed: the task is already unsafe under harbor"
        ), why
    assert {f"probe:{p.name}@no-op" for p in OUTSIDE} <= {c.name for c in report.checks}


def test_a_harbor_rows_harness_limit_is_noted_only_when_the_row_ran(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    """A harness-limit note says what a harbor row left out; skipped, it left out nothing."""
    spec = SPEC.model_copy(update={"semantics": ("envfactory", "harbor")})
    verifier = _harbor_verifier(files, OUTSIDE_SH)
    hijack = by_name("path-hijack")
    limit = hijack.harness_limits["harbor"]

    def gate(**kw):  # type: ignore[no-untyped-def]
        probes = (OUTSIDE[0], hijack)  # queued in this order: shm-file fails first
        return run_gates(
            _gate(docker_engine, sum_image, files, verifier, spec, probes=probes, **kw)
        )

    settled = gate(concurrency=1)
    assert "harbor:probe:path-hijack@no-op" in {s.name for s in settled.skipped}
    assert limit not in settled.notes
    every = gate(concurrency=1, settle_early=False)
    assert "harbor:probe:path-hijack@no-op" in {c.name for c in every.checks}
    assert limit in every.notes


def test_a_rejection_under_envfactory_skips_the_harbor_rows(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    """Rejected under the task's own runtime, the task is safe under none: the harbor rows
    could not change a verdict and do not run."""
    spec = SPEC.model_copy(update={"semantics": ("envfactory", "harbor")})
    v = make_verifier(files, 'test "$(cat /workspace/out/total.txt)" = 100')
    gate = _gate(docker_engine, sum_image, files, v, spec, probes=(by_name("reward-file"),))
    report = run_gates(gate)  # the harbor rows wait for the envfactory rows
    assert report.outcome == TaskVerdict.REJECTED
    assert report.reasons[0].startswith("unsolved prefix-1: expected 0, got [1]")
    assert not any(c.semantics == "harbor" for c in report.checks)
    skipped = {s.name: s.why for s in report.skipped}
    assert skipped["harbor:oracle"] == (
        "prefix-1 failed: the verdict is a rejection under every runtime"
    ), skipped


def _both_runtimes(engine, image, files, script: bytes):  # type: ignore[no-untyped-def]
    spec = SPEC.model_copy(update={"semantics": ("envfactory", "harbor")})
    verifier = _harbor_verifier(files, script)
    return run_gates(_gate(engine, image, files, verifier, spec, probes=(by_name("reward-file"),)))


def test_reward_json_is_read_first_and_planted_reward_files_are_removed_as_harbor_does(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    """Harbor 0.26 removes reward.json and reward.txt before verifying and reads reward.json
    first: tests that write reward.json are not failed by a reward file the solver left."""
    report = _both_runtimes(docker_engine, sum_image, files, JSON_FIRST_SH)
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    assert report.safe_under("harbor"), report.other_runtime_reasons
    rows = {c.name: c.observed for c in report.checks}
    assert rows["oracle"] == rows["harbor:oracle"] == (1,)  # reward.json beats reward.txt
    assert rows["probe:reward-file@no-op"] == rows["harbor:probe:reward-file@no-op"] == (0,)
    # the verifier wrote only files: each row quotes them, right rows as well as wrong
    evidence = {c.name: "\n".join(c.evidence) for c in report.checks}
    assert re.search(
        r"verifier files: === /logs/verifier/pytest.log\n.*2 passed", evidence["oracle"], re.S
    )
    assert re.search(
        r"verifier files: === /logs/verifier/pytest.log\n.*FAILURES", evidence["no-op"], re.S
    )


def test_a_verifier_trusting_a_file_harbor_leaves_in_the_reward_directory_is_rejected_under_harbor(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    report = _both_runtimes(docker_engine, sum_image, files, STATUS_SH)
    # safe in envfactory's runtime (the reward directory starts empty there) ...
    assert report.outcome == TaskVerdict.PASSED and report.safe_under("envfactory")
    # ... and not in Harbor's, which keeps the status.txt the solver planted
    assert not report.safe_under("harbor")
    assert report.other_runtime_reasons == (
        "probe harbor:probe:reward-file@no-op [harbor]: expected 0, got [1]",
    ), report.other_runtime_reasons
    (graded,) = [n for n in report.notes if n.startswith("graded: ")]
    assert "no-op 0.25" in graded, graded
    noop = next(c for c in report.checks if c.name == "no-op")
    assert noop.observed == (0,)
    assert any(e.startswith("runner: graded reward 0.25 in reward.txt") for e in noop.evidence)


def test_a_task_gated_under_harbor_semantics_only_still_runs_its_probes(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    # Regression: with harbor as the only semantics the oracle never settled the verdict,
    # so no probe ran and the report passed on four rows.
    spec = SPEC.model_copy(update={"semantics": ("harbor",), "verify_scope": "full-state"})
    report = run_gates(
        _gate(
            docker_engine,
            sum_image,
            files,
            _harbor_verifier(files, HARBOR_SH),
            spec,
            probes=(by_name("reward-file"),),
        )
    )
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    probes = [c for c in report.checks if c.kind == CheckKind.PROBE]
    assert {c.name for c in probes} >= {"probe:reward-file@no-op", "probe:reward-file@prefix-1"}
    assert {c.semantics for c in report.checks} == {"harbor"}


#: the reference solution's last step leaves a process running, which the tests look for
LIVE_SPEC = SPEC.model_copy(
    update={
        "semantics": ("envfactory", "harbor"),
        "reference_solution": (
            *SPEC.reference_solution,
            Step(
                title="serve",
                script="cp /bin/sleep /tmp/envfactory-live && "
                "(/tmp/envfactory-live 1000 </dev/null >/dev/null 2>&1 &)",
            ),
        ),
    }
)
#: `liv[e]`: grep's own command line must not match
LIVE_CHECK = "grep -qa 'envfactory-liv[e]' /proc/[0-9]*/cmdline"


def test_tests_that_pass_only_in_harbors_runtime_are_gated_under_harbor_alone(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    """The tests need a process the reference solution left running: envfactory's runtime
    rejects its state, Harbor's accepts it, so the task is gated under harbor alone — with
    the reason in a note, and the probes still run there."""
    v = make_verifier(files, f'{LIVE_CHECK} && test "$(cat /workspace/out/total.txt)" = 100')
    gate = _gate(docker_engine, sum_image, files, v, LIVE_SPEC, probes=(by_name("reward-file"),))
    report = run_gates(gate)
    assert report.semantics == ("harbor",)
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    assert {c.semantics for c in report.checks} == {"harbor"}
    assert "probe:reward-file@no-op" in {c.name for c in report.checks}
    (note,) = [n for n in report.notes if n.startswith("gated under harbor semantics only")]
    assert "oracle oracle: expected 1, got [0" in note, note


def test_a_reference_state_failing_under_both_runtimes_stays_an_envfactory_rejection(
    docker_engine, sum_image, files
) -> None:  # type: ignore[no-untyped-def]
    v = make_verifier(files, f'{LIVE_CHECK} && test "$(cat /workspace/out/total.txt)" = 101')
    report = run_gates(_gate(docker_engine, sum_image, files, v, LIVE_SPEC, probes=()))
    assert report.outcome == TaskVerdict.REJECTED
    assert report.semantics == ("envfactory", "harbor")
    assert report.reasons[0].startswith("oracle oracle: expected 1, got [0")
    assert not any(n.startswith("gated under harbor") for n in report.notes)
