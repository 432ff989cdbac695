"""The agent loop against a real local chat-completions server (no patched client)."""

from __future__ import annotations

import asyncio
import json

import pytest
from agent_loops import make_loop

from envfactory.agents import AgentLoop
from envfactory.agents.chat_server import Reply, error_reply, text_reply, tool_reply
from envfactory.agents.recording import get_model
from envfactory.core.errors import AgentError, AgentRetryable, BudgetExhausted
from envfactory.core.models import Trajectory


def run(loop: AgentLoop, task: str = "do the task"):
    return asyncio.run(loop.run("system prompt", task))


def test_tool_calls_run_in_the_sandbox_and_finish_ends_the_run(
    server, settings_for, sandbox, store, retry
):
    server.push(
        tool_reply(("write_file", {"path": "/workspace/a.txt", "content": "hello"})),
        tool_reply(("shell", {"command": "cat a.txt && echo done"})),
        tool_reply(("finish", {"summary": "wrote and read a.txt"})),
    )
    res = run(make_loop(server, settings_for(server), sandbox, store, retry))
    assert res.payload.summary == "wrote and read a.txt"
    assert (sandbox.root / "workspace/a.txt").read_text() == "hello"
    traj = get_model(store, res.trajectory_key, Trajectory)
    assert traj == res.trajectory and traj.stop_reason == "finished"
    assert [s.tool_calls[0].name for s in traj.steps] == ["write_file", "shell", "finish"]
    assert "exit_code: 0" in traj.steps[1].observations[0]
    assert "hello" in traj.steps[1].observations[0]
    assert traj.usage.turns == 3 and traj.usage.prompt_tokens == 300
    assert len(traj.steps[1].meta["tool_s"]) == 1  # tool latency is recorded per call
    # the tool results went back to the model as tool messages with matching ids
    last = server.requests[-1]["messages"]
    assert last[-1]["role"] == "tool" and last[-1]["tool_call_id"] == "call_0"
    assert {t["function"]["name"] for t in server.requests[0]["tools"]} == {
        "shell",
        "read_file",
        "write_file",
        "list_dir",
        "finish",
    }


def test_plain_text_answer_is_nudged_back_to_the_tools(server, settings_for, sandbox, store, retry):
    server.push(text_reply("I think I am done."), tool_reply(("finish", {"summary": "s"})))
    res = run(make_loop(server, settings_for(server), sandbox, store, retry))
    assert res.trajectory.steps[0].assistant_text == "I think I am done."
    assert res.trajectory.steps[0].tool_calls == ()
    second = server.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "I think I am done."}
    assert second[-1]["role"] == "user" and "finish" in second[-1]["content"]


def test_rate_limit_is_retried_after_the_servers_retry_after(
    server, settings_for, sandbox, store, retry, sleeper
):
    server.push(
        error_reply(429, "slow down", retry_after=1.5), tool_reply(("finish", {"summary": "s"}))
    )
    res = run(make_loop(server, settings_for(server), sandbox, store, retry))
    assert len(server.requests) == 2  # the SDK itself did not retry (max_retries=0)
    assert sleeper.delays == [1.5]
    assert "429" in res.trajectory.steps[0].meta["retries"][0]


def test_server_errors_are_retried_with_backoff_then_give_up(
    server, settings_for, sandbox, store, retry, sleeper
):
    server.push(*[error_reply(500, "boom")] * 4)
    with pytest.raises(AgentRetryable) as info:
        run(make_loop(server, settings_for(server), sandbox, store, retry))
    assert len(server.requests) == 4  # 1 try + 3 retries
    assert len(sleeper.delays) == 3 and sleeper.delays[0] < sleeper.delays[1] < sleeper.delays[2]
    traj = get_model(store, info.value.trajectory_key, Trajectory)
    assert traj.stop_reason == "error" and "500" in (traj.error or "")


def test_a_500_then_success_continues_the_run(server, settings_for, sandbox, store, retry):
    server.push(error_reply(503), tool_reply(("finish", {"summary": "s"})))
    res = run(make_loop(server, settings_for(server), sandbox, store, retry))
    assert res.payload.summary == "s" and len(server.requests) == 2


def test_a_client_error_is_terminal_and_not_retried(server, settings_for, sandbox, store, retry):
    server.push(error_reply(401, "bad key"), tool_reply(("finish", {"summary": "s"})))
    with pytest.raises(AgentError) as info:
        run(make_loop(server, settings_for(server), sandbox, store, retry))
    assert not isinstance(info.value, AgentRetryable)
    assert len(server.requests) == 1 and "bad key" in str(info.value)


def test_malformed_tool_arguments_come_back_as_an_observation(
    server, settings_for, sandbox, store, retry
):
    server.push(
        tool_reply(("shell", '{"command": "ls'), ("no_such_tool", {}), ("shell", {"cmd": "ls"})),
        tool_reply(("finish", {"summary": "recovered"})),
    )
    res = run(make_loop(server, settings_for(server), sandbox, store, retry))
    obs = res.trajectory.steps[0].observations
    assert obs[0].startswith("error:") and "not valid JSON" in obs[0]
    assert "unknown tool 'no_such_tool'" in obs[1]
    assert "command" in obs[2] and "Field required" in obs[2]
    assert res.trajectory.steps[0].tool_calls[0].arguments == '{"command": "ls'
    assert res.trajectory.steps[0].error is not None
    assert res.payload.summary == "recovered"


def test_a_response_slower_than_the_timeout_is_retried(server, settings_for, sandbox, store, retry):
    server.push(
        Reply(body={"never": "seen"}, delay_s=3.0), tool_reply(("finish", {"summary": "s"}))
    )
    settings = settings_for(server, request_timeout_s=0.5)
    res = run(make_loop(server, settings, sandbox, store, retry))
    assert res.payload.summary == "s"
    assert "timed out" in res.trajectory.steps[0].meta["retries"][0]


def test_a_malformed_response_body_is_retried(server, settings_for, sandbox, store, retry):
    server.push(Reply(body="{not json"), tool_reply(("finish", {"summary": "s"})))
    res = run(make_loop(server, settings_for(server), sandbox, store, retry))
    assert res.payload.summary == "s" and len(server.requests) == 2


def test_turn_budget_exhaustion_is_terminal_and_recorded(
    server, settings_for, sandbox, store, retry
):
    server.push(*[tool_reply(("shell", {"command": "true"}))] * 5)
    with pytest.raises(BudgetExhausted) as info:
        run(make_loop(server, settings_for(server, max_turns=3), sandbox, store, retry))
    assert "turn budget" in str(info.value)
    traj = get_model(store, info.value.trajectory_key, Trajectory)
    assert traj.stop_reason == "budget" and traj.usage.turns == 3
    # the model was warned before the budget ran out
    assert any("Budget notice" in str(m.get("content")) for m in server.requests[-1]["messages"])


def test_token_budget_exhaustion_is_terminal(server, settings_for, sandbox, store, retry):
    server.push(*[tool_reply(("shell", {"command": "true"}), usage=(400, 100))] * 5)
    with pytest.raises(BudgetExhausted) as info:
        run(make_loop(server, settings_for(server, token_budget=1000), sandbox, store, retry))
    assert "token budget" in str(info.value) and len(server.requests) == 2


def test_wall_time_budget_exhaustion_is_terminal(server, settings_for, sandbox, store, retry):
    ticks = iter(range(0, 10_000, 40))  # every clock read advances 40 "seconds"
    server.push(*[tool_reply(("shell", {"command": "true"}))] * 20)
    loop = make_loop(
        server,
        settings_for(server, wall_time_s=300),
        sandbox,
        store,
        retry,
        clock=lambda: float(next(ticks)),
    )
    with pytest.raises(BudgetExhausted) as info:
        run(loop)
    assert "wall-time" in str(info.value)
    assert len(server.requests) < 20


def test_history_near_the_window_is_compacted_keeping_system_task_and_recent_steps(
    server, settings_for, sandbox, store, retry
):
    (sandbox.root / "workspace/big.txt").write_text("x" * 6000)
    server.push(
        *[
            tool_reply(("shell", {"command": f"cat big.txt; echo step{i}"}), usage=None)
            for i in range(8)
        ],
        tool_reply(("finish", {"summary": "s"}), usage=None),
    )
    settings = settings_for(server, context_window=8000, max_tokens=500, max_turns=20)
    res = run(make_loop(server, settings, sandbox, store, retry, keep_recent=2), task="TASK-XYZ")
    kinds = [s.meta.get("kind") for s in res.trajectory.steps]
    assert "compaction" in kinds
    summaries = [r for r in server.requests if not r.get("tools")]
    assert summaries and "TASK-XYZ" in summaries[0]["messages"][1]["content"]
    after = server.requests[-1]["messages"]
    assert after[0]["content"] == "system prompt" and after[1]["content"] == "TASK-XYZ"
    assert after[2]["content"].startswith("[Summary of the earlier steps")
    assert "AUTO-SUMMARY" in after[2]["content"]
    assert len(after) < 2 + 2 * 9  # older turns were dropped
    assert json.dumps(after).count("step7") >= 1  # the recent step is kept verbatim
    assert res.payload.summary == "s"
