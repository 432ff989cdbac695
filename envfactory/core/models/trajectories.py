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
    error: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
