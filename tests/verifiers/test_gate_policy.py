"""The gate scheduler's policy on an in-memory backend: what runs, how often, what is
skipped and shared, and what a broken sandbox does — no Docker, milliseconds a test.

The real-Docker gate tests (test_gates.py, test_verdicts.py) test the engine; these test
the decisions, from more angles than containers could afford.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from envfactory.core.errors import SandboxBroken
from envfactory.core.models import (
    CheckKind,
    GateFailure,
    GateReport,
    StateKind,
    StateRef,
    TaskVerdict,
)
from envfactory.core.models.rows import RowId
from verifiers.gates import run_gates, run_gates_detailed

from .fake_backend import FakeBackend, FakeProbe, Files, gate_input, spec

R = 3


def _answer(files: Files, n: int) -> bool:
    """A sound verifier: the answer must be there, and right."""
    return files.get("out.txt") == "42\n"


def _writes(name: str, text: str) -> Callable[[Files], Files]:
    return lambda files: {**files, name: text}


STEPS = {
    "prepare": _writes("notes.txt", "working\n"),
    "answer": _writes("out.txt", "42\n"),
    "fail": lambda files: (_ for _ in ()).throw(RuntimeError("exit 1")),
}
EMPTY = FakeProbe("empty-output", _writes("out.txt", ""))
WIPE = FakeProbe("wipe", lambda files: {})
FORGE = FakeProbe("forge", _writes("out.txt", "42\n"))  # a shortcut the verifier cannot see


def _backend(
    verifier: Callable[[Files, int], bool] = _answer,
    steps: tuple[str, ...] = ("prepare", "answer"),
    probes: tuple[FakeProbe, ...] = (EMPTY, WIPE),
    **kw: object,
) -> FakeBackend:
    semantics = kw.pop("semantics", ("envfactory",))
    partials = kw.pop("partials", None)
    return FakeBackend(
        spec(steps, semantics=semantics, partials=partials),  # type: ignore[arg-type]
        steps=STEPS,
        verifier=verifier,
        probes=probes,
        **kw,  # type: ignore[arg-type]
    )


def _rows(report: GateReport) -> dict[str, tuple[int, ...]]:
    return {c.name: c.observed for c in report.checks}


def _skipped(report: GateReport) -> dict[str, str]:
    return {s.name: s.why for s in report.skipped}


def test_a_sound_verifier_passes_with_each_row_run_as_often_as_the_policy_says() -> None:
    backend = _backend()
    report = run_gates(gate_input(backend, repeats=R))
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    rows = _rows(report)
    assert rows["oracle"] == (1, 1, 1) and rows["no-op"] == (0, 0, 0)
    assert rows["prefix-1"] == (0,)  # its probe rows ask about it again
    assert rows["probe:empty-output@no-op"] == (0,)
    assert rows["probe:empty-output@prefix-1"] == (0,)
    assert set(rows) >= {"probe:wipe@no-op", "probe:wipe@prefix-1"}


def test_every_row_runs_r_times_when_adaptive_repeats_are_off() -> None:
    report = run_gates(gate_input(_backend(), repeats=R, adaptive_repeats=False))
    assert all(len(c.observed) == R for c in report.checks if not _shares(c.evidence))


def _shares(evidence: tuple[str, ...]) -> bool:
    return any("verified once with" in e or "identical" in e for e in evidence)


def test_a_failing_reference_step_skips_every_row_that_needs_the_oracle() -> None:
    backend = _backend(steps=("prepare", "fail", "answer"))
    report = run_gates(gate_input(backend, repeats=R))
    assert report.outcome == TaskVerdict.REFERENCE_FAILED
    assert report.reference_failure is not None and report.reference_failure.step == 2
    assert not [r for r in backend.produced if RowId.parse(r).probe]
    assert any("probes on each of" in s.name for s in report.skipped)
    assert "oracle" not in _rows(report)


def test_an_oracle_the_verifier_rejects_skips_the_probes_and_says_why() -> None:
    backend = _backend(verifier=lambda files, n: False)
    report = run_gates(gate_input(backend, repeats=R))
    assert report.outcome == TaskVerdict.REJECTED
    assert _rows(report)["oracle"] == (0, 0, 0)
    assert not [r for r in backend.produced if RowId.parse(r).probe]
    why = next(s.why for s in report.skipped if "probes on each of" in s.name)
    assert "rejects the reference solution's state" in why


def test_probes_are_produced_only_after_the_oracle_passed() -> None:
    backend = _backend()
    run_gates(gate_input(backend, repeats=R, concurrency=4))
    first_probe = next(i for i, r in enumerate(backend.produced) if RowId.parse(r).probe)
    assert "oracle" in backend.produced[:first_probe]


def test_an_unexpected_first_result_brings_that_row_to_r_runs() -> None:
    backend = _backend(probes=(EMPTY, FORGE))
    report = run_gates(gate_input(backend, repeats=R))
    rows = _rows(report)
    assert rows["probe:forge@no-op"] == (1, 1, 1)  # confirmed, not a one-off
    assert rows["probe:empty-output@prefix-1"] == (0,)  # the verifier has not disagreed
    assert "probe:forge@prefix-1" not in rows  # that state is the oracle's, byte for byte
    assert report.outcome == TaskVerdict.REJECTED
    assert any("probe:forge" in r for r in report.reasons)


def test_once_the_verifier_disagrees_with_itself_every_row_is_brought_to_r() -> None:
    def flaky_on_noop(files: Files, n: int) -> bool:  # accepts the untouched state once
        return _answer(files, n) or (files == {} and n == 1)

    backend = _backend(verifier=flaky_on_noop, probes=(EMPTY,))
    report = run_gates(gate_input(backend, repeats=R, concurrency=1))
    rows = _rows(report)
    assert sorted(rows["no-op"]) == [0, 0, 1]
    assert all(len(obs) == R for name, obs in rows.items()), rows
    assert any("flaky" in r for r in report.reasons)


def test_byte_identical_probe_states_share_one_verification() -> None:
    backend = _backend(probes=(WIPE,))
    report = run_gates(gate_input(backend, repeats=R))
    rows = _rows(report)
    # wiping the no-op and wiping prefix-1 leave the same (empty) files as the no-op
    assert rows["probe:wipe@no-op"] == rows["no-op"] == rows["probe:wipe@prefix-1"]
    assert backend.verifications({}) == R  # the no-op's runs, nothing more


def test_a_probe_that_leaves_the_oracle_as_it_was_is_no_row() -> None:
    noop_ok = FakeProbe("no-change", lambda files: files)
    backend = _backend(probes=(noop_ok,), partials={"half": ["prepare", "answer"]})
    report = run_gates(gate_input(backend, repeats=R))
    # the partial "half" equals the oracle: it is verified (and fails), but a probe on
    # it changes nothing the oracle did not already show
    assert "partial:half" in _rows(report)
    assert "probe:no-change@partial:half" not in _rows(report)
    assert any("nothing for it to attack" in n for n in report.notes)


def test_a_failed_primary_row_skips_every_secondary_row() -> None:
    backend = _backend(probes=(EMPTY, FORGE), semantics=("envfactory", "harbor"))
    report = run_gates(gate_input(backend, repeats=R))
    assert report.outcome == TaskVerdict.REJECTED
    harbor_rows = [c for c in report.checks if c.semantics == "harbor"]
    assert harbor_rows == []
    skipped = _skipped(report)
    assert {"harbor:oracle", "harbor:no-op", "harbor:probe:forge@no-op"} <= set(skipped)
    assert "the verdict is a rejection under every runtime" in skipped["harbor:oracle"]


def test_secondary_rows_run_when_every_primary_row_passed() -> None:
    backend = _backend(semantics=("envfactory", "harbor"))
    report = run_gates(gate_input(backend, repeats=R))
    assert report.outcome == TaskVerdict.PASSED, report.reasons
    rows = _rows(report)
    assert rows["harbor:oracle"] == (1,) and rows["harbor:no-op"] == (0,)
    assert rows["harbor:probe:empty-output@no-op"] == (0,)
    assert report.safe_under("harbor")


def test_a_secondary_runtime_that_fails_once_skips_its_other_rows() -> None:
    def fooled_in_harbor(files: Files, n: int) -> bool:  # e.g. a reward file left behind
        return _answer(files, n) or files.get("out.txt") == ""

    backend = _backend(
        harbor=fooled_in_harbor, probes=(EMPTY, WIPE), semantics=("envfactory", "harbor")
    )
    report = run_gates(gate_input(backend, repeats=R, concurrency=1))  # rows in plan order
    assert report.outcome == TaskVerdict.PASSED  # the reward's own runtime is sound
    assert not report.safe_under("harbor")
    assert _rows(report)["harbor:probe:empty-output@no-op"] == (1,)
    assert _skipped(report) == {
        "harbor:probe:wipe@no-op": (
            "harbor:probe:empty-output@no-op failed: the task is already unsafe under harbor"
        )
    }


def test_a_sandbox_broken_once_is_retried_in_a_fresh_one() -> None:
    backend = _backend(broken=lambda files: 1 if files.get("out.txt") == "42\n" else 0)
    report = run_gates(gate_input(backend, repeats=R))
    assert report.outcome == TaskVerdict.PASSED
    assert _rows(report)["oracle"] == (1, 1, 1)
    assert backend.breaks.total() == 1


def test_a_sandbox_broken_twice_is_the_engines_failure_naming_the_row() -> None:
    backend = _backend(broken=lambda files: 2 if files.get("notes.txt") else 0)
    with pytest.raises(SandboxBroken, match=r"verifying (oracle|prefix-1): twice"):
        run_gates(gate_input(backend, repeats=R))


def test_regression_states_run_r_times_and_fail_the_verdict_when_rewarded() -> None:
    shortcut: Files = {"out.txt": "42\n", "hack": "1"}
    backend = _backend(regressions={"found-1": shortcut})
    ref = StateRef(image="sha256:fake", kind=StateKind.REGRESSION, label="found-1")
    report = run_gates(gate_input(backend, repeats=R, regressions=(ref,)))
    assert _rows(report)["regression:found-1"] == (1, 1, 1)
    assert report.outcome == TaskVerdict.REJECTED


def test_a_probe_on_a_state_the_verifier_already_accepts_derives_from_it() -> None:
    backend = _backend(partials={"done-early": ["answer"]}, probes=(EMPTY, FORGE))
    run = run_gates_detailed(gate_input(backend, repeats=R))
    forge = next(c for c in run.report.checks if c.name == "probe:forge@partial:done-early")
    assert forge.derived_from == "partial:done-early"
    assert next(c for c in run.report.checks if c.name == "partial:done-early").kind == (
        CheckKind.UNSOLVED
    )


def test_the_progress_count_ends_at_its_total() -> None:
    seen: list[tuple[int, int]] = []
    backend = _backend()
    run_gates(gate_input(backend, repeats=R, progress=lambda d, t, what: seen.append((d, t))))
    assert seen and seen[-1][0] == seen[-1][1]
    assert all(d <= t for d, t in seen)


def test_a_rejection_resting_only_on_privileged_rows_says_so() -> None:
    """A probe that uses what a solver does not have (`Probe.privileged`) labels its rows;
    the report says when every reason is such a row, and not when one reason is not."""
    knowing = FakeProbe("knowing", _writes("out.txt", "42\n"))
    knowing.privileged = "the verifier's own file names"  # type: ignore[misc]
    report = run_gates(gate_input(_backend(probes=(EMPTY, knowing)), repeats=R))
    assert report.outcome == TaskVerdict.REJECTED
    assert report.failures and all(f.check and "knowing" in f.check for f in report.failures)
    assert all(
        c.privileged == "the verifier's own file names"
        for c in report.checks
        if c.name.startswith("probe:knowing")
    )
    assert not any(c.privileged for c in report.checks if c.name.startswith("probe:empty"))
    assert report.privileged_only
    reason = report.reasons[0]
    assert reason.endswith("(privileged: uses the verifier's own file names)"), reason
    assert GateFailure.from_reason(reason).privileged == "the verifier's own file names"
    assert report.model_dump(mode="json")["privileged_only"] is True

    both = run_gates(gate_input(_backend(probes=(EMPTY, knowing, FORGE)), repeats=R))
    assert both.outcome == TaskVerdict.REJECTED and not both.privileged_only
    assert any(not f.privileged for f in both.failures)
