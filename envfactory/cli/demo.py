"""`envfactory demo` (what `make demo` runs): every example seed, end to end, on one machine.

Steps: the local base image → an embedded Temporal dev server and an in-process worker →
each example seed submitted and its `SynthesizeEnvironment` pipeline started (scripted
agents, or a real endpoint when settings say backend=openai) → live progress → gate
tables → optionally a short SAO training run on the published environments.

Nothing is decided silently: when a pipeline waits for review, the demo prints each open
item with its evidence and decides it through the same `decide` update a human would
use, as reviewer "demo", saying which decision and why (confirm anything with hard
evidence; dismiss findings that rest on a heuristic alone).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

from envfactory.core.errors import ConfigError, EnvFactoryError
from envfactory.core.models import Decision, GateVerdict, Rule, TaskSeed
from envfactory.core.settings import Settings, load_settings

from .status import render
from .validate import check_mark
from .worker import DEFAULT_SCRIPTS, announce_agents, make_services, with_scripts

REVIEWER = "demo"


def load_examples(settings: Settings, seeds_dir: Path) -> list[tuple[str, Any]]:
    """(directory name, validated draft) of every seed under `seeds_dir`; nothing stored."""
    from envfactory.seeds import load_seed

    if not seeds_dir.is_dir():
        raise ConfigError(
            f"{seeds_dir}: no such directory of seeds",
            hint="pass --seeds-dir DIR holding one sub-directory per seed",
        )
    paths = sorted(p for p in seeds_dir.iterdir() if (p / "seed.yaml").exists())
    if not paths:
        raise ConfigError(
            f"{seeds_dir}: no seed directories (DIR/<name>/seed.yaml)",
            hint="pass --seeds-dir DIR holding one sub-directory per seed",
        )
    return [(path.name, load_seed(path, settings.seeds)) for path in paths]


def refuse_unrunnable(settings: Settings, drafts: list[tuple[str, Any]], console: Console) -> None:
    """Before anything starts: every seed a scripted role has no script for, named, then
    one ConfigError (its pipeline would only stop at that role)."""
    from envfactory.agents.scriptbook import require_scripts, script_book, seed_names

    book = script_book(settings.agents.script_dirs)
    refused = []
    for name, draft in drafts:
        f = draft.fields
        try:
            require_scripts(
                settings.agents,
                book,
                seed_names(draft.seed_id, f.title, draft.content_hash, f.source, (name,)),
                f.title,
            )
        except ConfigError as exc:
            console.print(f"[red]refused[/] seed {name}: {exc.message}", highlight=False)
            refused.append((name, exc))
    if refused:
        raise ConfigError(
            f"{len(refused)} of {len(drafts)} seed(s) cannot run with these "
            f"agent settings: {', '.join(n for n, _ in refused)}",
            hint=refused[0][1].hint,
        )


def submit_examples(
    settings: Settings, drafts: list[tuple[str, Any]], console: Console
) -> list[tuple[str, TaskSeed]]:
    """Store every example seed (an already stored one is reused), named by directory."""
    from envfactory.seeds import store_draft
    from envfactory.store import ArtifactStore, Store

    store, artifacts = Store.from_settings(settings), ArtifactStore.from_settings(settings)
    out = []
    with store:
        for name, draft in drafts:
            seed = store.seeds.find_by_hash(draft.content_hash) or store_draft(
                draft, store=store, artifacts=artifacts
            )
            console.print(f"seed {seed.id}  {name}: {seed.title}")
            out.append((name, seed))
    return out


def _rule(text: str) -> Rule | None:
    try:
        return Rule.parse(text)
    except ValueError:
        return None


def review_decision(finding: Any) -> tuple[Decision, str]:
    rule = _rule(finding.rule)
    if rule is not None and rule.heuristic:  # a heuristic alone: dismissed, and said so
        return Decision.DISMISS, f"heuristic rule {finding.rule!r} alone; no hard evidence"
    if rule is not None and not rule.shortcut:  # too strict: whether exact bytes are required
        return Decision.DISMISS, f"{finding.rule!r}: the demo keeps the verifier as gated"
    return Decision.CONFIRM, f"{finding.source} evidence for rule {finding.rule!r}"


async def decide_open(client: Any, services: Any, wid: str, status: Any, console: Console) -> None:
    """Print each open review item and decide it through the workflow's update."""
    from workflows.client import decide
    from workflows.types import ReviewDecision

    for item_id in status.open_review_items:
        item = services.store.reviews.get(item_id)
        finding = services.store.findings.get(item.finding_id)
        decision, why = review_decision(finding)
        console.print(
            f"[yellow]review[/] {item_id} ({finding.rule}, {finding.source}, "
            f"found by {finding.found_by}): "
            f"{finding.evidence.summary[:300]}"
        )
        console.print(
            f"  → demo reviewer decides [bold]{decision.value}[/]: {why} "
            "(sent through the same `decide` update a human reviewer uses)"
        )
        await decide(
            client,
            wid,
            ReviewDecision(
                item_id=item_id, decision=decision, reviewer=REVIEWER, comment=f"demo: {why}"
            ),
        )


def gate_table(services: Any, env_id: str, report_id: str) -> Table:
    report = services.store.gate_reports.get(int(report_id))
    passed = report.verdict == GateVerdict.PASSED
    table = Table(
        title=f"{env_id} — verifier v{report.verifier_version}: gates {report.verdict.value}",
        title_style="bold green" if passed else "bold red",
    )
    for col in ("check", "name", "expected", "observed", "ok", "s"):
        table.add_column(col)
    for c in report.checks:
        ok = check_mark(c)
        table.add_row(
            c.kind.value,
            c.name,
            str(c.expected),
            " ".join(map(str, c.observed)),
            ok,
            f"{c.duration_s:.1f}",
        )
    return table


async def run_pipelines(
    settings: Settings,
    services: Any,
    seeds: list[tuple[str, TaskSeed]],
    target: str,
    console: Console,
) -> list[Any]:
    from temporalio.client import WorkflowExecutionStatus

    from workflows.client import astart_synthesis, pipeline_config, status
    from workflows.worker import serve

    stop, ready = asyncio.Event(), asyncio.Event()
    clients: list[Any] = []

    def on_ready(client: Any) -> None:
        clients.append(client)
        ready.set()

    worker = asyncio.create_task(
        serve(settings, services, target=target, stop=stop, on_ready=on_ready)
    )
    await asyncio.wait([worker, asyncio.create_task(ready.wait())], return_when="FIRST_COMPLETED")
    if worker.done():
        worker.result()  # raises the worker's start-up error
    client = clients[0]
    handles = [
        await astart_synthesis(client, seed.id, pipeline_config(settings)) for _, seed in seeds
    ]
    decided: set[str] = set()
    shown = _Shown(console)
    try:
        with shown:
            while True:
                states = [await status(client, h.id) for h in handles]
                running = [
                    (await h.describe()).status == WorkflowExecutionStatus.RUNNING for h in handles
                ]
                shown.update([h.id for h in handles], states)
                for h, s in zip(handles, states, strict=True):
                    if s.stage == "awaiting-review" and set(s.open_review_items) - decided:
                        shown.pause()
                        await decide_open(client, services, h.id, s, console)
                        decided |= set(s.open_review_items)
                        shown.resume()
                if not any(running):
                    break
                await asyncio.sleep(1)
        return [await _result(h, s) for h, s in zip(handles, states, strict=True)]
    finally:
        stop.set()
        await worker


class _Shown:
    """Live status panels on a terminal; plain new history lines anywhere else (logs, CI)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live = Live(console=console, refresh_per_second=2) if console.is_terminal else None
        self.printed: dict[str, int] = {}

    def __enter__(self) -> _Shown:
        if self.live:
            self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live:
            self.live.stop()

    def pause(self) -> None:
        if self.live:
            self.live.stop()

    def resume(self) -> None:
        if self.live:
            self.live.start()

    def update(self, ids: list[str], states: list[Any]) -> None:
        if self.live:
            self.live.update(Group(*(render(i, s) for i, s in zip(ids, states, strict=True))))
            return
        for wid, s in zip(ids, states, strict=True):
            for line in s.history[self.printed.get(wid, 0) :]:
                self.console.print(f"{wid}: {line}")
            self.printed[wid] = len(s.history)


async def _result(handle: Any, status: Any) -> Any:
    """The pipeline's result; a failed pipeline becomes a rejected result naming the cause."""
    from temporalio.client import WorkflowFailureError

    from workflows.types import SynthesisResult

    try:
        return await handle.result()
    except WorkflowFailureError as exc:
        cause = getattr(exc.cause, "message", None) or str(exc.cause or exc)
        return SynthesisResult(
            seed_id=status.seed_id or "",
            env_id=status.env_id,
            outcome="rejected",
            reasons=(f"pipeline failed: {cause}",),
        )


def export_published(
    settings: Settings, services: Any, results: list[Any], console: Console
) -> Path | None:
    """Write the published environments as one pack (build contexts, not image archives)."""
    published = [r for r in results if r.outcome == "published"]
    if not published:
        console.print("pack: no published environment, nothing to export")
        return None
    try:
        from envfactory.packs import ExportItem, export_pack
    except ImportError as exc:
        console.print(f"pack: envfactory.packs is not available ({exc}); skipping")
        return None
    store = services.store
    items = []
    for r in published:
        spec = store.environments.get(r.env_id)
        items.append(
            ExportItem(
                spec=spec,
                verifier=store.verifiers.get(r.env_id, r.verifier_version),
                gate_report=store.gate_reports.get(int(r.gate_report_id)),
                seed=store.seeds.get(spec.seed_id) if spec.seed_id else None,
            )
        )
    out = settings.home / "packs" / f"demo-{published[0].env_id}"
    manifest = export_pack(items, out, artifacts=services.artifacts, created_by=REVIEWER)
    console.print(
        f"pack: {out} ({len(manifest.environments)} environment(s), "
        f"{len(manifest.members)} member(s) with sha256)"
    )
    return out


def run_ending_gently(cmd: list[str], *, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(cmd, capture_output=True, text=True)`, except that when the wait is
    interrupted (this process got SIGTERM or SIGINT, or the timeout passed) the child gets
    SIGTERM first, so it removes its sandboxes (`ending.py`), and is killed only when it
    has not ended within a minute. `subprocess.run` would SIGKILL it at once."""
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except BaseException:
            proc.terminate()
            try:
                proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def maybe_train(settings: Settings, pack: Path | None, console: Console) -> None:
    """A short SAO run on the published pack, when the trainer extra is installed."""
    if pack is None:
        console.print("trainer: no pack to train on; skipping")
        return
    if importlib.util.find_spec("torch") is None:  # the trainer extra brings torch
        console.print(
            "trainer: the `trainer` extra is not installed (pip install -e '.[trainer]'); skipping"
        )
        return
    cmd = [
        str(Path(sys.executable).parent / "envfactory"),
        "train",
        "--pack",
        str(pack),
        "--model",
        "tiny",
        "--steps",
        "3",
        "--batch-size",
        "4",
        "--max-turns",
        "4",
        "--out",
        str(settings.home / "train-demo"),
        "--json",
    ]
    # a short run: each pack episode is real sandboxed exec plus a fresh-container verification
    console.print(f"trainer: {' '.join(cmd[1:])}")
    done = run_ending_gently(cmd, timeout_s=3600)
    if done.returncode != 0:
        console.print(
            f"[red]trainer failed[/] (exit {done.returncode}): {done.stderr.strip()[-2000:]}"
        )
        return
    try:
        plot = json.loads(done.stdout[done.stdout.index("{") :])["plot"]
    except (ValueError, KeyError, IndexError):
        console.print(f"trainer: finished, but printed no plot path: {done.stdout[-500:]}")
        return
    console.print(f"trainer: short SAO run on the demo pack done; plot at {plot}")


def demo(
    seeds_dir: Annotated[Path, typer.Option(help="Directory of example seeds.")] = Path(
        "examples/seeds"
    ),
    scripts: Annotated[list[Path] | None, typer.Option(help="Agent script directories.")] = None,
    train: Annotated[
        bool, typer.Option(help="Train briefly on the published environments.")
    ] = True,
) -> None:
    """Run every example seed end to end to published environments and print their gates.

    Examples:

      envfactory demo

      ENVFACTORY_AGENTS__JUDGE__BACKEND=openai ENVFACTORY_AGENTS__JUDGE__MODEL=gpt-4o-mini envfactory demo --no-train

    Exits 1 when any seed ends other than published (each named with why), and refuses,
    before anything starts, seeds that a scripted role has no recorded script for.
    """
    from sandboxes import DockerEngine
    from workflows.devserver import DevServer, free_port

    console = Console()
    try:
        settings = with_scripts(load_settings(), tuple(scripts or DEFAULT_SCRIPTS))
        settings.home.mkdir(parents=True, exist_ok=True)
        drafts = load_examples(settings, seeds_dir)
        refuse_unrunnable(settings, drafts, console)
        announce_agents(settings, console)
        with contextlib.ExitStack() as stack:
            console.print(
                "base image: ensuring the local base image (built with debootstrap once)…"
            )
            console.print(
                f"base image: {DockerEngine(settings.sandbox).ensure_base_image('python')}"
            )
            target = settings.temporal.address
            if target is None:
                server = stack.enter_context(
                    DevServer(free_port(), log_file=settings.home / "demo-temporal.log")
                )
                target = server.address
                console.print(
                    f"Temporal: embedded dev server on {target} (in memory, for this demo)"
                )
            seeds = submit_examples(settings, drafts, console)
            aliases = {seed.id: (name,) for name, seed in seeds}
            services = make_services(settings, (), aliases)
            results = asyncio.run(run_pipelines(settings, services, seeds, target, console))
            summarize(services, results, console)
            pack = export_published(settings, services, results, console)
            if train:
                maybe_train(settings, pack, console)
    except EnvFactoryError as exc:
        console.print(f"[red]error:[/] {exc}", highlight=False)
        raise typer.Exit(1) from exc
    names = {seed.id: name for name, seed in seeds}
    if not all_published(results, names, console):
        raise typer.Exit(1)


def all_published(results: list[Any], names: dict[str, str], console: Console) -> bool:
    """Say, per seed, why it did not end published; True when every seed did."""
    missed = [r for r in results if r.outcome != "published"]
    for r in missed:
        why = "; ".join(r.reasons) or "no reason recorded"
        console.print(
            f"[red]not published[/] {names.get(r.seed_id, r.seed_id)} ({r.seed_id}): "
            f"{r.outcome} — {why}",
            highlight=False,
        )
    if missed:
        console.print(f"demo: {len(missed)} of {len(results)} seed(s) did not end published")
    return not missed


def summarize(services: Any, results: list[Any], console: Console) -> None:
    for r in results:
        if r.gate_report_id:
            console.print(gate_table(services, r.env_id, r.gate_report_id))
    table = Table(
        "seed",
        "environment",
        "outcome",
        "judge solve rate",
        "verifier",
        "patch rounds",
        title="demo",
    )
    for r in results:
        rate = "—" if r.solve_rate is None else f"{r.solve_rate:.2f}"
        table.add_row(
            r.seed_id,
            r.env_id or "—",
            r.outcome,
            rate,
            f"v{r.verifier_version}" if r.verifier_version else "—",
            str(r.rounds),
        )
    console.print(table)
    for r in results:
        for reason in r.reasons:
            console.print(f"  {r.seed_id}: {reason}")
