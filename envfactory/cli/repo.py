"""`envfactory repo mine`: a repository's fix commits → gated, published environments.

Clones the repository once into the artifact store, then for each commit of the range:
mine it (tests split from the fix, image at the parent, fail-to-pass tests), gate it with
the whole battery and publish it the way every imported task is published. Prints one
line per commit as it ends and the yield table; `--json` prints one object instead.
Exit codes: 0 when the run ended (whatever the yield), 1 when the repository could not be
read.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from envfactory.core.errors import EnvFactoryError, InvalidInput
from envfactory.core.models import shown
from envfactory.core.models.repos import CandidateResult
from envfactory.core.settings import Settings, load_settings

if TYPE_CHECKING:
    from workflows.types import RepoMineInput, RepoMineResult

app = typer.Typer(
    name="repo",
    help="Environments from a repository's real history.\n\nExamples:\n\n"
    "  envfactory repo mine ~/src/project --range v1.0..v1.1 --limit 50\n\n"
    "  envfactory repo mine https://host/project.git --limit 20 --json",
    no_args_is_help=True,
)
COLOUR = {"published": "green", "rejected": "red", "dropped": "yellow", "stored": "cyan",
          "held": "magenta"}  # fmt: skip


@app.command("mine")
def mine(
    repository: Annotated[str, typer.Argument(help="A clone URL, a local path or a file:// URL.")],
    rev_range: Annotated[
        str | None, typer.Option("--range", help="Commits A..B (default: HEAD's history).")
    ] = None,
    commit: Annotated[
        list[str] | None,
        typer.Option("--commit", help="A commit, tag or merge commit to mine (repeatable)."),
    ] = None,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", help="Only commits touching this path (repeatable)."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="At most N commits (the newest).")
    ] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Gate repeats per state.")] = 2,
    pass_to_pass_max: Annotated[
        int, typer.Option(min=0, help="Keep at most N pass-to-pass tests (a seeded sample).")
    ] = 10,
    suite: Annotated[str | None, typer.Option(help="Suite name (default: the repo's).")] = None,
    max_bytes: Annotated[int, typer.Option(min=1, help="Refuse a larger clone.")] = 1 << 30,
    durable: Annotated[
        bool,
        typer.Option(
            "--durable",
            help="Start the MineRepository workflow on Temporal (one child workflow per "
            "commit, on every worker of the deployment) instead of mining here.",
        ),
    ] = False,
    parallel: Annotated[
        int, typer.Option(min=1, max=64, help="--durable: commits in flight at once.")
    ] = 4,
    wait: Annotated[
        bool, typer.Option("--wait", help="--durable: follow the run to its end.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Mine fix commits into environments: clone, split tests from the fix, build at the
    parent, keep fail-to-pass commits, gate, publish. Model-free: instructions come
    from the commit message through a template.

    Examples:

      envfactory repo mine ../calc --range main~20..main

      envfactory repo mine file:///srv/git/tool.git --limit 50 --json

      envfactory repo mine https://host/lib.git --limit 200 --durable --parallel 8 --wait
    """
    from workflows.client import pipeline_config
    from workflows.types import RepoMineInput

    if rev_range and commit:
        _fail(InvalidInput("give --range or --commit, not both"), as_json)
    _check_utf8(as_json, repository=[repository], path=path or [], suite=[suite or ""])
    revisions = (rev_range,) if rev_range else tuple(commit or ())
    from envfactory.repos import check_revisions

    try:
        check_revisions(revisions)  # before anything is cloned or started
    except EnvFactoryError as exc:
        _fail(exc, as_json)
    settings = load_settings()
    config = pipeline_config(settings).model_copy(update={"repeats": repeats})
    inp = RepoMineInput(
        source=repository, revisions=revisions, paths=tuple(path or ()), limit=limit,
        max_bytes=max_bytes, suite=suite, pass_to_pass_max=pass_to_pass_max,
        parallel=parallel, config=config,
    )  # fmt: skip
    out = Console(highlight=False, soft_wrap=True, stderr=as_json)
    if durable:
        _durable(settings, inp, wait, out, as_json)
    else:
        _here(settings, inp, out, as_json)


def _check_utf8(as_json: bool, **values: list[str]) -> None:
    """A name the shell passed as bytes that are not UTF-8 (Python holds them as
    surrogates) is refused, named, before anything reads it."""
    for what, items in values.items():
        for value in items:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                named = value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                _fail(
                    InvalidInput(
                        f"{what} {shown(named)!r} is not UTF-8",
                        hint="rename it with UTF-8 characters (convmv -f latin1 -t utf-8), "
                        "or give a path that reaches it through UTF-8 names",
                    ),
                    as_json,
                )


def _here(settings: Settings, inp: RepoMineInput, out: Console, as_json: bool) -> None:
    """Mine in this process, commit after commit, printing each as it ends."""
    from workflows.composition import make_services
    from workflows.repo_mining import mine_commits
    from workflows.types import RepoMineResult, TakeRepoInput, YieldInput

    t0 = time.monotonic()
    services = make_services(settings)
    try:
        plan = services.take_repository(
            TakeRepoInput(source=inp.source, revisions=inp.revisions, paths=inp.paths,
                          limit=inp.limit, max_bytes=inp.max_bytes, suite=inp.suite)
        )  # fmt: skip
    except EnvFactoryError as exc:
        _fail(exc, as_json)
    snap = plan.snapshot
    out.print(
        f"{shown(snap.source)} at {snap.head[:12]}: {len(plan.commits)} commits", markup=False
    )
    results = mine_commits(
        services, plan, repeats=inp.config.repeats, pass_to_pass_max=inp.pass_to_pass_max,
        hunk_max=inp.hunk_max,
        on_result=lambda i, r: _print_row(out, i, len(plan.commits), r),
    )  # fmt: skip
    ref = services.store_yield(
        YieldInput(snapshot=snap, results=tuple(results), wall_s=time.monotonic() - t0)
    )
    _report(out, RepoMineResult(snapshot=snap, candidates=tuple(results), totals=ref.table,
                                yield_key=ref.key), as_json)  # fmt: skip


def _durable(
    settings: Settings, inp: RepoMineInput, wait: bool, out: Console, as_json: bool
) -> None:
    """Start (or find) the MineRepository workflow; with `wait`, follow it to its end."""
    from workflows.client import connect, mining_status, start_mining
    from workflows.types import RepoMineResult

    try:
        wid = start_mining(settings, inp)
    except EnvFactoryError as exc:
        _fail(exc, as_json)
    if not wait:
        if as_json:
            typer.echo(json.dumps({"workflow_id": wid}))
        else:
            out.print(f"started workflow {wid} (see: envfactory status {wid})", markup=False)
        return

    async def follow() -> RepoMineResult:
        client = await connect(settings.temporal)
        shown: set[str] = set()
        handle = client.get_workflow_handle(wid, result_type=RepoMineResult)
        while True:
            status = await mining_status(client, wid)
            for r in status.ended:
                if r.commit not in shown:
                    shown.add(r.commit)
                    _print_row(out, len(shown) - 1, len(status.commits), r)
            if status.done:
                return RepoMineResult.model_validate(await handle.result())
            await asyncio.sleep(2)

    try:
        result = asyncio.run(follow())
    except EnvFactoryError as exc:
        _fail(exc, as_json)
    _report(out, result, as_json)


def _print_row(out: Console, i: int, total: int, r: CandidateResult) -> None:
    """One commit's outcome; its subject and reason (the repository's words and build
    output) with control characters escaped: they never reach the terminal raw."""
    line = f"[{i + 1}/{total}] {shown(r.commit[:12])} {shown(r.subject[:60])}"
    out.print(line, markup=False, end=" ")
    out.print(f"[{COLOUR[r.outcome]}]{r.outcome}[/]", end="")
    out.print(f" {shown(r.reason)}" if r.reason else "", markup=False)


def _report(out: Console, result: RepoMineResult, as_json: bool) -> None:
    if as_json:
        body = {"repository": result.snapshot.model_dump(mode="json"),
                "candidates": [r.model_dump(mode="json") for r in result.candidates],
                "totals": result.totals.model_dump(mode="json"),
                "yield_key": result.yield_key}  # fmt: skip
        typer.echo(json.dumps(body))
        return
    _print_table(out, result.totals.model_dump(mode="json"), list(result.candidates))
    out.print(f"yield table stored as artifact {result.yield_key}", markup=False)


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
            out.print(f"  finding {shown(r.commit[:12])}: {shown(finding)}", markup=False)
    per = totals["cpu_s_per_published"]
    out.print(f"CPU s per published: {per}; wall s per published: "
              f"{totals['wall_s_per_published']}", markup=False)  # fmt: skip


def _fail(exc: EnvFactoryError, as_json: bool) -> NoReturn:
    if as_json:
        typer.echo(
            json.dumps({"error": type(exc).__name__, "message": exc.message, "hint": exc.hint})
        )
    else:
        typer.echo(f"error: {shown(str(exc), keep=chr(10))}", err=True)
    raise typer.Exit(1)
