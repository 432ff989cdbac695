"""Client helpers for the CLI and the API: connect, start, query, decide.

Workflow ids are derived from the seed id (`synthesize-<seed>`), so submitting the same
seed twice cannot start two pipelines: a running or finished one is reported instead;
only a failed or terminated run may be started again.

`start_synthesis(settings, seed_id)` is the hook for `envfactory seed submit`: it returns
the workflow id, or raises `ConfigError` naming the address it could not reach.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import socket
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import WorkflowAlreadyStartedError

from envfactory.core.errors import ConfigError
from envfactory.core.models import ReviewItem, SolveRateBand, TaskSeed
from envfactory.core.settings import Settings, TemporalSettings
from envfactory.repos.intake import repo_suite
from envfactory.store import Store

from .mine_flow import MineRepository
from .pipeline import SynthesizeEnvironment
from .types import (
    DecisionRecorded,
    PipelineConfig,
    PipelineStatus,
    RepoMineInput,
    RepoMineStatus,
    ReviewDecision,
    SynthesisInput,
    ValidateInput,
    ValidateStatus,
)
from .validate import ValidateTasks

SYNTH_PREFIX = "synthesize-"
VALIDATE_PREFIX = "validate-"
MINE_PREFIX = "mine-"


def address(settings: TemporalSettings) -> str:
    return settings.address or f"127.0.0.1:{settings.dev_port}"


def reachable(settings: TemporalSettings, timeout: float = 0.5) -> bool:
    """A cheap TCP check, so `seed submit` can say "stored, not started" without waiting."""
    return _tcp_connect(address(settings), timeout) is None


def _refused(target: str, timeout: float = 2.0) -> bool:
    """Whether a TCP connect to `target` is refused outright (nothing listens there); a
    timeout or any other failure is left to the SDK's own connect to report."""
    return isinstance(_tcp_connect(target, timeout), ConnectionRefusedError)


def _tcp_connect(target: str, timeout: float) -> Exception | None:
    """Open and close a TCP connection to `host:port`; the error, or None when it opened."""
    host, _, port = target.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout):
            return None
    except (OSError, ValueError) as exc:
        return exc


#: How long `connect` waits for a server that answers but is still starting.
STARTING_WAIT_S = 30.0


async def connect(settings: TemporalSettings, target: str | None = None) -> Client:
    """A client of `target`; a server still starting ("not healthy yet") is waited for up
    to `STARTING_WAIT_S`, anything else unreachable is a `ConfigError` at once."""
    target = target or address(settings)
    if _refused(target):  # said without starting the SDK's runtime, whose threads can
        # abort a process that exits right after a failed connect (seen under load)
        raise ConfigError(
            f"cannot reach Temporal at {target}: connection refused",
            hint="run `envfactory up` (embedded server) or set ENVFACTORY_TEMPORAL__ADDRESS",
        )
    deadline = asyncio.get_running_loop().time() + STARTING_WAIT_S
    while True:
        try:
            return await Client.connect(
                target,
                namespace=settings.namespace,
                api_key=settings.api_key,
                tls=bool(settings.api_key),
                data_converter=pydantic_data_converter,
            )
        except RuntimeError as err:  # the core SDK reports connection failures this way
            starting = "not healthy yet" in str(err)
            if starting and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(1.0)
                continue
            raise ConfigError(
                f"cannot reach Temporal at {target}: {err}",
                hint="run `envfactory up` (embedded server) or set ENVFACTORY_TEMPORAL__ADDRESS",
            ) from err


def pipeline_config(settings: Settings) -> PipelineConfig:
    g, t = settings.gates, settings.temporal
    return PipelineConfig(
        judges=g.judges,
        repeats=g.repeats,
        max_patch_rounds=g.max_patch_rounds,
        solve_rate_band=SolveRateBand(min=g.min_solve_rate, max=g.max_solve_rate),
        task_queue_agents=t.task_queue_agents,
        task_queue_sandbox=t.task_queue_sandbox,
    )


def synthesis_id(seed_id: str) -> str:
    return f"{SYNTH_PREFIX}{seed_id}"


async def astart_synthesis(
    client: Client, seed_id: str, config: PipelineConfig
) -> WorkflowHandle[SynthesizeEnvironment, object]:
    """Start (or find the already running) pipeline for a seed."""
    wid = synthesis_id(seed_id)
    try:
        return await client.start_workflow(
            SynthesizeEnvironment.run,
            SynthesisInput(seed_id=seed_id, config=config),
            id=wid,
            task_queue=config.task_queue_agents,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        )
    except WorkflowAlreadyStartedError:
        return client.get_workflow_handle_for(SynthesizeEnvironment.run, wid)


def start_synthesis(settings: Settings, seed_id: str) -> str:
    """Synchronous hook for `envfactory seed submit`: the workflow id."""

    async def go() -> str:
        client = await connect(settings.temporal)
        handle = await astart_synthesis(client, seed_id, pipeline_config(settings))
        return handle.id

    return asyncio.run(go())


def validation_id(env_ids: list[str] | tuple[str, ...], label: str | None = None) -> str:
    """`validate-[<label>-]<hash of the sorted env ids>`: the same set of tasks asked for
    twice while a run is going finds that run instead of starting a second one."""
    digest = hashlib.sha256("\n".join(sorted(set(env_ids))).encode()).hexdigest()[:12]
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-")[:60] if label else ""
    return f"{VALIDATE_PREFIX}{tag + '-' if tag else ''}{digest}"


async def astart_validation(
    client: Client, env_ids: list[str], config: PipelineConfig, wid: str | None = None
) -> WorkflowHandle[ValidateTasks, object]:
    """Start `ValidateTasks` (or attach to the one already running under the same id).

    A finished run does not block a new one: validating again after a review (or a gate
    change) is what a user wants."""
    return await client.start_workflow(
        ValidateTasks.run,
        ValidateInput(env_ids=tuple(dict.fromkeys(env_ids)), config=config),
        id=wid or validation_id(env_ids),
        task_queue=config.task_queue_agents,
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )


def start_validation(
    settings: Settings, env_ids: list[str], *, repeats: int | None = None, label: str | None = None
) -> str:
    """Synchronous hook for `envfactory task validate`: the workflow id."""
    return asyncio.run(api_validate_sink(settings)(env_ids, repeats, label))


def mining_id(inp: RepoMineInput) -> str:
    """`mine-<suite>-<hash of what is mined>`: the same repository, revisions, paths and
    limit asked for twice while a run is going finds that run."""
    what = [inp.source, *inp.revisions, "--", *inp.paths, str(inp.limit)]
    digest = hashlib.sha256("\n".join(what).encode()).hexdigest()[:12]
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "-", inp.suite or repo_suite(inp.source)).strip("-")[:60]
    return f"{MINE_PREFIX}{tag + '-' if tag else ''}{digest}"


async def astart_mining(
    client: Client, inp: RepoMineInput, wid: str | None = None
) -> WorkflowHandle[MineRepository, object]:
    """Start `MineRepository` (or attach to the one running under the same id). A
    finished run does not block a new one: commits decided before are reported as
    such, not gated again."""
    return await client.start_workflow(
        MineRepository.run,
        inp,
        id=wid or mining_id(inp),
        task_queue=inp.config.task_queue_agents,
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )


def seed_mining(settings: Settings, seed: TaskSeed) -> RepoMineInput:
    """What a seed with `history:` asks for: its repository's commits mined."""
    if seed.history is None or seed.repository is None:
        raise ValueError(f"seed {seed.id} names no repository history to mine")
    h = seed.history
    return RepoMineInput(source=seed.repository, revisions=h.revisions, paths=h.paths,
                         limit=h.limit, config=pipeline_config(settings))  # fmt: skip


async def astart_seed(client: Client, settings: Settings, seed: TaskSeed) -> str:
    """A seed's workflow: `MineRepository` for a history seed, else the pipeline."""
    if seed.history is not None:
        return (await astart_mining(client, seed_mining(settings, seed))).id
    return (await astart_synthesis(client, seed.id, pipeline_config(settings))).id


def start_seed(settings: Settings, seed: TaskSeed) -> str:
    """Synchronous hook for `envfactory seed submit` / `seed start`: the workflow id."""

    async def go() -> str:
        return await astart_seed(await connect(settings.temporal), settings, seed)

    return asyncio.run(go())


def start_mining(settings: Settings, inp: RepoMineInput) -> str:
    """Synchronous hook for `envfactory repo mine --durable` and a repository seed."""

    async def go() -> str:
        client = await connect(settings.temporal)
        return (await astart_mining(client, inp)).id

    return asyncio.run(go())


async def mining_status(client: Client, workflow_id: str) -> RepoMineStatus:
    handle = client.get_workflow_handle(workflow_id)
    return await _query(lambda: handle.query(MineRepository.status))


T = TypeVar("T")
#: waits between tries of a failed query (a starved worker's workflow task trips Temporal's
#: deadlock detector and the query fails; the next workflow task usually answers)
QUERY_RETRY_S = (0.5, 1.0, 2.0, 4.0)


async def _query(ask: Callable[[], Awaitable[T]]) -> T:
    """A workflow query, tried again after a transient failure (see QUERY_RETRY_S)."""
    for wait in QUERY_RETRY_S:
        try:
            return await ask()
        except WorkflowQueryFailedError:
            await asyncio.sleep(wait)
    return await ask()


async def validation_status(client: Client, workflow_id: str) -> ValidateStatus:
    handle = client.get_workflow_handle(workflow_id)
    return await _query(lambda: handle.query(ValidateTasks.status))


async def status(client: Client, workflow_id: str) -> PipelineStatus:
    handle = client.get_workflow_handle(workflow_id)
    return await _query(lambda: handle.query(SynthesizeEnvironment.status))


async def decide(client: Client, workflow_id: str, decision: ReviewDecision) -> DecisionRecorded:
    """Send a review decision; a decision for the wrong state raises `WorkflowUpdateFailedError`."""
    handle = client.get_workflow_handle_for(SynthesizeEnvironment.run, workflow_id)
    return await handle.execute_update(SynthesizeEnvironment.decide, decision)


async def list_synthesis(
    client: Client, limit: int = 50, workflow_type: str = "SynthesizeEnvironment"
) -> list[tuple[str, str]]:
    """(workflow id, execution status) of recent pipelines (or validations), newest first."""
    out: list[tuple[str, str]] = []
    query = f"WorkflowType = '{workflow_type}'"
    async for wf in client.list_workflows(query, limit=limit):
        state = wf.status.name if isinstance(wf.status, WorkflowExecutionStatus) else "?"
        out.append((wf.id, state.lower()))
    return out


def api_sinks(
    settings: Settings, store: Store
) -> tuple[
    Callable[[ReviewItem], Coroutine[Any, Any, None]], Callable[[str], Coroutine[Any, Any, None]]
]:
    """`on_decision` and `on_seed` for `envfactory.api.create_app`.

    The API stores a decision first, then calls `on_decision(item)`: we deliver it to the
    waiting pipeline through the same `decide` update a CLI reviewer uses (the activity
    behind it accepts an identical decision that is already stored). `on_seed(seed_id)`
    starts the seed's pipeline. The client is made on first use, on the caller's loop.
    """
    clients: list[Client] = []

    async def client() -> Client:
        if not clients:
            clients.append(await connect(settings.temporal))
        return clients[0]

    async def on_decision(item: ReviewItem) -> None:
        spec = await asyncio.to_thread(store.environments.get, item.env_id)
        if spec.seed_id is None:
            return  # an imported task: no pipeline waits for its review
        decision = ReviewDecision(
            item_id=item.id,
            decision=item.state.decision,
            reviewer=item.reviewer or "unknown",
            comment=item.comment,
        )
        await decide(await client(), synthesis_id(spec.seed_id), decision)

    async def on_seed(seed_id: str) -> None:
        seed = await asyncio.to_thread(store.seeds.get, seed_id)
        await astart_seed(await client(), settings, seed)

    return on_decision, on_seed


def api_validate_sink(
    settings: Settings,
) -> Callable[[list[str], int | None, str | None], Coroutine[Any, Any, str]]:
    """`on_validate(env_ids, repeats, label) -> workflow id` for `envfactory.api.create_app`."""

    async def on_validate(env_ids: list[str], repeats: int | None, label: str | None) -> str:
        config = pipeline_config(settings)
        if repeats is not None:
            config = config.model_copy(update={"repeats": repeats})
        client = await connect(settings.temporal)
        handle = await astart_validation(client, env_ids, config, validation_id(env_ids, label))
        return handle.id

    return on_validate
