"""`envfactory agents …`: inspect the recorded scripts, replay one over HTTP, probe an endpoint.

Settings (and the API key, read from the variable the role's settings name) are resolved
here, at the edge, and passed down. Exit codes: 0 ok, 1 refused or unreachable.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Annotated, Literal

import typer

from envfactory.agents import resolve_api_key
from envfactory.agents.chat_server import (
    LocalChatServer,
    RoleScriptServer,
    replies_from_script,
)
from envfactory.agents.endpoint import probe
from envfactory.agents.scripts import ROLES, available_seeds, load_script
from envfactory.core.errors import EnvFactoryError
from envfactory.core.models import MODEL_ROLES, AgentRole
from envfactory.core.settings import load_settings

from . import agent_eval

app = typer.Typer(
    name="agents",
    help="Agent tooling: recorded scripts, a local replay server, endpoint checks, evals.",
    no_args_is_help=True,
)
app.add_typer(agent_eval.app, name="eval")
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
#: a pipeline role, spelled as `AgentRole` spells it (typer offers these as the choices)
Role = Literal[ROLES]  # type: ignore[valid-type]
#: a role with model settings (the pipeline's, and the shortcut analyst)
MODEL_ROLE_NAMES = tuple(r.value for r in MODEL_ROLES)
ModelRole = Literal[MODEL_ROLE_NAMES]  # type: ignore[valid-type]


def _fail(exc: EnvFactoryError, as_json: bool) -> None:
    if as_json:
        typer.echo(
            json.dumps({"error": type(exc).__name__, "message": exc.message, "hint": exc.hint})
        )
    else:
        typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(1)


@app.command("scripts")
def scripts(as_json: JsonOpt = False) -> None:
    """List the recorded scripts per example seed and role.

    Example: envfactory agents scripts --json
    """
    rows = [
        {"seed": s, "role": r, "turns": len(load_script(s, r).turns)}
        for s in available_seeds()
        for r in ROLES
    ]
    if as_json:
        typer.echo(json.dumps(rows))
        return
    for row in rows:
        typer.echo(f"{row['seed']:<32} {row['role']:<10} {row['turns']:>3} turns")


@app.command("serve-script")
def serve_script(
    seed: Annotated[str, typer.Argument(help="example seed name, e.g. sqlite-wal-crash-recovery")],
    role: Annotated[Role, typer.Argument(help=" | ".join(ROLES))],
    seconds: Annotated[float, typer.Option(help="stop after this long (0: until Ctrl-C)")] = 0,
) -> None:
    """Serve a recorded script as a chat-completions endpoint on 127.0.0.1 (a random port).

    Point a role at it to exercise the real OpenAI client path offline:
    ENVFACTORY_AGENTS__JUDGE__BACKEND=openai ENVFACTORY_AGENTS__JUDGE__MODEL=replay
    ENVFACTORY_AGENTS__JUDGE__BASE_URL=<printed url>
    """
    try:
        replies = replies_from_script(load_script(seed, role))
    except EnvFactoryError as exc:
        _fail(exc, False)
    with LocalChatServer(replies) as server:
        typer.echo(server.url)
        _serve_until(server, seconds)


def _serve_until(server: LocalChatServer, seconds: float) -> None:
    deadline = time.monotonic() + seconds if seconds else None
    try:
        while deadline is None or time.monotonic() < deadline:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    typer.echo(f"served {len(server.requests)} requests", err=True)


@app.command("serve-seed")
def serve_seed(
    seed: Annotated[
        str,
        typer.Argument(
            help="example seed name (e.g. sqlite-wal-crash-recovery), or a directory of "
            "<role>.yaml scripts written for a seed of yours"
        ),
    ],
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port (0: a free one)")] = 0,
    seconds: Annotated[float, typer.Option(help="stop after this long (0: until Ctrl-C)")] = 0,
) -> None:
    """Serve every role's recorded script of a seed as one chat-completions endpoint.

    The role is chosen by the request's model name, so point each role at the URL with
    its role name as the model (`research`, `judge`, `verifier`, `red_team`):
    ENVFACTORY_AGENTS__DEFAULT__BACKEND=openai ENVFACTORY_AGENTS__DEFAULT__BASE_URL=<url>
    ENVFACTORY_AGENTS__JUDGE__MODEL=judge (and so on for each role)
    """
    try:
        scripts = {role: load_script(seed, role) for role in ROLES}
    except EnvFactoryError as exc:
        _fail(exc, False)
    with RoleScriptServer(scripts=scripts, host=host, port=port) as server:
        typer.echo(server.url)
        sys.stdout.flush()
        _serve_until(server, seconds)


@app.command("check-endpoint")
def check_endpoint(
    role: Annotated[ModelRole, typer.Option(help="whose settings to use")] = AgentRole.JUDGE.value,
    as_json: JsonOpt = False,
) -> None:
    """Send one tiny chat request with a role's settings: is the model server reachable?

    Example: ENVFACTORY_AGENTS__JUDGE__BACKEND=openai ENVFACTORY_AGENTS__JUDGE__MODEL=qwen
    ENVFACTORY_AGENTS__JUDGE__BASE_URL=http://127.0.0.1:30000/v1 envfactory agents check-endpoint
    """
    try:
        settings = load_settings().agents.roles()[role]
        key = resolve_api_key(settings.model_copy(update={"backend": "openai"}), os.environ)
        done = asyncio.run(probe(settings, key))  # the edge: the only env read is the key
    except EnvFactoryError as exc:
        _fail(exc, as_json)
    out = {
        "role": role,
        "model": done.model,
        "base_url": settings.base_url,
        "latency_s": round(done.latency_s, 3),
        "reply": done.reply,
        "prompt_tokens": done.prompt_tokens,
        "completion_tokens": done.completion_tokens,
    }
    typer.echo(
        json.dumps(out)
        if as_json
        else f"{done.model} at {done.base_url}: {out['latency_s']}s, replied {out['reply']!r}"
    )
