"""From what a run left behind to an attempt's result: success, or one `FailureCause`.

Decided on types only: the trajectory's `stop_reason` / `stop_cause`, the finish tool's
last `FinishRefusal`, the gate verdict and the observed reward. The `detail` line is for
people and is never read back.
"""

from __future__ import annotations

from envfactory.core.models import (
    EvalAttempt,
    FailureCause,
    FinishRefusal,
    Trajectory,
)

#: the last refusal of a run that never finished → why the attempt failed
REFUSAL_CAUSE = {
    FinishRefusal.INVALID_OUTPUT: FailureCause.INVALID_OUTPUT,
    FinishRefusal.NO_BUILD_CONTEXT: FailureCause.BUILD_FAILED,
    FinishRefusal.BUILD_FAILED: FailureCause.BUILD_FAILED,
    FinishRefusal.REFERENCE_FAILED: FailureCause.REFERENCE_FAILED,
    FinishRefusal.PARTIAL_FAILED: FailureCause.PARTIAL_FAILED,
    FinishRefusal.UNSAFE_ENTRY: FailureCause.VERIFIER_REFUSED,
    FinishRefusal.NO_FILES: FailureCause.VERIFIER_REFUSED,
    FinishRefusal.PASSES_NOOP: FailureCause.VERIFIER_REFUSED,
}


def classify(traj: Trajectory) -> tuple[FailureCause, str] | None:
    """Why a run that did not finish failed; None when it finished."""
    if traj.stop_reason == "finished":
        return None
    stop = traj.stop_cause.value if traj.stop_cause else (traj.stop_reason or "unknown")
    if traj.stop_reason == "error":
        return FailureCause.MODEL_ERROR, f"{stop}: {_line(traj.error)}"
    refused = [s for s in traj.steps if s.refusal is not None]
    if refused:
        last = refused[-1]
        assert last.refusal is not None
        return REFUSAL_CAUSE[last.refusal], f"{last.refusal.value} ({stop}): {_line(last.error)}"
    return FailureCause.NO_FINISH, f"{stop}: {_line(traj.error)}"


def measured(
    traj: Trajectory | None,
    *,
    target: str,
    index: int,
    wall_s: float,
    key: str | None,
    failure: tuple[FailureCause, str] | None,
) -> EvalAttempt:
    """The attempt's row: counts from the trajectory (zeros when there is none)."""
    usage = traj.usage if traj is not None else None
    return EvalAttempt(
        target=target,
        index=index,
        success=failure is None,
        cause=failure[0] if failure else None,
        detail=failure[1][:300] if failure else "",
        turns=usage.turns if usage else 0,
        tool_calls=sum(len(s.tool_calls) for s in traj.steps) if traj else 0,
        prompt_tokens=usage.prompt_tokens if usage else 0,
        completion_tokens=usage.completion_tokens if usage else 0,
        wall_s=round(wall_s, 3),
        step_causes=step_causes(traj) if traj else {},
        trajectory_key=key,
    )


def step_causes(traj: Trajectory) -> dict[str, int]:
    out: dict[str, int] = {}
    for step in traj.steps:
        for cause in step.causes:
            out[cause.value] = out.get(cause.value, 0) + 1
    return out


def _line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0][:200] if (text or "").strip() else ""
