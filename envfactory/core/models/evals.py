"""Agent evals: how well one role does on a set of seeds or environments, per attempt.

An `EvalRun` is one `envfactory agents eval`: a role, the model it talked to, and every
attempt (target × k). A failed attempt carries exactly one `FailureCause`, decided from
types (the trajectory's stop cause, the finish tool's last refusal, the gate verdict, the
observed reward), never from message text. Totals are derived, not stored twice.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import Field

from .base import Model, utcnow
from .trajectories import AgentRole


class FailureCause(StrEnum):
    """Why an attempt failed: one closed vocabulary for every role."""

    NO_FINISH = "no_finish"  # a budget ran out and finish was never called
    INVALID_OUTPUT = "invalid_output"  # finish was called, never with a valid payload
    BUILD_FAILED = "build_failed"  # research: the last finish's image did not build
    REFERENCE_FAILED = "reference_failed"  # research: the reference solution does not pass
    PARTIAL_FAILED = "partial_failed"  # research: a partial solution does not apply
    VERIFIER_REFUSED = "verifier_refused"  # verifier: its finish check refused (no-op passes…)
    GATES_REJECTED = "gates_rejected"  # verifier: accepted, then rejected by the gates
    NOT_REWARDED = "not_rewarded"  # judge / red team: finished, the verifier gave 0
    MODEL_ERROR = "model_error"  # the endpoint failed or refused past the retries
    SANDBOX_ERROR = "sandbox_error"  # Docker failed under the attempt (not the model's fault)
    SETUP_FAILED = "setup_failed"  # the target could not be prepared (no environment, …)


class EvalAttempt(Model):
    target: str  # the seed's directory name, or the environment id
    index: int = Field(ge=0)  # 0 … k-1
    success: bool
    cause: FailureCause | None = None  # set exactly when success is False
    detail: str = ""  # one line for people (the last refusal, the gate reasons, …)
    turns: int = 0
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    #: how often each `StepCause` occurred (malformed arguments, retries, compactions, …)
    step_causes: dict[str, int] = Field(default_factory=dict)
    trajectory_key: str | None = None  # the stored trajectory, for `agents eval show`


class EvalTotals(Model):
    attempts: int
    successes: int
    success_rate: float
    turns: float  # means per attempt
    tool_calls: float
    prompt_tokens: int  # sums
    completion_tokens: int
    wall_s: float
    causes: dict[str, int]  # failure cause → count
    step_causes: dict[str, int]  # step cause → count over every attempt's turns


class EvalRun(Model):
    id: str
    role: AgentRole
    model: str
    base_url: str | None = None
    k: int = Field(ge=1)
    source: str  # the seeds directory, or "store"
    attempts: tuple[EvalAttempt, ...] = ()
    created_at: datetime = Field(default_factory=utcnow)

    def targets(self) -> list[str]:
        return list(dict.fromkeys(a.target for a in self.attempts))

    def totals(self, target: str | None = None) -> EvalTotals:
        rows = [a for a in self.attempts if target is None or a.target == target]
        n = len(rows) or 1
        causes: dict[str, int] = {}
        steps: dict[str, int] = {}
        for a in rows:
            if a.cause is not None:
                causes[a.cause.value] = causes.get(a.cause.value, 0) + 1
            for name, count in a.step_causes.items():
                steps[name] = steps.get(name, 0) + count
        ok = sum(a.success for a in rows)
        return EvalTotals(
            attempts=len(rows),
            successes=ok,
            success_rate=round(ok / n, 4),
            turns=round(sum(a.turns for a in rows) / n, 2),
            tool_calls=round(sum(a.tool_calls for a in rows) / n, 2),
            prompt_tokens=sum(a.prompt_tokens for a in rows),
            completion_tokens=sum(a.completion_tokens for a in rows),
            wall_s=round(sum(a.wall_s for a in rows), 3),
            causes=causes,
            step_causes=steps,
        )
