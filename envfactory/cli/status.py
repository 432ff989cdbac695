"""`envfactory status [ID]`: live progress of pipelines, from the workflows' status query.

The status comes from the running workflow itself (a Temporal query), not from the
database, so it shows exactly where the durable pipeline is: the box it is in, the judges'
rewards, the gate verdict, and the review items it is waiting for. A `validate-…` id
(`envfactory task validate`) shows one row per imported task: its stage, the gate
report's verdict, findings, outcome and reasons. A `mine-…` id (`envfactory repo mine
--durable`, a seed with `history:`) shows the repository, the commits ended of those
planned, and each ended commit's outcome and reason.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from envfactory.core.errors import EnvFactoryError
from envfactory.core.settings import load_settings
from workflows.types import PipelineStatus, RepoMineStatus, ValidateStatus

if TYPE_CHECKING:
    from temporalio.client import Client

Status = PipelineStatus | ValidateStatus | RepoMineStatus


def render(wid: str, s: PipelineStatus) -> Group:
    """A status as rich renderables (shared with `envfactory demo`)."""
    head = Text.assemble(
        (wid, "bold"),
        f"  seed {s.seed_id}  env {s.env_id or '—'}  ",
        ("stage ", "dim"),
        (s.stage, "cyan"),
    )
    if s.outcome:
        colour = {"published": "green", "unproven": "yellow", "too_easy": "yellow"}.get(
            s.outcome, "red"
        )
        head.append(f"  → {s.outcome}", style=f"bold {colour}")
    parts: list[RenderableType] = [head]
    if s.agents:
        t = Table(box=None, show_header=True, pad_edge=False)
        for col in ("agent", "trajectory", "claimed", "reward"):
            t.add_column(col)
        for a in s.agents:
            reward = "failed" if a.failed else ("—" if a.reward is None else str(a.reward))
            t.add_row(f"{a.kind} {a.index}", a.trajectory_id, str(a.claimed_solved), reward)
        parts.append(t)
    facts = []
    if s.solve_rate is not None:
        band = f" (band {s.solve_rate_band.text()})" if s.solve_rate_band else ""
        facts.append(f"judge solve rate {s.solve_rate:.2f}{band}")
    if s.verifier_version is not None:
        facts.append(f"verifier v{s.verifier_version} (round {s.round})")
    if s.gate_passed is not None:
        facts.append(f"gates {'passed' if s.gate_passed else 'failed'} (report {s.gate_report_id})")
    if facts:
        parts.append(Text("  ".join(facts)))
    parts += [Text(f"  ✗ {r}", style="red") for r in s.gate_reasons[:8]]
    if s.open_review_items:
        parts.append(Text(f"waiting for review: {', '.join(s.open_review_items)}", style="yellow"))
    parts += [Text(f"  · {line}", style="dim") for line in s.history[-12:]]
    parts += [Text(f"  reason: {r}", style="red") for r in s.outcome_reasons]
    return Group(*parts)


def render_validation(wid: str, s: ValidateStatus) -> Group:
    """A `ValidateTasks` status: one row per task."""
    done = sum(1 for t in s.tasks if t.stage == "done")
    parts: list[RenderableType] = [
        Text.assemble((wid, "bold"), f"  {done}/{len(s.tasks)} task(s) done")
    ]
    t = Table(box=None, show_header=True, pad_edge=False)
    for col in ("task", "stage", "gates", "findings", "open review", "outcome"):
        t.add_column(col)
    for task in s.tasks:
        colour = {"published": "green", "rejected": "red"}.get(task.outcome or "", "")
        t.add_row(
            task.env_id,
            task.stage,
            task.verdict.value if task.verdict else "—",
            str(len(task.finding_ids)),
            ", ".join(task.open_review_items) or "—",
            f"[{colour}]{task.outcome}[/]" if colour else "—",
        )
    parts.append(t)
    for task in s.tasks:
        parts += [Text(f"  {task.env_id}: {r}", style="red") for r in task.reasons[:8]]
    return Group(*parts)


def render_mining(wid: str, s: RepoMineStatus) -> Group:
    """A `MineRepository` status: one row per commit ended."""
    head = Text.assemble(
        (wid, "bold"),
        f"  {s.source} at {(s.head or '—')[:12]}  {len(s.ended)}/{len(s.commits)} commit(s) ended",
    )
    t = Table(box=None, show_header=True, pad_edge=False)
    for col in ("commit", "outcome", "stage", "reason"):
        t.add_column(col)
    colours = {"published": "green", "rejected": "red", "dropped": "yellow"}
    for r in s.ended:
        colour = colours.get(r.outcome, "")
        t.add_row(r.commit[:12], f"[{colour}]{r.outcome}[/]", r.stage, Text(r.reason[:120]))
    return Group(head, t)


def _is_mining(wid: str) -> bool:
    from workflows.client import MINE_PREFIX

    return wid.startswith(MINE_PREFIX)


def _is_validation(wid: str) -> bool:
    from workflows.client import VALIDATE_PREFIX

    return wid.startswith(VALIDATE_PREFIX)


async def _one(client: Client, wid: str) -> Status:
    """The status of workflow `wid`, asked the way its type answers (a mining run's
    validations have `mine-…` ids too: the type decides, not the id)."""
    from workflows.client import mining_status, status, validation_status

    kind = (await client.get_workflow_handle(wid).describe()).workflow_type
    if kind == "ValidateTasks":
        return await validation_status(client, wid)
    if kind == "MineRepository":
        return await mining_status(client, wid)
    return await status(client, wid)


def _render(wid: str, s: Status) -> Group:
    if isinstance(s, RepoMineStatus):
        return render_mining(wid, s)
    return render_validation(wid, s) if isinstance(s, ValidateStatus) else render(wid, s)


def _finished(s: Status) -> bool:
    return s.done if isinstance(s, (ValidateStatus, RepoMineStatus)) else s.stage == "done"


async def _stage(client: Client, wid: str) -> str:
    s = await _one(client, wid)
    if isinstance(s, RepoMineStatus):
        return f"{len(s.ended)}/{len(s.commits)} commits ended"
    if isinstance(s, ValidateStatus):
        return f"{sum(1 for t in s.tasks if t.stage == 'done')}/{len(s.tasks)} tasks done"
    return str(s.stage)


def status(
    workflow_id: Annotated[str | None, typer.Argument(help="Workflow id or seed id.")] = None,
    watch: Annotated[
        bool, typer.Option("--watch", "-w", help="Refresh until it finishes.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON.")] = False,
) -> None:
    """Show pipeline progress: one workflow in detail, or the recent ones.

    Examples:

      envfactory status

      envfactory status synthesize-seed-3f2a9c1b7d0e --watch

      envfactory status seed-3f2a9c1b7d0e --json

      envfactory status validate-tasks-3e1f0c2a9b7d

      envfactory status mine-calc-5d41402abc4b --watch
    """
    from workflows.client import SYNTH_PREFIX, connect

    settings = load_settings()
    console = Console()

    async def main() -> None:
        client = await connect(settings.temporal)
        if workflow_id is None:
            await _list_recent(client, console, as_json)
            return
        wid = workflow_id
        if not wid.startswith(SYNTH_PREFIX) and not _is_validation(wid) and not _is_mining(wid):
            wid = SYNTH_PREFIX + wid
        await _show_one(client, console, wid, as_json=as_json, watch=watch)

    from temporalio.service import RPCError

    try:
        asyncio.run(main())
    except EnvFactoryError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc
    except RPCError as exc:  # e.g. no such workflow id
        console.print(f"[red]error:[/] {workflow_id}: {exc.message}")
        raise typer.Exit(1) from exc


async def _list_recent(client: Client, console: Console, as_json: bool) -> None:
    """The recent synthesis and validation workflows, a running one with its stage."""
    from workflows.client import list_synthesis

    rows = await list_synthesis(client)
    rows += await list_synthesis(client, workflow_type="ValidateTasks")
    rows += await list_synthesis(client, workflow_type="MineRepository")
    if as_json:
        typer.echo(json.dumps([{"workflow_id": w, "status": st} for w, st in rows]))
        return
    table = Table("workflow", "execution", "stage")
    for wid, state in rows:
        table.add_row(wid, state, await _stage(client, wid) if state == "running" else "—")
    console.print(table)


async def _show_one(
    client: Client, console: Console, wid: str, *, as_json: bool, watch: bool
) -> None:
    """One workflow in detail; with `watch`, refreshed until it finishes."""
    s = await _one(client, wid)
    if as_json:
        typer.echo(s.model_dump_json(indent=1))
        return
    if not watch:
        console.print(_render(wid, s))
        return
    with Live(_render(wid, s), console=console, refresh_per_second=4) as live:
        while not _finished(s):
            await asyncio.sleep(1)
            s = await _one(client, wid)
            live.update(_render(wid, s))
