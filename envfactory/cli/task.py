"""`envfactory task …`: existing task suites in the store — import, list, show, validate.

`import` reads Harbor / Terminal-Bench directories into the store (status `imported`,
with their origin); `validate` starts the durable `ValidateTasks` workflow on stored
tasks (build → gates → findings to review → published or rejected). Exit codes: 0 ok,
1 when any task could not be imported / was rejected (with --wait), or Temporal is not
reachable (the message says how to start it).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envfactory.core.errors import EnvFactoryError
from envfactory.core.models import EnvStatus
from envfactory.core.settings import Settings, load_settings
from envfactory.store import ArtifactStore, Store
from envfactory.suites import (
    ImportReport,
    import_tasks,
    resolve_env_ids,
    task_detail,
    task_summaries,
)

app = typer.Typer(
    name="task",
    help="Existing task suites (Harbor / Terminal-Bench) in the store: import, list, show, "
    "validate.\n\nExamples:\n\n  envfactory task import examples/tasks\n\n"
    "  envfactory task list --suite tasks\n\n  envfactory task validate --suite tasks --wait",
    no_args_is_help=True,
)
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
OUTCOME_COLOUR = {"passed": "green", "published": "green", "rejected": "red"}


def _out() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _fail(exc: EnvFactoryError, as_json: bool) -> NoReturn:
    if as_json:
        typer.echo(
            json.dumps({"error": type(exc).__name__, "message": exc.message, "hint": exc.hint})
        )
    else:
        typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(1)


def _stores(settings: Settings) -> tuple[Store, ArtifactStore]:
    return Store.from_settings(settings), ArtifactStore.from_settings(settings)


@app.command("import")
def import_(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Task directories, suite directories of "
            "tasks, or git checkouts holding them (searched two levels down)."
        ),
    ],
    suite: Annotated[
        str | None, typer.Option(help="Suite name (default: the suite directory's name).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Store tasks as environments (status imported) with their origin: suite, path, git
    remote and commit, and the sha256 of every file read. Importing an unchanged task
    again changes nothing. Bad tasks are listed with what to fix while the good ones are
    stored; the exit status is 1 if any task failed.

    Examples:

      envfactory task import examples/tasks examples/tasks-tb

      envfactory task import ~/src/terminal-bench --suite tb1 --json
    """
    settings = load_settings()
    store, artifacts = _stores(settings)
    with store:
        limits = settings.sandbox
        report = import_tasks(
            paths, store, artifacts, suite=suite, caps=limits.task_caps, files=limits.task_files
        )
    _print_import(report, as_json)
    raise typer.Exit(1 if report.failed else 0)


def _print_import(report: ImportReport, as_json: bool) -> None:
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "imported": [
                        {
                            "env_id": e.env_id,
                            "name": e.name,
                            "suite": e.suite,
                            "path": str(e.path),
                            "format": e.format,
                            "new": e.new,
                            "warnings": list(e.warnings),
                        }
                        for e in report.imported
                    ],
                    "failed": [
                        {
                            "path": str(f.path),
                            "error": type(f.error).__name__,
                            "message": f.error.message,
                            "hint": f.error.hint,
                        }
                        for f in report.failed
                    ],
                }
            )
        )
        return
    out = _out()
    # names, paths and messages are the task's text: `[environment]` or `[/x]` in them is
    # not markup (rich would drop the one and fail on the other)
    for e in report.imported:
        word = "imported" if e.new else "unchanged"
        line = f"{word:9}  {e.env_id}  {e.suite}/{e.name}  ({e.format}, {e.path})"
        out.print(line, markup=False)
        for w in e.warnings:
            out.print(f"[yellow]warning[/]    {escape(w)}")
    for f in report.failed:
        out.print(f"[red]failed[/]     {escape(f'{f.path}: {f.error.message}')}")
        if f.error.hint:
            out.print(f"           hint: {f.error.hint}", markup=False)
    new = sum(1 for e in report.imported if e.new)
    out.print(
        f"{new} imported, {len(report.imported) - new} unchanged, {len(report.failed)} failed"
    )


@app.command("list")
def list_tasks(
    suite: Annotated[str | None, typer.Option(help="Only tasks of this suite.")] = None,
    status: Annotated[EnvStatus | None, typer.Option(help="Only tasks in this status.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """List imported tasks: env id, name, suite, status, last gate outcome.

    Examples:

      envfactory task list

      envfactory task list --suite tasks --status rejected --json
    """
    try:
        with Store.from_settings(load_settings()) as store:
            rows = task_summaries(store, suite=suite, status=status)
    except EnvFactoryError as exc:
        _fail(exc, as_json)
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in rows]))
        return
    if not rows:
        _out().print("no imported tasks: `envfactory task import DIR` stores some")
        return
    table = Table(box=None, pad_edge=False)
    for col in ("env id", "name", "suite", "status", "last gate outcome"):
        table.add_column(col, no_wrap=True)
    for r in rows:
        outcome = r.outcome.value if r.outcome else "—"
        table.add_row(
            r.env_id, r.name, r.suite or "—", _coloured(r.status.value), _coloured(outcome)
        )
    _out().print(table)


def _coloured(word: str) -> str:
    colour = OUTCOME_COLOUR.get(word)
    return f"[{colour}]{word}[/]" if colour else word


@app.command("show")
def show(
    env_id: Annotated[str, typer.Argument(help="A task's env id, as `task list` prints it.")],
    as_json: JsonOpt = False,
) -> None:
    """Show one task: status, origin (suite, path, repository, commit), verifier, the
    last gate outcome with its reasons, findings and open review items.

    Example:

      envfactory task show env-3f2a9c1b7d0e
    """
    try:
        with Store.from_settings(load_settings()) as store:
            d = task_detail(store, env_id)
    except EnvFactoryError as exc:
        _fail(exc, as_json)
    if as_json:
        typer.echo(d.model_dump_json())
        return
    s, o, out = d.summary, d.origin, _out()
    out.print(f"[bold]{s.env_id}[/]  {s.name}  ({s.source})")
    out.print(f"  status      {_coloured(s.status.value)}")
    out.print(f"  suite       {s.suite or '—'}")
    out.print(f"  path        {o.path if o else '—'}")
    out.print(f"  repository  {(o.repository if o else None) or '—'}")
    out.print(f"  commit      {(o.commit if o else None) or '—'}")
    out.print(f"  file hashes {(o.files_key if o else None) or '—'}")
    out.print(f"  verifier    {d.verifier_entry or '—'}  ({d.verifier_author or '—'})")
    out.print(f"  last gates  {_coloured(s.outcome.value) if s.outcome else 'not validated yet'}")
    for reason in d.gate_reasons:
        out.print(f"    - {reason}")
    out.print(
        f"  findings    {d.findings}, open review items: {', '.join(d.open_review_items) or 'none'}"
    )


@app.command("validate")
def validate(
    env_ids: Annotated[list[str] | None, typer.Argument(help="Env ids of stored tasks.")] = None,
    suite: Annotated[str | None, typer.Option(help="Every task of this suite.")] = None,
    repeats: Annotated[
        int | None,
        typer.Option(
            "--repeats", "-r", min=1, help="Runs per gate check (default: settings.gates.repeats)."
        ),
    ] = None,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait", help="Follow the workflow to its end and print each task's outcome."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Validate stored tasks durably: start the ValidateTasks workflow (build → gates →
    findings to the review queue → published or rejected). Needs Temporal (`envfactory
    up`). Progress: `envfactory status WORKFLOW_ID`.

    Examples:

      envfactory task validate --suite tasks

      envfactory task validate env-3f2a9c1b7d0e env-77aa01c2d3e4 --repeats 1 --wait
    """
    settings = load_settings()
    try:
        ids = _resolve(settings, env_ids or [], suite)
        from workflows.client import start_validation

        wid = start_validation(settings, ids, repeats=repeats, label=suite)
    except EnvFactoryError as exc:
        _fail(exc, as_json)
    if not wait:
        if as_json:
            typer.echo(json.dumps({"workflow_id": wid, "env_ids": ids}))
        else:
            _out().print(
                f"started workflow {wid} for {len(ids)} task(s) (see: envfactory status {wid})"
            )
        return
    _follow(settings, wid, as_json)


def _resolve(settings: Settings, env_ids: list[str], suite: str | None) -> list[str]:
    with Store.from_settings(settings) as store:
        return resolve_env_ids(store, env_ids, suite)


def _follow(settings: Settings, wid: str, as_json: bool) -> None:
    """Print each task's stage changes until the workflow ends, then the outcomes."""
    from workflows.client import connect, validation_status

    out, seen = _out(), dict[str, str]()

    async def poll() -> Any:
        client = await connect(settings.temporal)
        while True:
            status = await validation_status(client, wid)
            for t in status.tasks:
                if not as_json and seen.get(t.env_id) != t.stage:
                    seen[t.env_id] = t.stage
                    out.print(f"{time.strftime('%H:%M:%S')}  {t.env_id}  {t.stage}")
            if status.done:
                return status
            await asyncio.sleep(1)

    try:
        final = asyncio.run(poll())
    except EnvFactoryError as exc:
        _fail(exc, as_json)
    if as_json:
        typer.echo(json.dumps({"workflow_id": wid, **final.model_dump(mode="json")}))
    else:
        for t in final.tasks:
            verdict = t.verdict.value if t.verdict else "—"
            out.print(f"{t.env_id}  {_coloured(t.outcome or '—')}  (gates: {verdict})")
            for reason in t.reasons:
                out.print(f"    - {reason}")
    raise typer.Exit(0 if all(t.outcome == "published" for t in final.tasks) else 1)
