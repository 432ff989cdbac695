"""The judge: attempts the task from the instruction alone, to prove it is solvable.

`JudgeInput` holds exactly what a solver may see: the instruction and where to work.
The caller hands in a *fresh* sandbox started from the environment image. Whatever the
outcome (finished, or budget spent), the final state is snapshotted as a solver
`StateRef`, so the verifier can score it and shortcut mining can inspect it.
"""

from __future__ import annotations

from typing import Self

from pydantic import Field

from envfactory.core.models import AgentRole, EnvironmentSpec, Model, StateRef, Trajectory, Usage
from envfactory.core.models.base import NonEmpty
from sandboxes.protocol import Sandbox

from ..tools import ToolResult, _Args
from .common import (
    RoleRuntime,
    accept,
    finish_tool,
    run_loop,
    snapshot_final,
    store_trajectory,
    task_text,
)

PROMPT_VERSION = "judge.v1"


class JudgeInput(Model):
    env_id: str
    instruction: NonEmpty
    workdir: str = "/workspace"

    @classmethod
    def from_spec(cls, spec: EnvironmentSpec) -> Self:
        return cls(env_id=spec.id, instruction=spec.instruction, workdir=spec.workdir)


class JudgeFinish(_Args):
    summary: str = Field(description="what you did and what you found")
    solved: bool = Field(description="true only if every requirement of the task is met")


class SolverResult(Model):
    """A judge's or red-teamer's attempt: the stored trajectory and the saved final state."""

    role: AgentRole
    env_id: str
    trajectory_id: str
    trajectory_key: str
    final_state: StateRef | None
    claimed_solved: bool
    summary: str = ""
    stop_reason: str
    usage: Usage
    shortcut: str = ""  # red team only: the shortcut it tried


def judge_task(inp: JudgeInput) -> str:
    return task_text(
        "Task", [("Instruction", inp.instruction), ("Where", f"Work in {inp.workdir}.")]
    )


async def run_judge(inp: JudgeInput, *, rt: RoleRuntime, sandbox: Sandbox) -> SolverResult:
    async def on_finish(args: JudgeFinish) -> ToolResult:
        return accept(args, "recorded; the episode ends now")

    res, traj, spent = await run_loop(
        rt,
        role=AgentRole.JUDGE,
        prompt_version=PROMPT_VERSION,
        task=judge_task(inp),
        sandbox=sandbox,
        workdir=inp.workdir,
        env_id=inp.env_id,
        finish=finish_tool(JudgeFinish, on_finish, "End the attempt and say whether it is solved."),
    )
    payload = res.payload if res is not None else None
    return await finish_attempt(
        rt,
        sandbox,
        traj,
        role=AgentRole.JUDGE,
        env_id=inp.env_id,
        claimed=bool(payload.solved) if payload is not None else False,
        summary=payload.summary if payload is not None else f"no finish: {spent}",
    )


async def finish_attempt(
    rt: RoleRuntime,
    sandbox: Sandbox,
    traj: Trajectory,
    *,
    role: AgentRole,
    env_id: str,
    claimed: bool,
    summary: str,
    shortcut: str = "",
) -> SolverResult:
    """Snapshot a solver's final state, store its trajectory, and say what it did: the
    judge's and the red team's shared ending, whatever the episode's outcome."""
    state, diff, snap_err = await snapshot_final(sandbox, label=role.value, env_id=env_id)
    traj, key = store_trajectory(
        rt.store,
        traj,
        final_state=state,
        diff=diff,
        claimed_solved=claimed,
        summary=summary,
        error=traj.error or snap_err,
    )
    return SolverResult(
        role=role,
        env_id=env_id,
        trajectory_id=traj.id,
        trajectory_key=key,
        final_state=state,
        claimed_solved=claimed,
        summary=summary,
        stop_reason=traj.stop_reason or "",
        usage=traj.usage,
        shortcut=shortcut,
    )
