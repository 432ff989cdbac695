"""A scripted model behind the `ChatModel` interface: replays recorded tool calls.

Used by the offline demo and by tests. A script is a list of turns; each turn is what
the model "says" (optional text) and the tool calls it makes, in order:

    role: research
    turns:
      - say: "Look around first."
        calls:
          - {tool: shell, args: {command: "ls -la /"}}
      - calls:
          - {tool: shell, raw: '{"command": '}     # malformed arguments, on purpose
      - calls:
          - {tool: finish, args: {summary: "done"}}

Invariants:
- a request without tools (a compaction summary) is answered with a mechanical summary
  and does not consume a turn, so compaction never desynchronises a replay;
- running out of turns is a terminal `AgentError` naming the script, never a hang;
- usage is reported as a chars/4 estimate so token budgets behave as they do online.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from envfactory.core import bounded_yaml
from envfactory.core.errors import AgentError
from envfactory.core.models import Trajectory

from .model import CallSpec, Completion, Message, ToolSchema
from .tokens import estimate_messages, estimate_text


class ScriptCall(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    args: dict[str, Any] | None = None
    raw: str | None = None  # raw argument text, sent verbatim (e.g. malformed JSON)

    @model_validator(mode="after")
    def _one_of(self) -> ScriptCall:
        if (self.args is None) == (self.raw is None):
            raise ValueError(f"call to {self.tool!r}: give exactly one of 'args' or 'raw'")
        return self

    def arguments(self) -> str:
        return self.raw if self.raw is not None else json.dumps(self.args)


class ScriptTurn(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    say: str = ""
    calls: tuple[ScriptCall, ...] = ()


class Script(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str = ""
    seed: str | None = None
    description: str = ""
    turns: tuple[ScriptTurn, ...] = Field(min_length=1)

    @classmethod
    def load(cls, path: Path) -> Script:
        """Read a YAML or JSON script; errors name the file and the field."""
        try:
            data = bounded_yaml.load(path.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise AgentError(f"{path}: cannot read the script: {exc}") from exc
        try:
            return cls.model_validate(data)
        except ValueError as exc:
            raise AgentError(f"{path}: not a valid agent script: {exc}") from exc

    @classmethod
    def from_trajectory(cls, traj: Trajectory) -> Script:
        """Turn a recorded trajectory back into a script (replay exactly what was done)."""
        turns = [
            ScriptTurn(
                say=step.assistant_text,
                calls=tuple(ScriptCall(tool=c.name, raw=c.arguments) for c in step.tool_calls),
            )
            for step in traj.steps
            if step.meta.get("kind") != "compaction"
        ]
        return cls(role=traj.role.value, turns=tuple(turns))


class ScriptedModel:
    """Replays a `Script` one turn per request."""

    def __init__(self, script: Script, *, name: str = "scripted") -> None:
        self.script = script
        self.name = name
        self.position = 0
        self.requests: list[list[Message]] = []  # what it was sent, for audits in tests

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema] | None,
        *,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> Completion:
        self.requests.append([dict(m) for m in messages])
        prompt = estimate_messages(messages)
        if not tools:
            text = mechanical_summary(messages)
            return Completion(
                text=text, prompt_tokens=prompt, completion_tokens=estimate_text(text)
            )
        if self.position >= len(self.script.turns):
            last = str(messages[-1].get("content") or "")[-1500:] if messages else ""
            raise AgentError(
                f"scripted model ran out of turns after {self.position} "
                f"(script role={self.script.role!r} seed={self.script.seed!r}); "
                f"the last observation was:\n{last}",
                hint="the script never called finish, or a finish was refused; read the trajectory",
            )
        turn = self.script.turns[self.position]
        self.position += 1
        calls = tuple(
            CallSpec(id=f"call_{self.position}_{i}", name=c.tool, arguments=c.arguments())
            for i, c in enumerate(turn.calls)
        )
        out = turn.say + "".join(c.arguments for c in calls)
        return Completion(
            text=turn.say,
            tool_calls=calls,
            prompt_tokens=prompt,
            completion_tokens=estimate_text(out),
            finish_reason="tool_calls" if calls else "stop",
        )


def mechanical_summary(messages: Sequence[Message], limit: int = 4000) -> str:
    """A model-free summary of a transcript: the tool calls made, in order."""
    lines = []
    for m in messages:
        for tc in m.get("tool_calls") or ():
            fn = tc.get("function", {})
            lines.append(f"- called {fn.get('name')}({str(fn.get('arguments'))[:200]})")
    if not lines:  # a rendered transcript (a summary request): keep its head and tail
        body = str(messages[-1].get("content") or "") if messages else ""
        half = limit // 2
        lines = [body if len(body) <= limit else body[:half] + "\n[...]\n" + body[-half:]]
    text = "Earlier steps (mechanical summary):\n" + "\n".join(lines)
    return text[:limit]
