"""The gate plan is a pure function of the task: which rows exist, in which stage."""

from __future__ import annotations

from envfactory.core.models import CheckKind, StateKind, StateRef, VerifyScope
from envfactory.core.models.rows import RowId
from verifiers.gate.plan import GateOptions, plan_gates, probes_for, secondary_rows

from .fake_backend import FakeProbe, spec

EMPTY = FakeProbe("empty", lambda f: {})
SLOW = FakeProbe("slow", lambda f: f, noop_only=True)


def test_the_reference_chain_is_its_prefixes_then_the_oracle() -> None:
    plan = plan_gates(spec(["a", "b", "c"]), (EMPTY,))
    assert [str(r) for r in plan.chain] == ["prefix-1", "prefix-2", "oracle"]
    assert plan.primary == "envfactory" and plan.secondary is None
    assert plan.unsolved == 2
    assert plan.batch_probes and not plan.standby


def test_omissions_are_planned_for_each_step_but_the_last() -> None:
    plan = plan_gates(spec(["a", "b", "c"]), (EMPTY,))
    assert [str(r) for r, _ in plan.omissions] == ["without-step-1", "without-step-2"]
    off = plan_gates(spec(["a", "b", "c"]), (EMPTY,), options=GateOptions(omissions=False))
    assert off.omissions == ()


def test_partials_and_regressions_get_their_own_rows() -> None:
    ref = StateRef(image="sha256:" + "a" * 64, kind=StateKind.REGRESSION, label="found-1")
    plan = plan_gates(spec(["a", "b"], partials={"half": ["a"]}), (EMPTY,), (ref,))
    assert [str(r) for r, _ in plan.partials] == ["partial:half"]
    assert [str(r) for r, _ in plan.regressions] == ["regression:found-1"]
    assert plan.unsolved == 2  # prefix-1 and the partial


def test_a_one_step_reference_has_no_prefixes_and_says_so() -> None:
    plan = plan_gates(spec(["a"]), (EMPTY,))
    assert [str(r) for r in plan.chain] == ["oracle"]
    assert any("no prefix states" in n for n in plan.notes)


def test_harbor_rows_follow_only_when_envfactory_is_the_reward_runtime() -> None:
    both = plan_gates(spec(["a", "b"], semantics=("envfactory", "harbor")), (EMPTY, SLOW))
    assert both.secondary == "harbor"
    rows = [str(r) for r, _ in secondary_rows("harbor", both.probes)]
    assert rows == [
        "harbor:oracle",
        "harbor:no-op",
        "harbor:probe:empty@no-op",
        "harbor:probe:slow@no-op",
    ]
    harbor_first = plan_gates(spec(["a", "b"], semantics=("harbor", "envfactory")), (EMPTY,))
    assert harbor_first.primary == "harbor" and harbor_first.secondary is None
    assert not harbor_first.batch_probes and harbor_first.omissions == ()


def test_full_state_tasks_verify_from_standby_and_derive_probes_one_sandbox_each() -> None:
    """The whole battery in every scope: full-state tasks get the probes built from the
    oracle's outputs too (one sandbox per probe, no batch); what does not run there (the
    omissions, inputs-minimal) is named in the plan's notes."""
    task = spec(["a", "b"]).model_copy(update={"verify_scope": VerifyScope.FULL_STATE})
    plan = plan_gates(task, (EMPTY,))
    assert plan.standby and not plan.batch_probes and plan.derived and plan.omissions == ()
    assert any(n.startswith("not run: the omissions") for n in plan.notes)


def test_the_total_counts_every_row_known_before_the_oracle() -> None:
    plan = plan_gates(spec(["a", "b", "c"]), (EMPTY, SLOW))
    states = 2 + 2  # no-op, oracle, two prefixes
    probes = (1 + 2) + 1  # EMPTY on no-op and both prefixes; SLOW on the no-op alone
    assert plan.total == states + probes + len(plan.omissions)


def test_no_op_only_probes_run_on_the_untouched_state_alone() -> None:
    assert probes_for(StateKind.PRISTINE, (EMPTY, SLOW)) == (EMPTY, SLOW)
    assert probes_for(StateKind.PARTIAL, (EMPTY, SLOW)) == (EMPTY,)
    assert probes_for(StateKind.PARTIAL, ()) == ()


def test_secondary_rows_are_the_oracle_the_no_op_and_each_probe_on_it() -> None:
    kinds = [k for _, k in secondary_rows("harbor", (EMPTY,))]
    assert kinds == [CheckKind.ORACLE, CheckKind.NOOP, CheckKind.PROBE]
    assert all(r.semantics == "harbor" for r, _ in secondary_rows("harbor", (EMPTY,)))
    assert secondary_rows("harbor", (EMPTY,))[2][0].base == RowId.noop()
