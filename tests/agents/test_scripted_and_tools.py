"""The scripted model, script files, and the sandbox tools' caps and timeouts."""

from __future__ import annotations

import asyncio
import json

import pytest

from envfactory.agents import AgentLoop, SandboxTools, Script, ScriptedModel, Tool, Toolbox
from envfactory.agents.model import CallSpec
from envfactory.agents.tools import ShellArgs, cap_text
from envfactory.core.errors import AgentError
from envfactory.core.models import AgentRole
from envfactory.core.settings import AgentSettings


def test_script_file_errors_name_the_file_and_the_problem(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("turns:\n  - calls:\n      - tool: shell\n")
    with pytest.raises(AgentError) as info:
        Script.load(bad)
    assert "bad.yaml" in str(info.value) and "exactly one of 'args' or 'raw'" in str(info.value)


def test_a_scripted_run_replays_and_round_trips_through_its_trajectory(sandbox, store):
    script = Script.model_validate(
        {
            "turns": [
                {"say": "look", "calls": [{"tool": "shell", "args": {"command": "echo hi"}}]},
                {"calls": [{"tool": "shell", "raw": "{oops"}]},
                {"calls": [{"tool": "done", "args": {}}]},
            ]
        }
    )

    async def done(_args: object) -> object:
        from envfactory.agents import ToolResult

        return ToolResult(observation="bye", finished=True, payload="ok")

    from pydantic import BaseModel

    class NoArgs(BaseModel):
        pass

    def run(s: Script):
        loop = AgentLoop(
            model=ScriptedModel(s),
            toolbox=Toolbox([*SandboxTools(sandbox).tools(), Tool("done", "end", NoArgs, done)]),
            settings=AgentSettings(),
            role=AgentRole.JUDGE,
            store=store,
        )
        return asyncio.run(loop.run("sys", "task"))

    first = run(script)
    again = run(Script.from_trajectory(first.trajectory))
    strip = lambda t: [(s.assistant_text, s.tool_calls, s.observations) for s in t.steps]  # noqa: E731
    assert strip(first.trajectory) == strip(again.trajectory)
    assert "hi" in first.trajectory.steps[0].observations[0]
    assert first.trajectory.usage.prompt_tokens > 0  # estimated offline


def test_a_scripted_model_that_runs_out_of_turns_fails_clearly():
    model = ScriptedModel(
        Script.model_validate({"role": "judge", "seed": "s1", "turns": [{"calls": []}]})
    )
    schema = [{"type": "function", "function": {"name": "x"}}]
    asyncio.run(model.complete([], schema, max_tokens=10, temperature=0, timeout_s=1))
    with pytest.raises(AgentError, match="ran out of turns after 1"):
        asyncio.run(model.complete([], schema, max_tokens=10, temperature=0, timeout_s=1))


def test_shell_output_is_capped_and_a_slow_command_is_killed(sandbox):
    tools = SandboxTools(sandbox, output_cap=200, max_timeout_s=1)
    out = asyncio.run(tools.shell(ShellArgs(command="head -c 5000 /dev/zero | tr '\\0' a")))
    assert "characters cut" in out.observation and len(out.observation) < 400
    slow = asyncio.run(tools.shell(ShellArgs(command="sleep 5", timeout_s=30)))
    assert "timed out after 1s" in slow.observation


def test_a_tool_that_raises_becomes_an_observation(sandbox):
    box = Toolbox(SandboxTools(sandbox).tools())
    res = asyncio.run(box.dispatch(CallSpec("c1", "read_file", json.dumps({"path": "/nope"}))))
    assert res.observation.startswith("error: read_file failed") and res.error


def test_cap_text_keeps_head_and_tail():
    text = "HEAD" + "x" * 1000 + "TAIL"
    out = cap_text(text, 100)
    assert out.startswith("HEAD") and out.endswith("TAIL") and len(out) < 200
