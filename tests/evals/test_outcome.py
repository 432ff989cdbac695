"""An attempt's result decided from types: the stop cause, the last finish refusal, the
gate verdict. The totals, the table, and the CLI's refusals of bad input."""

from __future__ import annotations

from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.core.models import (
    AgentRole,
    EvalAttempt,
    EvalRun,
    FailureCause,
    FinishRefusal,
    StopCause,
    Trajectory,
    TrajectoryStep,
    Usage,
)
from envfactory.evals import classify, render_table


def _traj(stop: str, cause: StopCause | None, *refusals: FinishRefusal | None) -> Trajectory:
    steps = tuple(
        TrajectoryStep(index=i, refusal=r, error=f"refused {r}" if r else None)
        for i, r in enumerate(refusals)
    )
    return Trajectory(
        id="traj-1",
        role=AgentRole.RESEARCH,
        steps=steps,
        usage=Usage(turns=len(steps)),
        stop_reason=stop,  # type: ignore[arg-type]
        stop_cause=cause,
        error="turn budget spent" if stop != "finished" else None,
    )


def test_a_finished_run_has_no_failure_cause():
    assert classify(_traj("finished", None, FinishRefusal.BUILD_FAILED)) is None


def test_the_last_refusal_before_the_budget_ran_out_is_the_cause():
    t = _traj("budget", StopCause.TURN_BUDGET, FinishRefusal.BUILD_FAILED, None)
    assert classify(t)[0] == FailureCause.BUILD_FAILED  # type: ignore[index]
    t = _traj("budget", StopCause.STUCK, FinishRefusal.BUILD_FAILED, FinishRefusal.REFERENCE_FAILED)
    cause, detail = classify(t)  # type: ignore[misc]
    assert cause == FailureCause.REFERENCE_FAILED and detail.startswith("reference_failed (stuck)")
    t = _traj("budget", StopCause.TURN_BUDGET, FinishRefusal.PASSES_NOOP)
    assert classify(t)[0] == FailureCause.VERIFIER_REFUSED  # type: ignore[index]


def test_no_refusal_is_no_finish_and_an_endpoint_failure_is_a_model_error():
    assert classify(_traj("budget", StopCause.WALL_TIME, None))[0] == FailureCause.NO_FINISH  # type: ignore[index]
    t = _traj("error", StopCause.ENDPOINT_FAILED, FinishRefusal.BUILD_FAILED)
    assert classify(t)[0] == FailureCause.MODEL_ERROR  # type: ignore[index]


def test_totals_and_the_table_count_each_target_and_cause():
    run = EvalRun(
        id="eval-1",
        role=AgentRole.JUDGE,
        model="m",
        k=2,
        source="store",
        attempts=(
            EvalAttempt(
                target="env-a",
                index=0,
                success=True,
                turns=4,
                tool_calls=6,
                step_causes={"retried": 3, "compacted": 1},
            ),
            EvalAttempt(
                target="env-a", index=1, success=False, cause=FailureCause.NOT_REWARDED, turns=2
            ),
            EvalAttempt(
                target="env-b", index=0, success=False, cause=FailureCause.NO_FINISH, turns=9
            ),
            EvalAttempt(
                target="env-b", index=1, success=False, cause=FailureCause.NO_FINISH, turns=9
            ),
        ),
    )
    total = run.totals()
    assert (total.attempts, total.successes, total.success_rate, total.turns) == (4, 1, 0.25, 6.0)
    assert total.causes == {"not_rewarded": 1, "no_finish": 2}
    assert total.step_causes == {"retried": 3, "compacted": 1}  # counts never leak into means
    assert run.totals("env-a").success_rate == 0.5
    table = render_table(run).splitlines()
    assert table[2].startswith("env-a") and " 1/2 " in table[2]
    assert table[4].startswith("TOTAL") and "no_finish×2" in table[4]
    assert any(line.startswith("  env-b #1: no_finish") for line in table)
    assert "model behaviour over all turns: compacted×1, retried×3" in table


def test_bad_input_exits_1_naming_the_fix_and_stores_nothing(tmp_path):
    env = {"ENVFACTORY_HOME": str(tmp_path / "home")}
    r = CliRunner()
    res = r.invoke(app, ["agents", "eval", "--seeds", str(tmp_path)], env=env)
    assert res.exit_code == 1 and "--role is required" in res.output
    res = r.invoke(app, ["agents", "eval", "--role", "research", "--seeds", str(tmp_path)], env=env)
    assert res.exit_code == 1 and "holds no seed" in res.output
    res = r.invoke(app, ["agents", "eval", "--role", "research", "--env", "env-x"], env=env)
    assert res.exit_code == 1 and "research runs on --seeds" in res.output
    res = r.invoke(app, ["agents", "eval", "--role", "judge", "--env", "env-x"], env=env)
    assert res.exit_code == 1 and "env-x" in res.output
    listed = r.invoke(app, ["agents", "eval", "list", "--json"], env=env)
    assert listed.exit_code == 0 and listed.stdout.strip() == "[]"
    shown = r.invoke(app, ["agents", "eval", "show", "eval-nope"], env=env)
    assert shown.exit_code == 1 and "agents eval list" in shown.output


def test_every_finish_refusal_maps_to_a_failure_cause():
    for refusal in FinishRefusal:
        cause, detail = classify(_traj("budget", StopCause.TURN_BUDGET, refusal))  # type: ignore[misc]
        assert isinstance(cause, FailureCause) and detail.startswith(refusal.value)
