"""A seed no example covers, published through `envfactory up` as a user would (issue 14).

The seed (tests/deploy/stranger_seed/seed/) is not an example and has no recorded script
in the package: with the default (scripted) agents it is refused at upload, naming the
roles that need a model. Pointed at a chat-completions endpoint that serves the scripts
written for it (`RoleScriptServer`, the server behind `envfactory agents serve-seed DIR`,
on 127.0.0.1), the same upload goes through research, judge, verifier and gates, and the
environment is published. Everything else is real: `envfactory up` in a subprocess (its
own Temporal dev server, the API, a worker with the janitor), the Docker engine.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from envfactory.agents.chat_server import RoleScriptServer
from envfactory.agents.scripts import ROLES, load_script
from tests.workflows.real_stack import cli

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
STRANGER = Path(__file__).resolve().parent / "stranger_seed"
PUBLISH_TIMEOUT_S = 1800


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(home: Path, api_port: int, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVFACTORY_")}
    env.update(
        PYTHONPATH=str(REPO),
        PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}",
        ENVFACTORY_HOME=str(home),
        ENVFACTORY_API__PORT=str(api_port),
        ENVFACTORY_TEMPORAL__DEV_PORT=str(_free_port()),
    )
    env.update(extra)
    return env


class Up:
    """`envfactory up` in its own process group, its output in a log file."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.url = f"http://127.0.0.1:{env['ENVFACTORY_API__PORT']}/api"
        with log.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "envfactory.cli", "up"],
                env=env,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.tail()
            if "worker: polling" in self.log.read_text():
                try:
                    if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
            time.sleep(1)
        raise AssertionError("envfactory up did not get ready:\n" + self.tail())

    def tail(self) -> str:
        return self.log.read_text()[-4000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 2)  # Ctrl-C, as a user stops it
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(10)


def _upload(up: Up, token: str) -> httpx.Response:
    seed_dir = STRANGER / "seed"
    files = [("seed", ("seed.yaml", (seed_dir / "seed.yaml").read_bytes()))]
    for path in sorted(p for p in seed_dir.rglob("*") if p.is_file()):
        if path.name != "seed.yaml":
            name = str(path.relative_to(seed_dir))
            files.append(("files", (name, path.read_bytes())))
    return httpx.post(
        f"{up.url}/seeds/upload",
        files=files,
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )


def _token(env: dict[str, str]) -> str:
    out = cli(env, "reviewer", "add", "newcomer")
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


@pytest.fixture
def model() -> Iterator[RoleScriptServer]:
    scripts = {role: load_script(str(STRANGER / "scripts"), role) for role in ROLES}
    with RoleScriptServer(scripts=scripts) as server:
        yield server


def test_the_new_seed_without_a_model_is_refused_at_upload_naming_the_roles(tmp_path):
    env = _env(tmp_path / "home", _free_port())
    up = Up(env, tmp_path / "up.log")
    try:
        up.wait_ready()
        token = _token(env)
        got = _upload(up, token)
        assert got.status_code >= 400, got.text
        assert "ENVFACTORY_AGENTS__DEFAULT__BACKEND=openai" in got.text, got.text
        seeds = httpx.get(
            f"{up.url}/seeds", headers={"Authorization": f"Bearer {token}"}, timeout=10
        )
        assert seeds.json()["items"] == [], "nothing is stored"
    finally:
        up.stop()


def test_the_new_seed_is_published_through_envfactory_up_with_a_model_endpoint(tmp_path, model):
    models = {f"ENVFACTORY_AGENTS__{role.upper()}__MODEL": role for role in ROLES}
    env = _env(
        tmp_path / "home",
        _free_port(),
        ENVFACTORY_AGENTS__DEFAULT__BACKEND="openai",
        ENVFACTORY_AGENTS__DEFAULT__BASE_URL=model.url,
        # the shortcut analyst has no script for this seed: scripted, it reads nothing
        ENVFACTORY_AGENTS__SHORTCUT_ANALYST__BACKEND="scripted",
        OPENAI_API_KEY="unused",
        **models,
    )
    up = Up(env, tmp_path / "up.log")
    try:
        up.wait_ready()
        token = _token(env)
        got = _upload(up, token)
        assert got.status_code == 201, got.text
        body = got.json()
        assert body["pipeline_started"], body
        seed_id = body["seed"]["id"]
        status = _wait_for_outcome(up, token, seed_id)
        assert status == "published", f"ended {status}\n{up.tail()}"
        served = {r["model"] for r in model.requests}
        assert {"research", "judge", "verifier"} <= served, served
    finally:
        up.stop()


def _wait_for_outcome(up: Up, token: str, seed_id: str) -> str:
    """The environment's final status; a review item means it was held for review (a sound
    environment must not be: the findings are in the message)."""
    deadline = time.monotonic() + PUBLISH_TIMEOUT_S
    headers = {"Authorization": f"Bearer {token}"}
    status = ""
    while time.monotonic() < deadline:
        assert up.proc.poll() is None, up.tail()
        envs = httpx.get(
            f"{up.url}/environments", params={"seed_id": seed_id}, headers=headers, timeout=10
        ).json()["items"]
        statuses = [e["status"] for e in envs]
        for status in statuses:
            if status in {"published", "rejected", "unproven", "too_easy"}:
                return status
        queue = httpx.get(f"{up.url}/reviews", headers=headers, timeout=10).json()
        if queue["items"]:
            return f"held for review: {queue['items']}"
        time.sleep(5)
    raise AssertionError(f"no outcome in {PUBLISH_TIMEOUT_S} s (last: {status})\n{up.tail()}")
