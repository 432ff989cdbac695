"""Recording agent runs: trajectory steps collected during a run, stored as JSON artifacts.

The artifact store is reached through a two-method protocol (`put_bytes`, `get`) that
`envfactory.store.ArtifactStore` implements; keys are sha256 hex of the stored bytes, so
the database and Temporal payloads carry keys, never trajectories.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from envfactory.core.models import (
    AgentRole,
    FinishRefusal,
    StepCause,
    StopCause,
    ToolCall,
    Trajectory,
    TrajectoryStep,
    Usage,
    new_id,
)

from .model import CallSpec, Completion

M = TypeVar("M", bound=BaseModel)


class ArtifactSink(Protocol):
    def put_bytes(self, data: bytes) -> str: ...

    def get(self, key: str) -> bytes: ...


def put_model(sink: ArtifactSink, model: BaseModel) -> str:
    return sink.put_bytes(model.model_dump_json(indent=1).encode())


def get_model(sink: ArtifactSink, key: str, cls: type[M]) -> M:
    return cls.model_validate_json(sink.get(key))


@dataclass
class Recorder:
    """Collects the steps of one run and turns them into a frozen `Trajectory`."""

    role: AgentRole
    model: str
    env_id: str | None = None
    prompt_version: str | None = None
    clock: Callable[[], float] = time.monotonic
    steps: list[TrajectoryStep] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    turns: int = 0
    system_prompt: str = ""
    task_prompt: str = ""

    def __post_init__(self) -> None:
        self.started = self.clock()
        self.id = new_id("traj")

    def add_usage(self, prompt: int, completion: int) -> None:
        self.prompt_tokens += prompt
        self.completion_tokens += completion

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def turn(
        self,
        completion: Completion,
        *,
        prompt_tokens: int,
        completion_tokens: int,
        latency_s: float,
        observations: list[str],
        errors: list[str],
        meta: dict[str, Any],
        causes: tuple[StepCause, ...] = (),
        refusal: FinishRefusal | None = None,
    ) -> None:
        self.turns += 1
        self.steps.append(
            TrajectoryStep(
                index=len(self.steps),
                assistant_text=completion.text,
                tool_calls=tuple(_tool_call(c) for c in completion.tool_calls),
                observations=tuple(observations),
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                latency_s=round(latency_s, 4),
                error="; ".join(errors) or None,
                causes=causes,
                refusal=refusal,
                meta=meta,
            )
        )

    def note(
        self,
        text: str,
        *,
        meta: dict[str, Any],
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        latency_s: float = 0.0,
        causes: tuple[StepCause, ...] = (),
    ) -> None:
        """A step that is not a model turn (compaction, a refused request)."""
        self.steps.append(
            TrajectoryStep(
                index=len(self.steps),
                assistant_text=text,
                causes=causes,
                meta=meta,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                latency_s=round(latency_s, 4),
            )
        )

    def build(
        self,
        *,
        stop_reason: str,
        summary: str = "",
        error: str | None = None,
        claimed_solved: bool | None = None,
        stop_cause: StopCause | None = None,
    ) -> Trajectory:
        return Trajectory(
            id=self.id,
            role=self.role,
            env_id=self.env_id,
            model=self.model,
            steps=tuple(self.steps),
            usage=Usage(
                prompt_tokens=self.prompt_tokens,
                completion_tokens=self.completion_tokens,
                turns=self.turns,
                wall_s=round(self.clock() - self.started, 3),
            ),
            summary=summary,
            claimed_solved=claimed_solved,
            system_prompt=self.system_prompt,
            task_prompt=self.task_prompt,
            prompt_version=self.prompt_version,
            stop_reason=stop_reason,  # type: ignore[arg-type]
            stop_cause=stop_cause,
            error=error,
        )


def _tool_call(c: CallSpec) -> ToolCall:
    return ToolCall(id=c.id, name=c.name, arguments=c.arguments)
