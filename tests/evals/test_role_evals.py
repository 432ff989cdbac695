"""The eval harness on the verifier writer (on seeds: research makes each environment
first) and on the judge (on a stored environment), against the local chat-completions
server: an accepted verifier the gates pass or reject, a verifier its own finish check
refuses, no finish, a seed whose environment cannot be made; a judge rewarded or not."""

from __future__ import annotations

import json

import pytest
from eval_replies import SOUND, WEAK, chatter, judge, research_good, verifier, write_seed
from typer.testing import CliRunner

from envfactory.agents.chat_server import error_reply, tool_reply
from envfactory.cli import app
from envfactory.core.models import FileEntry, Provenance, Verifier
from envfactory.core.settings import Settings
from envfactory.store import ArtifactStore, Store

pytestmark = [pytest.mark.docker, pytest.mark.slow]
STUCK = 2


def _env(tmp_path, server, *roles: str) -> dict[str, str]:
    env = {"ENVFACTORY_HOME": str(tmp_path / "home")}
    for role in roles:
        pre = f"ENVFACTORY_AGENTS__{role.upper()}__"
        env |= {
            pre + "BACKEND": "openai",
            pre + "MODEL": "local-test",
            pre + "BASE_URL": server.url,
            pre + "STUCK_AFTER": str(STUCK),
            pre + "MAX_RETRIES": "0",
        }
    return env


def _eval(env: dict[str, str], *args: str) -> dict:
    res = CliRunner().invoke(app, ["agents", "eval", *args, "--json"], env=env)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_verifier_eval_separates_gates_rejected_refused_and_no_finish(
    tmp_path, chat, docker_engine
):
    seeds = tmp_path / "seeds"
    for name in ("delta", "epsilon", "zeta"):
        write_seed(seeds, name, f"Eval seed {name}")
    chat.route("Eval seed delta", *research_good("delta"))
    chat.route("Eval seed epsilon", *research_good("epsilon"))
    chat.route("Eval seed zeta", error_reply(401, "bad key"))
    chat.route("(case delta)", *verifier(SOUND), *verifier(WEAK))
    chat.route("(case epsilon)", *verifier("exit 0\n", STUCK), *chatter(STUCK))
    env = _env(tmp_path, chat, "research", "verifier")
    doc = _eval(env, "--role", "verifier", "--seeds", str(seeds), "--k", "2")
    got = [(a["target"], a["success"], a["cause"]) for a in doc["attempts"]]
    assert got == [
        ("delta", True, None),
        ("delta", False, "gates_rejected"),
        ("epsilon", False, "verifier_refused"),
        ("epsilon", False, "no_finish"),
        ("zeta", False, "setup_failed"),
        ("zeta", False, "setup_failed"),
    ]
    assert "wrong answer" in doc["attempts"][1]["detail"]
    assert "passes_noop" in doc["attempts"][2]["detail"]
    assert doc["total"]["causes"] == {
        "gates_rejected": 1,
        "verifier_refused": 1,
        "no_finish": 1,
        "setup_failed": 2,
    }


def _stored_env(tmp_path, chat, docker_engine) -> str:
    """An environment made by research through the harness, stored with a sound verifier."""
    from envfactory.agents import OpenAIChatModel
    from envfactory.core.models import EnvStatus
    from envfactory.core.settings import AgentSettings
    from envfactory.evals import seed_targets
    from envfactory.evals.attempts import Attempts

    settings = Settings(home=tmp_path / "home", database_url=None)
    artifacts = ArtifactStore.from_settings(settings)
    store = Store.from_settings(settings)
    write_seed(tmp_path / "seeds", "eta", "Eval seed eta")
    (target,) = seed_targets(tmp_path / "seeds", settings.seeds, artifacts)
    chat.route("Eval seed eta", *research_good())
    model = OpenAIChatModel(name="local-test", api_key="", base_url=chat.url)
    done = Attempts(docker_engine, artifacts).research(target.seed, model, AgentSettings())
    assert done.spec is not None, done.failure
    store.seeds.add(target.seed)
    store.environments.add(done.spec, EnvStatus.PUBLISHED)
    key = artifacts.put_bytes(SOUND.encode())
    store.verifiers.add(
        Verifier(
            env_id=done.spec.id,
            files=(FileEntry(path="check.sh", key=key, mode=0o755),),
            entry="/bin/bash check.sh",
            provenance=Provenance(author="human:test"),
        )
    )
    return done.spec.id


def test_judge_eval_on_a_stored_environment_rewards_by_the_real_verifier(
    tmp_path, chat, docker_engine
):
    env_id = _stored_env(tmp_path, chat, docker_engine)
    shortcut = {"summary": "wrote any number", "shortcut": "guess", "expect_reward": True}
    chat.route(
        "without doing this task",
        tool_reply(("shell", {"command": "echo 7 > /workspace/answer.txt"})),
        tool_reply(("finish", shortcut)),
    )
    chat.route("Write the answer, 42", *judge("42"), *judge("41"), *chatter(STUCK))
    env = _env(tmp_path, chat, "judge", "red_team")
    doc = _eval(env, "--role", "judge", "--env", env_id, "--k", "3")
    got = [(a["target"], a["success"], a["cause"]) for a in doc["attempts"]]
    assert got == [
        (env_id, True, None),
        (env_id, False, "not_rewarded"),
        (env_id, False, "no_finish"),
    ]
    assert doc["source"] == "store" and doc["total"]["success_rate"] == round(1 / 3, 4)
    # the red team, on the environment stored for the seed (found through --seeds)
    red = _eval(env, "--role", "red_team", "--seeds", str(tmp_path / "seeds"))
    assert [(a["target"], a["cause"]) for a in red["attempts"]] == [(env_id, "not_rewarded")]
    assert "claimed solved" in red["attempts"][0]["detail"]
