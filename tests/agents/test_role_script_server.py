"""`RoleScriptServer` (behind `envfactory agents serve-seed`): one chat-completions endpoint
serving a seed's recorded scripts for every role, chosen by model name, turn by the
transcript — driven through the real OpenAI client over a socket."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from importlib import resources
from typing import Any

import pytest

from envfactory.agents.chat_server import RoleScriptServer
from envfactory.agents.model import OpenAIChatModel
from envfactory.agents.scripts import ROLES, load_script
from envfactory.core.errors import AgentError

SEED = "sqlite-wal-crash-recovery"
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}
]


def _ask(url: str, model: str, assistant_turns: int) -> Any:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(assistant_turns):
        messages += [
            {"role": "assistant", "content": f"turn {i}"},
            {"role": "user", "content": "ok"},
        ]
    client = OpenAIChatModel(name=model, api_key="k", base_url=url)

    async def once() -> Any:
        try:
            return await client.complete(
                messages, TOOLS, max_tokens=64, temperature=0.0, timeout_s=10
            )
        finally:
            await client.aclose()

    return asyncio.run(once())


def _names(turn: Any) -> list[str]:
    return [c.tool for c in turn.calls]


def test_each_role_gets_its_own_script_and_every_run_starts_from_the_top():
    scripts = {role: load_script(SEED, role) for role in ROLES}
    with RoleScriptServer(scripts=scripts) as server:
        for role in ("research", "judge"):
            first = _ask(server.url, role, 0)
            assert [c.name for c in first.tool_calls] == _names(scripts[role].turns[0])
        # a second judge run (k judges) replays from turn 0; a later turn follows the transcript
        again = _ask(server.url, "judge", 0)
        second = _ask(server.url, "judge", 1)
    assert [c.name for c in again.tool_calls] == _names(scripts["judge"].turns[0])
    assert [c.name for c in second.tool_calls] == _names(scripts["judge"].turns[1])
    assert [r["model"] for r in server.requests] == ["research", "judge", "judge", "judge"]


def test_an_unknown_model_is_refused_naming_the_served_ones():
    with RoleScriptServer(scripts={"judge": load_script(SEED, "judge")}) as server:
        with pytest.raises(AgentError, match="served models: judge"):
            _ask(server.url, "gpt-4o", 0)


def test_serve_seed_refuses_a_seed_without_scripts():
    out = subprocess.run(
        [sys.executable, "-m", "envfactory.cli", "agents", "serve-seed", "no-such-seed"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert "no research script for seed 'no-such-seed'" in out.stderr


def test_serve_seed_serves_scripts_from_a_directory_of_yours(tmp_path):
    # a seed nobody shipped: its scripts live in the user's directory, one file per role
    for role in ROLES:
        (tmp_path / f"{role}.yaml").write_text(
            (resources.files("envfactory.agents.scripts") / SEED / f"{role}.yaml").read_text()
        )
    scripts = {role: load_script(str(tmp_path), role) for role in ROLES}
    assert scripts["judge"].turns == load_script(SEED, "judge").turns
    (tmp_path / "red_team.yaml").unlink()
    out = subprocess.run(
        [sys.executable, "-m", "envfactory.cli", "agents", "serve-seed", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert f"no red_team script at {tmp_path}/red_team.yaml" in out.stderr


def test_an_example_name_is_never_read_from_a_same_named_directory(tmp_path, monkeypatch):
    # run from examples/seeds, the seed's own directory (no scripts in it) has the same name
    (tmp_path / SEED).mkdir()
    monkeypatch.chdir(tmp_path)
    assert load_script(SEED, "judge").turns
