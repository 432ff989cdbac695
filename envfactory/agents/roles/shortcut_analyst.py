"""The shortcut analyst: reads one rewarded trajectory with its state diff and the
verifier, and reports the shortcuts it sees as structured findings.

It runs after the model-free mining rules (the cheap first pass). It acts on nothing: its
only tool is `finish`, whose arguments are the report (`AnalystReport`), validated by
pydantic. An invalid report is sent back with the validation errors and the analyst tries
again, at most `attempts` times; after that the attempt is recorded as failed (a result,
never an exception), so a malformed model cannot stop the pipeline.

Invariants:
- what the analyst sees is exactly its input model, rendered in one place
  (`analyst_task`): the instruction, the verifier, the trajectory and its diff — never the
  reference solution;
- every run, finished or failed, leaves its own trajectory (role `shortcut_analyst`),
  from which the report can be read back (`report_from_trajectory`), so a retried activity
  reuses it instead of asking the model twice.
"""

from __future__ import annotations

import json

from pydantic import Field, ValidationError

from envfactory.core.errors import AgentError, AgentRetryable
from envfactory.core.models import AgentRole, Model, Trajectory
from envfactory.core.models.base import NonEmpty

from ..loop import AgentLoop
from ..prompts import load_prompt
from ..tools import Tool, Toolbox, ToolResult, _Args, cap_text
from .common import RoleRuntime, accept, store_trajectory, task_text
from .verifier_writer import VerifierFileText

PROMPT_VERSION = "shortcut_analyst.v1"
_RULE = r"^[a-z0-9][a-z0-9-]{1,62}$"


class ReportedFinding(_Args):
    rule: str = Field(pattern=_RULE, description="short kebab-case name of the shortcut")
    rationale: str = Field(min_length=10, description="why the reward was not earned")
    weakness: str = Field(min_length=5, description="what in the verifier let it pass")
    step_indexes: list[int] = Field(default_factory=list, description="steps that show it")


class AnalystReport(_Args):
    findings: list[ReportedFinding] = Field(default_factory=list, max_length=10)
    summary: str = ""


class ShortcutAnalystInput(Model):
    """Everything the analyst may see about one rewarded trajectory."""

    env_id: str
    instruction: NonEmpty
    verifier_entry: str
    verifier_files: tuple[VerifierFileText, ...] = ()
    trajectory: Trajectory
    #: rules that already fired on this trajectory ("edits-tests: …"), one line each
    rule_findings: tuple[str, ...] = ()
    #: caps on what is rendered (a long trajectory must not overflow the context)
    max_file_chars: int = 8_000
    max_observation_chars: int = 1_500


class AnalystResult(Model):
    trajectory_id: str  # the analysed trajectory
    analysis: Trajectory  # the analyst's own run
    analysis_key: str
    report: AnalystReport | None = None
    failure: str | None = None  # why no valid report came back


def _steps_text(inp: ShortcutAnalystInput) -> str:
    lines = []
    for step in inp.trajectory.steps:
        if step.assistant_text.strip():
            lines.append(f"[step {step.index}] said: {cap_text(step.assistant_text, 1000)}")
        for call, obs in zip(step.tool_calls, (*step.observations, *([""] * 99)), strict=False):
            lines.append(f"[step {step.index}] {call.name}({cap_text(call.arguments, 2000)})")
            if obs:
                lines.append(cap_text(obs, inp.max_observation_chars))
    return "\n".join(lines) or "(no steps)"


def analyst_task(inp: ShortcutAnalystInput) -> str:
    """The one rendering of what the analyst is shown."""
    files = "\n\n".join(
        f"### {f.path}\n```\n{cap_text(f.content, inp.max_file_chars)}\n```"
        for f in inp.verifier_files
    )
    traj = inp.trajectory
    changes = traj.diff or (traj.final_state.diff if traj.final_state else ())
    diff = "\n".join(f"{c.kind} {c.path}" for c in changes) or "(no changes)"
    return task_text(
        "Rewarded trajectory to audit",
        [
            ("Instruction the agent was given", inp.instruction),
            ("Verifier entry command", inp.verifier_entry),
            ("Verifier files", files),
            (f"Trajectory {inp.trajectory.id} ({inp.trajectory.role.value})", _steps_text(inp)),
            ("State diff of its final state", diff),
            ("Rules that already flagged it", "\n".join(inp.rule_findings) or "(none)"),
        ],
    )


def _finish_tool(inp: ShortcutAnalystInput) -> Tool:
    known = {s.index for s in inp.trajectory.steps}

    async def on_finish(report: AnalystReport) -> ToolResult:
        bad = sorted({i for f in report.findings for i in f.step_indexes} - known)
        if bad:
            text = f"step_indexes {bad} are not steps of the trajectory (it has {sorted(known)})"
            return ToolResult(observation="error: " + text, error=text)
        return accept(report, "report recorded")

    return Tool(
        "finish", "Report the shortcuts found (an empty list if none).", AnalystReport, on_finish
    )


async def run_shortcut_analyst(
    inp: ShortcutAnalystInput, *, rt: RoleRuntime, attempts: int
) -> AnalystResult:
    """One analysis; an invalid or missing report after `attempts` turns is a recorded
    failure. Only an endpoint that stays unreachable raises (the activity retries it)."""
    cfg = rt.settings.model_copy(update={"max_turns": min(rt.settings.max_turns, attempts)})
    loop = AgentLoop(
        model=rt.model,
        toolbox=Toolbox([_finish_tool(inp)]),
        settings=cfg,
        role=AgentRole.SHORTCUT_ANALYST,
        env_id=inp.env_id,
        prompt_version=PROMPT_VERSION,
        retry=rt.retry,
    )
    try:
        res = await loop.run(load_prompt(PROMPT_VERSION), analyst_task(inp))
    except AgentRetryable:
        raise
    except AgentError as exc:
        traj: Trajectory = exc.trajectory  # type: ignore[attr-defined]
        traj, key = store_trajectory(rt.store, traj, summary=f"no valid report: {exc.message}")
        return AnalystResult(
            trajectory_id=inp.trajectory.id, analysis=traj, analysis_key=key, failure=exc.message
        )
    report: AnalystReport = res.payload
    traj, key = store_trajectory(rt.store, res.trajectory, summary=report.summary)
    return AnalystResult(
        trajectory_id=inp.trajectory.id, analysis=traj, analysis_key=key, report=report
    )


def report_from_trajectory(analysis: Trajectory) -> AnalystReport | None:
    """The report an analyst's stored run accepted (its last finish call), or None."""
    if analysis.stop_reason != "finished":
        return None
    for step in reversed(analysis.steps):
        for call in reversed(step.tool_calls):
            if call.name != "finish":
                continue
            try:
                return AnalystReport.model_validate(json.loads(call.arguments))
            except (ValueError, ValidationError):
                continue  # a refused call before the accepted one
    return None
