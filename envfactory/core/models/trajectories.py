"""Agent trajectories: every step an agent took, for mining and for the record."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from .base import Model, utcnow
from .sandbox import PathChange, StateRef


class AgentRole(StrEnum):
    """Who acted. One spelling everywhere: the settings section (`settings.agents.<role>`,
    ENVFACTORY_AGENTS__RED_TEAM__…), the scripts (`<seed>/<role>.yaml`), the prompts, the
    CLI and the stored trajectories."""

    RESEARCH = "research"
    JUDGE = "judge"
    VERIFIER = "verifier"
    RED_TEAM = "red_team"
    #: reads a rewarded trajectory, its state diff and the verifier; reports shortcuts
    SHORTCUT_ANALYST = "shortcut_analyst"
    RL = "rl"

    @classmethod
    def _missing_(cls, value: object) -> AgentRole | None:
        # trajectories and workflow histories stored before the spelling was one say
        # "red-team"; they still read back
        return cls.RED_TEAM if value == "red-team" else None


#: the roles the pipeline runs, each with its own model settings and scripts
PIPELINE_ROLES = (AgentRole.RESEARCH, AgentRole.JUDGE, AgentRole.VERIFIER, AgentRole.RED_TEAM)
#: roles with their own model settings whose scripts are optional: a scripted analyst
#: with no script for a seed reports nothing (the regex rules still run)
OPTIONAL_ROLES = (AgentRole.SHORTCUT_ANALYST,)
#: every role that has model settings (`settings.agents.<role>`)
MODEL_ROLES = (*PIPELINE_ROLES, *OPTIONAL_ROLES)


class StepCause(StrEnum):
    """What went wrong in one turn, recorded in `TrajectoryStep.causes` (decide on these,
    never on observation text). A turn may carry several."""

    NO_TOOL_CALL = "no_tool_call"  # text only; the model was nudged back to the tools
    MALFORMED_ARGUMENTS = "malformed_arguments"  # not JSON, or not a JSON object
    INVALID_ARGUMENTS = "invalid_arguments"  # JSON that misses or mistypes fields
    UNKNOWN_TOOL = "unknown_tool"
    TOOL_FAILED = "tool_failed"  # the tool raised (the sandbox, a bug); told to the model
    FINISH_REFUSED = "finish_refused"  # the finish tool's check refused (`refusal` says why)
    REPEATED_FAILURE = "repeated_failure"  # the same failing call again; the model was warned
    TRUNCATED = "truncated"  # the reply was cut at max_tokens (finish_reason=length)
    RETRIED = "retried"  # the request failed (timeout, dropped connection, 5xx) and was retried
    COMPACTED = "compacted"  # the history neared the window and was summarised


class FinishRefusal(StrEnum):
    """Why a finish tool refused its payload (recorded as the step's `refusal`)."""

    INVALID_OUTPUT = "invalid_output"  # the payload failed validation
    NO_BUILD_CONTEXT = "no_build_context"  # research: no Dockerfile / unreadable context
    BUILD_FAILED = "build_failed"  # research: the image did not build
    REFERENCE_FAILED = "reference_failed"  # research: a reference step failed (or changed nothing)
    PARTIAL_FAILED = "partial_failed"  # research: a partial solution's step failed
    UNSAFE_ENTRY = "unsafe_entry"  # verifier: the entry command is not safe to run
    NO_FILES = "no_files"  # verifier: nothing (or too much) under the verifier directory
    PASSES_NOOP = "passes_noop"  # verifier: exits 0 on the untouched environment


class StopCause(StrEnum):
    """Why a run that did not finish stopped (`Trajectory.stop_cause`)."""

    TURN_BUDGET = "turn_budget"
    TOKEN_BUDGET = "token_budget"
    WALL_TIME = "wall_time"
    STUCK = "stuck"  # the same failing turn, or text without a tool call, stuck_after times
    ENDPOINT_FAILED = "endpoint_failed"  # retries spent on timeouts, drops, 429/5xx
    ENDPOINT_REFUSED = "endpoint_refused"  # a non-retryable answer (400/401/404, no script)
    CONTEXT_TOO_LONG = "context_too_long"  # refused for length even after compaction


class ToolCall(Model):
    id: str
    name: str
    arguments: str  # raw JSON text as the model sent it (may be malformed)


class TrajectoryStep(Model):
    index: int
    assistant_text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    observations: tuple[str, ...] = ()  # one per tool call, in order
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None
    causes: tuple[StepCause, ...] = ()
    refusal: FinishRefusal | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class Usage(Model):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    turns: int = 0
    wall_s: float = 0.0


class Trajectory(Model):
    id: str
    role: AgentRole
    env_id: str | None = None
    model: str = ""
    steps: tuple[TrajectoryStep, ...] = ()
    final_state: StateRef | None = None
    diff: tuple[PathChange, ...] = ()
    usage: Usage = Usage()
    claimed_solved: bool | None = None
    summary: str = ""
    reward: int | None = None  # filled in by verification, 0 or 1
    system_prompt: str = ""  # exactly what the model was told, for audits (inputs_seen)
    task_prompt: str = ""
    prompt_version: str | None = None  # "judge.v1"
    stop_reason: Literal["finished", "budget", "error"] | None = None
    stop_cause: StopCause | None = None  # set when stop_reason is budget or error
    error: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
