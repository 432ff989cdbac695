"""`envfactory repo mine`: a repository's fix commits → gated, published environments.

Clones the repository once into the artifact store, then for each commit of the range:
mine it (tests split from the fix, image at the parent, fail-to-pass tests), gate it with
the whole battery and publish it the way every imported task is published. Prints one
line per commit as it ends and the yield table; `--json` prints one object instead.
Exit codes: 0 when the run ended (whatever the yield), 1 when the repository could not be
read.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from envfactory.core.errors import EnvFactoryError
from envfactory.core.models.repos import CandidateResult
from envfactory.core.settings import load_settings

app = typer.Typer(
    name="repo",
    help="Environments from a repository's real history.\n\nExamples:\n\n"
    "  envfactory repo mine ~/src/project --range v1.0..v1.1 --limit 50\n\n"
    "  envfactory repo mine https://host/project.git --limit 20 --json",
    no_args_is_help=True,
)
COLOUR = {"published": "green", "rejected": "red", "dropped": "yellow", "stored": "cyan"}


@app.command("mine")
def mine(
    repository: Annotated[str, typer.Argument(help="A clone URL, a local path or a file:// URL.")],
    rev_range: Annotated[
        str | None, typer.Option("--range", help="Commits A..B (default: HEAD's history).")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="At most N commits (the newest).")] = None,
    repeats: Annotated[int, typer.Option(help="Gate repeats per state.")] = 2,
    pass_to_pass_max: Annotated[
        int, typer.Option(help="Keep at most N pass-to-pass tests (a seeded sample).")
    ] = 10,
    suite: Annotated[str | None, typer.Option(help="Suite name (default: the repo's).")] = None,
    max_bytes: Annotated[int, typer.Option(help="Refuse a larger clone.")] = 1 << 30,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Mine fix commits into environments: clone, split tests from the fix, build at the
    parent, keep fail-to-pass commits, gate, publish. Model-free: instructions come
    from the commit message through a template.

    Examples:

      envfactory repo mine ../calc --range main~20..main

      envfactory repo mine file:///srv/git/tool.git --limit 50 --json
    """
    from envfactory.repos import (
        RepoMiner,
        clone_repository,
        commits_in_range,
        open_snapshot,
        yield_table,
    )
    from envfactory.store import ArtifactStore
    from workflows.composition import make_services
    from workflows.repo_mining import mine_commits

    settings = load_settings()
    out = Console(highlight=False, soft_wrap=True, stderr=as_json)
    t0 = time.monotonic()
    try:
        artifacts = ArtifactStore.from_settings(settings)
        snap = clone_repository(repository, artifacts, max_bytes=max_bytes)
        work = settings.home / "repos"
        commits = commits_in_range(
            open_snapshot(snap, artifacts, work / "clones"), rev_range, limit
        )
    except EnvFactoryError as exc:
        _fail(exc, as_json)
    name = suite or _suite_name(repository)
    out.print(f"{snap.source} at {snap.head[:12]}: {len(commits)} commits", markup=False)
    services = make_services(settings)
    miner = RepoMiner(services.engine, services.artifacts, services.store, work,
                      settings.sandbox.task_caps)  # fmt: skip

    def progress(i: int, r: CandidateResult) -> None:
        colour = COLOUR[r.outcome]
        line = f"[{i + 1}/{len(commits)}] {r.commit[:12]} {r.subject[:60]}"
        out.print(line, markup=False, end=" ")
        out.print(f"[{colour}]{r.outcome}[/]", end="")
        out.print(f" {r.reason}" if r.reason else "", markup=False)

    results = mine_commits(
        services,
        miner,
        snap,
        commits,
        repeats=repeats,
        suite=name,
        pass_to_pass_max=pass_to_pass_max,
        on_result=progress,
    )
    table = yield_table(results, time.monotonic() - t0)
    key = artifacts.put_bytes(table.model_dump_json(indent=1).encode())
    if as_json:
        rows = [r.model_dump(mode="json") for r in results]
        body = {"repository": snap.model_dump(mode="json"), "candidates": rows,
                "totals": table.model_dump(mode="json"), "yield_key": key}  # fmt: skip
        typer.echo(json.dumps(body))
        return
    _print_table(out, table.model_dump(mode="json"), results)
    out.print(f"yield table stored as artifact {key}", markup=False)


def _print_table(out: Console, totals: dict[str, object], results: list[CandidateResult]) -> None:
    t = Table(title="yield")
    t.add_column("stage")
    t.add_column("commits", justify="right")
    for stage, n in dict(totals["reached"]).items():  # type: ignore[call-overload]
        t.add_row(stage, str(n))
    out.print(t)
    for kind, n in dict(totals["reasons"]).items():  # type: ignore[call-overload]
        out.print(f"  {n} × {kind}", markup=False)
    for r in results:
        for finding in r.findings:
            out.print(f"  finding {r.commit[:12]}: {finding}", markup=False)
    per = totals["cpu_s_per_published"]
    out.print(f"CPU s per published: {per}; wall s per published: "
              f"{totals['wall_s_per_published']}", markup=False)  # fmt: skip


def _suite_name(repository: str) -> str:
    name = Path(repository.rstrip("/")).name.removesuffix(".git")
    return name or "repo"


def _fail(exc: EnvFactoryError, as_json: bool) -> NoReturn:
    if as_json:
        typer.echo(
            json.dumps({"error": type(exc).__name__, "message": exc.message, "hint": exc.hint})
        )
    else:
        typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(1)
