"""`envfactory agents …` commands, run through typer's runner with settings from the
environment (the edge), against the real local chat server."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from envfactory.agents.chat_server import LocalChatServer, error_reply, text_reply
from envfactory.cli import app

runner = CliRunner()


def test_scripts_lists_every_seed_and_role_as_json():
    res = runner.invoke(app, ["agents", "scripts", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert {r["role"] for r in rows} == {"research", "judge", "verifier", "red_team"}
    assert all(r["turns"] >= 1 for r in rows)


def test_check_endpoint_reports_the_reply_and_usage(server):
    server.auto_summary = False
    server.push(text_reply("ok", usage=(12, 1)))
    env = {
        "ENVFACTORY_AGENTS__JUDGE__BASE_URL": server.url,
        "ENVFACTORY_AGENTS__JUDGE__MODEL": "tiny",
        "ENVFACTORY_AGENTS__JUDGE__BACKEND": "openai",
    }
    res = runner.invoke(app, ["agents", "check-endpoint", "--json"], env=env)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["reply"] == "ok" and out["prompt_tokens"] == 12 and out["model"] == "tiny"
    assert server.requests[0]["model"] == "tiny"


def test_check_endpoint_fails_clearly_on_a_rejected_key(server):
    server.auto_summary = False
    server.push(error_reply(401, "invalid api key"))
    env = {
        "ENVFACTORY_AGENTS__VERIFIER__BASE_URL": server.url,
        "ENVFACTORY_AGENTS__VERIFIER__BACKEND": "openai",
        "MY_KEY": "k",
        "ENVFACTORY_AGENTS__VERIFIER__MODEL": "tiny",
        "ENVFACTORY_AGENTS__VERIFIER__API_KEY_ENV": "MY_KEY",
    }
    res = runner.invoke(app, ["agents", "check-endpoint", "--role", "verifier", "--json"], env=env)
    assert res.exit_code == 1
    body = json.loads(res.stdout)
    assert "401" in body["message"] and "invalid api key" in body["message"]
    # the key came from the variable the settings name, resolved at the edge
    assert server.headers[0]["authorization"] == "Bearer k"


def test_check_endpoint_takes_the_shortcut_analysts_settings_too():
    with LocalChatServer() as server:
        env = {
            "ENVFACTORY_AGENTS__SHORTCUT_ANALYST__BACKEND": "openai",
            "ENVFACTORY_AGENTS__SHORTCUT_ANALYST__MODEL": "analyst-model",
            "ENVFACTORY_AGENTS__SHORTCUT_ANALYST__BASE_URL": server.url,
        }
        res = CliRunner().invoke(
            app, ["agents", "check-endpoint", "--role", "shortcut_analyst", "--json"], env=env
        )
        sent = server.requests[0]["model"] if server.requests else None
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["model"] == "analyst-model" and sent == "analyst-model"
