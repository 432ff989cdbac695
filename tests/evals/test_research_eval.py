"""`envfactory agents eval` on the research role: 3 seeds × k=2 against the local
chat-completions server, with replies that succeed, never finish, fail the build, fail
the reference solution, send an invalid finish and hit a refusing endpoint. The eval
prints JSON, stores the run, and `eval show` / `eval list` print it back."""

from __future__ import annotations

import json

import pytest
from eval_replies import (
    chatter,
    research_build_fails,
    research_good,
    research_invalid,
    research_reference_fails,
    write_seed,
)
from typer.testing import CliRunner

from envfactory.agents.chat_server import error_reply
from envfactory.cli import app

pytestmark = [pytest.mark.docker, pytest.mark.slow]
STUCK = 2


def _env(tmp_path, server) -> dict[str, str]:
    pre = "ENVFACTORY_AGENTS__RESEARCH__"
    return {
        "ENVFACTORY_HOME": str(tmp_path / "home"),
        pre + "BACKEND": "openai",
        pre + "MODEL": "local-test",
        pre + "BASE_URL": server.url,
        pre + "STUCK_AFTER": str(STUCK),
        pre + "MAX_RETRIES": "0",
    }


def test_research_eval_reports_each_failure_cause_and_is_stored(tmp_path, chat, docker_engine):
    seeds = tmp_path / "seeds"
    for name, title in [("alpha", "Eval seed alpha"), ("beta", "Eval seed beta")]:
        write_seed(seeds, name, title)
    write_seed(seeds, "gamma", "Eval seed gamma")
    chat.route("Eval seed alpha", *research_good(), *chatter(STUCK))
    chat.route("Eval seed beta", *research_build_fails(STUCK), error_reply(401, "bad key"))
    chat.route("Eval seed gamma", *research_reference_fails(STUCK), *research_invalid(STUCK))
    runner, env = CliRunner(), _env(tmp_path, chat)
    args = ["agents", "eval", "--role", "research", "--seeds", str(seeds), "--k", "2", "--json"]
    res = runner.invoke(app, args, env=env)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout.strip().splitlines()[-1])
    got = [(a["target"], a["index"], a["success"], a["cause"]) for a in doc["attempts"]]
    assert got == [
        ("alpha", 0, True, None),
        ("alpha", 1, False, "no_finish"),
        ("beta", 0, False, "build_failed"),
        ("beta", 1, False, "model_error"),
        ("gamma", 0, False, "reference_failed"),
        ("gamma", 1, False, "invalid_output"),
    ]
    assert doc["total"]["attempts"] == 6 and doc["total"]["success_rate"] == round(1 / 6, 4)
    assert doc["targets"]["alpha"]["success_rate"] == 0.5
    first = doc["attempts"][0]
    assert first["turns"] == 2 and first["tool_calls"] == 2 and first["prompt_tokens"] == 200
    assert first["wall_s"] > 0 and first["trajectory_key"]
    assert doc["attempts"][1]["step_causes"] == {"no_tool_call": STUCK}
    assert doc["attempts"][5]["step_causes"] == {"invalid_arguments": 1, "no_tool_call": STUCK}
    assert doc["total"]["step_causes"]["finish_refused"] == 2  # build, reference
    assert "exit 7" in doc["attempts"][2]["detail"] or "build" in doc["attempts"][2]["detail"]

    shown = runner.invoke(app, ["agents", "eval", "show", doc["id"]], env=env)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(f"eval {doc['id']}: role research, model local-test at")
    assert any(line.startswith("alpha") and " 1/2 " in line for line in lines)
    total = next(line for line in lines if line.startswith("TOTAL"))
    for cause in ("build_failed", "invalid_output", "model_error", "no_finish"):
        assert cause in total
    assert any(line.startswith("model behaviour over all turns: ") for line in lines)
    listed = runner.invoke(app, ["agents", "eval", "list", "--json"], env=env)
    assert [r["id"] for r in json.loads(listed.stdout)] == [doc["id"]]
