"""How real models misbehave, each on the local chat-completions server: every case ends in
a bounded number of turns, with its cause recorded on the trajectory as a type
(`StepCause` on the turn, `StopCause` on the run), and none crashes the role."""

from __future__ import annotations

import asyncio
import json

import pytest
from agent_loops import make_loop

from envfactory.agents import AgentLoop, OpenAIChatModel
from envfactory.agents.chat_server import (
    Reply,
    dropped_reply,
    error_reply,
    text_reply,
    tool_reply,
)
from envfactory.agents.model import ContextTooLong
from envfactory.agents.recording import get_model
from envfactory.agents.roles import JudgeInput, RoleRuntime, run_judge
from envfactory.core.errors import AgentRetryable, BudgetExhausted
from envfactory.core.models import StepCause, StopCause, Trajectory


def run(loop: AgentLoop):
    return asyncio.run(loop.run("system prompt", "do the task"))


FINISH = tool_reply(("finish", {"summary": "done"}))


def _causes(traj: Trajectory) -> list[list[StepCause]]:
    return [list(s.causes) for s in traj.steps]


def test_arguments_not_json_or_missing_fields_are_recorded_and_the_run_goes_on(
    server, settings_for, sandbox, store, retry
):
    server.push(
        tool_reply(("shell", '{"command": "ls')),
        tool_reply(("shell", "[1, 2]")),
        tool_reply(("shell", {"cmd": "ls"})),
        tool_reply(("finish", {})),  # a finish that misses its field is refused
        FINISH,
    )
    res = run(make_loop(server, settings_for(server), sandbox, store, retry))
    causes = _causes(res.trajectory)
    assert causes[:4] == [
        [StepCause.MALFORMED_ARGUMENTS],
        [StepCause.MALFORMED_ARGUMENTS],
        [StepCause.INVALID_ARGUMENTS],
        [StepCause.INVALID_ARGUMENTS],
    ]
    assert res.trajectory.steps[3].refusal == "invalid_output"
    assert sandbox.commands == []  # nothing malformed ever ran
    assert res.payload.summary == "done" and res.trajectory.usage.turns == 5


def test_an_unknown_tool_is_recorded_and_answered_with_the_tool_list(
    server, settings_for, sandbox, store, retry
):
    server.push(tool_reply(("browse_web", {"url": "x"})), FINISH)
    res = run(make_loop(server, settings_for(server), sandbox, store, retry))
    assert _causes(res.trajectory)[0] == [StepCause.UNKNOWN_TOOL]
    assert "the tools are: shell" in res.trajectory.steps[0].observations[0]


def test_text_without_a_tool_call_is_nudged_and_a_model_that_only_talks_is_stopped(
    server, settings_for, sandbox, store, retry
):
    server.push(*[text_reply("Let me think about this.")] * 30)
    settings = settings_for(server, max_turns=30, stuck_after=3)
    with pytest.raises(BudgetExhausted) as info:
        run(make_loop(server, settings, sandbox, store, retry))
    traj = get_model(store, info.value.trajectory_key, Trajectory)
    assert traj.stop_reason == "budget" and traj.stop_cause == StopCause.STUCK
    assert traj.usage.turns == 3 and len(server.requests) == 3  # not 30
    assert all(StepCause.NO_TOOL_CALL in c for c in _causes(traj))


def test_the_same_failing_command_is_warned_about_then_ends_the_run_as_stuck(
    server, settings_for, sandbox, store, retry
):
    server.push(*[tool_reply(("shell", {"command": "exit 3"}))] * 30)
    settings = settings_for(server, max_turns=30, stuck_after=4)
    with pytest.raises(BudgetExhausted) as info:
        run(make_loop(server, settings, sandbox, store, retry))
    traj = get_model(store, info.value.trajectory_key, Trajectory)
    assert traj.stop_cause == StopCause.STUCK and traj.usage.turns == 4
    assert _causes(traj) == [[]] + [[StepCause.REPEATED_FAILURE]] * 3
    warned = server.requests[2]["messages"][-1]
    assert warned["role"] == "user" and "same failing call" in warned["content"]


def test_a_changed_command_after_a_failure_is_not_a_repeat(
    server, settings_for, sandbox, store, retry
):
    server.push(
        tool_reply(("shell", {"command": "exit 3"})),
        tool_reply(("shell", {"command": "exit 4"})),
        tool_reply(("shell", {"command": "exit 3"})),
        FINISH,
    )
    res = run(make_loop(server, settings_for(server, stuck_after=2), sandbox, store, retry))
    assert all(StepCause.REPEATED_FAILURE not in c for c in _causes(res.trajectory))


def test_a_reply_cut_at_max_tokens_runs_none_of_its_calls_and_says_so(
    server, settings_for, sandbox, store, retry
):
    cut = tool_reply(
        ("write_file", '{"path": "/workspace/big.py", "content": "print(1)\\nprint('),
        finish_reason="length",
    )
    server.push(cut, text_reply("and then", finish_reason="length"), FINISH)
    res = run(make_loop(server, settings_for(server, max_tokens=256), sandbox, store, retry))
    first, second = res.trajectory.steps[0], res.trajectory.steps[1]
    assert first.causes == (StepCause.TRUNCATED,) and "not executed" in first.observations[0]
    assert StepCause.TRUNCATED in second.causes
    assert not (sandbox.root / "workspace/big.py").exists()
    told = server.requests[1]["messages"]
    assert told[-2]["role"] == "tool" and told[-2]["tool_call_id"] == "call_0"
    assert told[-1]["role"] == "user" and "max_tokens limit (256 tokens)" in told[-1]["content"]
    assert res.trajectory.steps[0].meta["finish_reason"] == "length"


def test_a_context_refused_as_too_long_is_compacted_and_the_run_goes_on(
    server, settings_for, sandbox, store, retry
):
    server.push(
        *[tool_reply(("shell", {"command": f"echo step{i}"})) for i in range(4)],
        error_reply(400, "This model's maximum context length is 8192 tokens"),
        FINISH,
    )
    res = run(make_loop(server, settings_for(server), sandbox, store, retry, keep_recent=1))
    kinds = [s.meta.get("kind") for s in res.trajectory.steps]
    assert kinds.count("compaction") == 1
    compaction = res.trajectory.steps[kinds.index("compaction")]
    assert compaction.causes == (StepCause.COMPACTED,)
    assert res.payload.summary == "done"


def test_a_context_still_too_long_after_compaction_stops_with_its_cause(
    server, settings_for, sandbox, store, retry
):
    server.push(
        *[tool_reply(("shell", {"command": f"echo step{i}"})) for i in range(3)],
        *[error_reply(400, "context length exceeded: prompt too long")] * 2,
    )
    with pytest.raises(ContextTooLong) as info:
        run(make_loop(server, settings_for(server), sandbox, store, retry, keep_recent=1))
    traj = get_model(store, info.value.trajectory_key, Trajectory)
    assert traj.stop_reason == "error" and traj.stop_cause == StopCause.CONTEXT_TOO_LONG
    assert len([r for r in server.requests if r.get("tools")]) == 5


def test_a_connection_dropped_mid_response_is_retried_and_recorded(
    server, settings_for, sandbox, store, retry
):
    server.push(dropped_reply(after=30), FINISH)
    res = run(make_loop(server, settings_for(server), sandbox, store, retry))
    step = res.trajectory.steps[0]
    assert step.causes[0] == StepCause.RETRIED and len(step.meta["retries"]) == 1
    assert res.payload.summary == "done" and len(server.requests) == 2


def test_an_endpoint_that_keeps_dropping_or_stalling_ends_with_the_trajectory_stored(
    server, settings_for, sandbox, store, retry
):
    server.push(
        dropped_reply(after=10),
        Reply(body={"late": True}, delay_s=1.5),
        dropped_reply(after=0),
        dropped_reply(after=60),
    )
    settings = settings_for(server, request_timeout_s=0.5)
    with pytest.raises(AgentRetryable) as info:
        run(make_loop(server, settings, sandbox, store, retry))
    traj = get_model(store, info.value.trajectory_key, Trajectory)
    assert traj.stop_cause == StopCause.ENDPOINT_FAILED and traj.usage.turns == 0
    assert len(server.requests) == 4  # one try and three retries, no more


def test_a_stuck_judge_is_a_result_with_its_state_saved_not_a_crash(
    server, settings_for, sandbox, store
):
    server.push(*[tool_reply(("shell", {"command": "cat missing.txt"}))] * 10)
    settings = settings_for(server, stuck_after=3)
    rt = RoleRuntime(
        model=OpenAIChatModel(name="local-test", api_key="k", base_url=server.url),
        settings=settings,
        store=store,
    )
    inp = JudgeInput(env_id="env-1", instruction="Make total.txt hold the sum.")
    res = asyncio.run(run_judge(inp, rt=rt, sandbox=sandbox))
    traj = get_model(store, res.trajectory_key, Trajectory)
    assert res.stop_reason == "budget" and traj.stop_cause == StopCause.STUCK
    assert res.final_state is not None and res.claimed_solved is False
    assert json.loads(traj.steps[-1].tool_calls[0].arguments)["command"] == "cat missing.txt"
