"""`envfactory worker` checks its agents before it polls: each openai role's endpoint is
probed (the project's local chat-completions server, a real socket) and named with its
model, or the worker refuses to start saying why. Run as a user runs it: a subprocess,
settings from the environment, working directory /tmp."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from envfactory.agents.chat_server import LocalChatServer
from workflows.devserver import DevServer, free_port

REPO = Path(__file__).resolve().parents[2]
CMD = [sys.executable, "-m", "envfactory.cli", "worker"]


def _env(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ENVFACTORY_")}
    return {
        **base,
        "PYTHONPATH": str(REPO),
        "ENVFACTORY_HOME": str(tmp_path / "home"),
        "COLUMNS": "250",
        **env,
    }


def worker(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """A worker that must refuse to start: it exits by itself."""
    return subprocess.run(
        CMD, cwd="/tmp", env=_env(tmp_path, env), capture_output=True, text=True, timeout=120
    )


def worker_until_polling(tmp_path: Path, **env: str) -> str:
    """A worker against a real Temporal dev server: its output up to "worker polling",
    then Ctrl-C (it must stop cleanly)."""
    with DevServer(free_port(), tmp_path / "temporal.db") as srv:
        full = _env(tmp_path, {**env, "ENVFACTORY_TEMPORAL__ADDRESS": srv.address})
        proc = subprocess.Popen(CMD, cwd="/tmp", env=full, stderr=subprocess.PIPE, text=True)
        lines = []
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "worker polling" in line:
                break
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0, "".join(lines)
    return "".join(lines)


@pytest.mark.temporal
def test_the_worker_names_each_roles_endpoint_and_model_after_probing_it(tmp_path):
    with LocalChatServer() as server:  # answers a tool-less request with a summary: 200
        url = server.url
        out = worker_until_polling(
            tmp_path,
            ENVFACTORY_AGENTS__DEFAULT__BACKEND="openai",
            ENVFACTORY_AGENTS__DEFAULT__MODEL="tiny-chat",
            ENVFACTORY_AGENTS__DEFAULT__BASE_URL=url,
            ENVFACTORY_AGENTS__JUDGE__MODEL="judge-chat",
            ENVFACTORY_AGENTS__RED_TEAM__BACKEND="scripted",
        )
        models = [r["model"] for r in server.requests]
    assert f"research: openai model 'tiny-chat' at {url}" in out, out
    assert f"verifier: openai model 'tiny-chat' at {url}" in out
    assert f"judge: openai model 'judge-chat' at {url}" in out
    assert "red_team: scripted" in out
    assert sorted(models) == ["judge-chat", "tiny-chat"]  # one probe per endpoint and model
    assert "worker polling" in out  # the check passed, and the worker started


def test_the_worker_refuses_to_start_when_an_endpoint_is_down(tmp_path):
    with LocalChatServer() as server:
        url = server.url  # stopped on leaving the block: nothing listens there now
    done = worker(
        tmp_path,
        ENVFACTORY_AGENTS__VERIFIER__BACKEND="openai",
        ENVFACTORY_AGENTS__VERIFIER__MODEL="tiny-chat",
        ENVFACTORY_AGENTS__VERIFIER__BASE_URL=url,
    )
    assert done.returncode == 1
    out = " ".join(done.stderr.split())
    assert f"the verifier role's model endpoint {url} (model 'tiny-chat') did not answer" in out, (
        out
    )
    assert "ENVFACTORY_AGENTS__VERIFIER__BASE_URL" in out
    assert "Temporal" not in out  # refused before it went anywhere


def test_the_worker_refuses_the_openai_backend_without_a_model_naming_the_variable(tmp_path):
    done = worker(tmp_path, ENVFACTORY_AGENTS__DEFAULT__BACKEND="openai")
    assert done.returncode == 1
    out = " ".join(done.stderr.split())
    assert "ENVFACTORY_AGENTS__DEFAULT__MODEL" in out, out
    assert "Traceback" not in done.stderr


def test_a_role_left_without_a_model_is_told_it_may_stay_scripted(tmp_path):
    # every pipeline role has its model; the analyst inherits openai and has none
    roles = ("RESEARCH", "JUDGE", "VERIFIER", "RED_TEAM")
    models = {f"ENVFACTORY_AGENTS__{r}__MODEL": "m" for r in roles}
    done = worker(tmp_path, ENVFACTORY_AGENTS__DEFAULT__BACKEND="openai", **models)
    assert done.returncode == 1
    out = " ".join(done.stderr.split())
    assert "the shortcut_analyst role(s) use backend=openai but no model is set" in out, out
    assert "ENVFACTORY_AGENTS__SHORTCUT_ANALYST__BACKEND=scripted" in out, out
