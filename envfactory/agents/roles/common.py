"""What every role shares: building its loop, its finish tool, and storing its trajectory.

Invariants:
- a role's prompts are built only from its input model (the fields it may see), and the
  task text is rendered from that model in one place (`task_text`), so an audit of the
  input model is an audit of what the model was told;
- solver-like roles (judge, red team) snapshot their final state whatever the outcome:
  an exhausted budget is a result for them, not an error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from envfactory.core.errors import BudgetExhausted, EnvFactoryError
from envfactory.core.models import AgentRole, PathChange, StateKind, StateRef, Trajectory
from envfactory.core.settings import AgentSettings
from sandboxes.protocol import Sandbox

from ..loop import AgentLoop, LoopResult
from ..model import ChatModel
from ..prompts import load_prompt
from ..recording import ArtifactSink, put_model
from ..retry import RetryPolicy
from ..tools import SandboxTools, Tool, Toolbox, ToolResult


@dataclass(frozen=True)
class RoleRuntime:
    """The seams every role takes: the model, its settings, the store, an optional policy."""

    model: ChatModel
    settings: AgentSettings
    store: ArtifactSink
    retry: RetryPolicy | None = None


def task_text(title: str, fields: Sequence[tuple[str, str]]) -> str:
    parts = [f"# {title}"]
    parts += [f"## {name}\n{value.strip()}" for name, value in fields if value and value.strip()]
    return "\n\n".join(parts) + "\n"


def finish_tool(
    params: type[BaseModel], fn: Callable[[Any], Awaitable[ToolResult | str]], description: str
) -> Tool:
    return Tool("finish", description, params, fn)


def accept(payload: Any, note: str = "accepted") -> ToolResult:
    return ToolResult(observation=note, finished=True, payload=payload)


async def run_loop(
    rt: RoleRuntime,
    *,
    role: AgentRole,
    prompt_version: str,
    task: str,
    sandbox: Sandbox,
    workdir: str,
    finish: Tool,
    env_id: str | None,
    extra_tools: Sequence[Tool] = (),
) -> tuple[LoopResult | None, Trajectory, BudgetExhausted | None]:
    """Run the loop; a spent budget comes back as the third value, other errors raise."""
    loop = AgentLoop(
        model=rt.model,
        toolbox=Toolbox([]),
        settings=rt.settings,
        role=role,
        store=None,
        env_id=env_id,
        prompt_version=prompt_version,
        retry=rt.retry,
    )
    st = SandboxTools(sandbox, workdir=workdir, remaining_s=loop.remaining_s)
    loop.toolbox = Toolbox([*st.tools(), *extra_tools, finish])
    try:
        res = await loop.run(load_prompt(prompt_version), task)
    except BudgetExhausted as exc:
        return None, exc.trajectory, exc  # type: ignore[attr-defined]
    return res, res.trajectory, None


async def snapshot_final(
    sandbox: Sandbox, *, label: str, env_id: str | None
) -> tuple[StateRef | None, tuple[PathChange, ...], str | None]:
    """Commit the solver's final state and its diff; a failure is recorded, not raised."""
    try:
        ref = await asyncio.to_thread(sandbox.snapshot, StateKind.SOLVER, label, env_id)
        diff = ref.diff or tuple(await asyncio.to_thread(sandbox.diff))
    except EnvFactoryError as exc:
        return None, (), f"snapshot failed: {exc}"
    return ref, tuple(diff), None


def store_trajectory(
    store: ArtifactSink, traj: Trajectory, **update: Any
) -> tuple[Trajectory, str]:
    final = traj.model_copy(update=update) if update else traj
    return final, put_model(store, final)
