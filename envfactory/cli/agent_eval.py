"""`envfactory agents eval …`: how well one role does, per seed and in total; stored runs.

    envfactory agents eval --role research --seeds examples/seeds --k 2
    envfactory agents eval --role judge --env env-1a2b3c --k 3 --json
    envfactory agents eval list
    envfactory agents eval show eval-…

The role uses its configured model (ENVFACTORY_AGENTS__<ROLE>__… over
ENVFACTORY_AGENTS__DEFAULT__…). Exit codes: 0 the eval ran (failed attempts are results),
1 bad input or configuration (nothing run, nothing stored).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, Literal, NoReturn

import typer

from envfactory.core.errors import ConfigError, EnvFactoryError
from envfactory.core.models import AgentRole, EvalAttempt, EvalRun
from envfactory.core.settings import Settings, load_settings

app = typer.Typer(
    name="eval",
    help=(
        "Run one agent role k times on seeds or stored environments; print per target and "
        "in total the success rate, turns, tool calls, tokens, wall time and each failure's "
        "cause; store the run. research and verifier run on --seeds (the verifier on the "
        "environment research makes of each seed); judge and red_team on stored "
        "environments (--env, or the latest made from each of --seeds).\n\n"
        "Example: envfactory agents eval --role research --seeds examples/seeds --k 2"
    ),
    invoke_without_command=True,
)
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
EvalRole = Literal["research", "verifier", "judge", "red_team"]


def _fail(exc: EnvFactoryError, as_json: bool) -> NoReturn:
    if as_json:
        typer.echo(
            json.dumps({"error": type(exc).__name__, "message": exc.message, "hint": exc.hint})
        )
    else:
        typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(1)


def as_dict(run: EvalRun) -> dict[str, Any]:
    """The eval as JSON: per target and total, then every attempt."""
    doc = run.model_dump(mode="json", exclude={"attempts"})
    doc["targets"] = {t: run.totals(t).model_dump(mode="json") for t in run.targets()}
    doc["total"] = run.totals().model_dump(mode="json")
    doc["attempts"] = [a.model_dump(mode="json") for a in run.attempts]
    return doc


def _progress(a: EvalAttempt) -> None:
    what = "ok" if a.success else f"FAILED {a.cause.value if a.cause else ''}"
    typer.echo(f"  {a.target} #{a.index}: {what} ({a.turns} turns, {a.wall_s:.1f}s)", err=True)


def _targets(settings: Settings, role: AgentRole, seeds: Path | None, envs: list[str]) -> Any:
    from envfactory.evals import seed_targets, stored_targets
    from envfactory.store import ArtifactStore, Store

    if seeds is None and not envs:
        raise ConfigError("nothing to evaluate", hint="pass --seeds DIR and/or --env ID")
    artifacts = ArtifactStore.from_settings(settings)
    from_seeds = seed_targets(seeds, settings.seeds, artifacts) if seeds else []
    if role == AgentRole.RESEARCH:
        if envs:
            raise ConfigError("--env is not for research", hint="research runs on --seeds DIR")
        return from_seeds, artifacts
    if role == AgentRole.VERIFIER and not envs:
        return from_seeds, artifacts  # research makes each seed's environment first
    return stored_targets(Store.from_settings(settings), envs, from_seeds), artifacts


@app.callback()
def eval_cmd(
    ctx: typer.Context,
    role: Annotated[EvalRole | None, typer.Option(help="the role to evaluate")] = None,
    seeds: Annotated[
        Path | None, typer.Option(help="a seed directory, or a directory of them")
    ] = None,
    env: Annotated[list[str], typer.Option(help="a stored environment id (repeatable)")] = [],  # noqa: B006
    k: Annotated[int, typer.Option(min=1, max=100, help="attempts per target")] = 1,
    gate_repeats: Annotated[int, typer.Option(min=1, help="verifier: gate repeats")] = 1,
    as_json: JsonOpt = False,
) -> None:
    """Run --role k times on every target; print the table (or --json); store the run.

    research and verifier run on --seeds (the verifier on the environment research makes
    of each seed); judge and red_team on stored environments (--env, or the latest one
    made from each of --seeds). Example: envfactory agents eval --role research --seeds
    examples/seeds --k 2
    """
    if ctx.invoked_subcommand is not None:
        return
    if role is None:
        _fail(
            ConfigError("--role is required", hint="--role research|verifier|judge|red_team"),
            as_json,
        )
    from envfactory.store import Store
    from workflows.composition import api_keys, eval_harness

    the_role = AgentRole(role)
    try:
        settings = load_settings()
        api_keys(settings, os.environ)  # a missing key fails here, before anything runs
        targets, artifacts = _targets(settings, the_role, seeds, list(env))
        harness = eval_harness(settings, artifacts, gate_repeats=gate_repeats, on_attempt=_progress)
        source = str(seeds) if seeds and not env else "store"
        run = harness.run(the_role, targets, k, source)
        Store.from_settings(settings).agent_evals.add(run)
    except EnvFactoryError as exc:
        _fail(exc, as_json)
    from envfactory.evals import render_table

    typer.echo(json.dumps(as_dict(run)) if as_json else render_table(run))


@app.command("list")
def list_cmd(
    role: Annotated[EvalRole | None, typer.Option(help="only this role")] = None,
    limit: Annotated[int, typer.Option(min=1)] = 50,
    as_json: JsonOpt = False,
) -> None:
    """The stored eval runs, newest first. Example: envfactory agents eval list --role judge"""
    from envfactory.store import Store

    runs = Store.from_settings(load_settings()).agent_evals.list(
        role=AgentRole(role) if role else None, limit=limit
    )
    rows = [
        {
            "id": r.id,
            "created_at": r.created_at.isoformat(timespec="seconds"),
            "role": r.role.value,
            "model": r.model,
            "k": r.k,
            "source": r.source,
            "attempts": len(r.attempts),
            "success_rate": r.totals().success_rate,
        }
        for r in runs
    ]
    if as_json:
        typer.echo(json.dumps(rows))
        return
    for row in rows:
        typer.echo(
            f"{row['id']:<26} {row['created_at']} {row['role']:<9} {row['model']:<20} "
            f"k={row['k']} {row['attempts']:>3} attempts  rate {row['success_rate']:.2f}"
        )


@app.command("show")
def show_cmd(
    eval_id: Annotated[str, typer.Argument(help="an id from `agents eval list`")],
    as_json: JsonOpt = False,
) -> None:
    """One stored eval run: its table, or --json. Example: envfactory agents eval show eval-…"""
    from envfactory.evals import render_table
    from envfactory.store import Store

    try:
        run = Store.from_settings(load_settings()).agent_evals.get(eval_id)
    except EnvFactoryError as exc:
        _fail(exc, as_json)
    typer.echo(json.dumps(as_dict(run)) if as_json else render_table(run))
