"""benchmarks/integrity.py's counting, without Docker: a broken verifier accepted only
where the gate report names the attack as a harness limit of Harbor's runtime is counted
as such, never as caught; the same acceptance anywhere else is a miss."""

from __future__ import annotations

from benchmarks.integrity import TaskResult, table
from envfactory.core.models import TaskVerdict

PASSED = TaskVerdict.PASSED.value
REJECTED = TaskVerdict.REJECTED.value


def _broken(runtime: str, limits: list[str], outcome: str = PASSED) -> TaskResult:
    return TaskResult(
        "path-hijack--x", "path-hijack", False, runtime, outcome, harbor_limits=limits
    )


def test_a_harbor_only_exploit_through_a_noted_harness_limit_is_not_a_miss() -> None:
    r = _broken("harbor-only", ["path-hijack"])
    assert (r.harness_limit, r.missed, r.caught) == (True, False, False)
    assert "harness limit" in table([r])


def test_without_the_note_or_under_envfactorys_runtime_it_is_a_miss() -> None:
    for r in (_broken("harbor-only", []), _broken("envfactory", ["path-hijack"])):
        assert (r.harness_limit, r.missed) == (False, True)


def test_a_limit_for_another_class_does_not_excuse_the_task() -> None:
    r = _broken("harbor-only", ["startup-hook"])
    assert r.missed and not r.harness_limit


def test_a_rejected_task_is_caught_whatever_the_notes() -> None:
    r = _broken("harbor-only", ["path-hijack"], outcome=REJECTED)
    r.failing = ["no-op"]
    assert (r.caught, r.harness_limit, r.missed) == (True, False, False)
