"""Activities: thin async wrappers that run one `PipelineServices` method each.

Everything Temporal-specific about doing work lives here, once:
- the blocking service method runs in a worker thread pool, while a background task
  heartbeats for the whole call — including the method's own cleanup (`finally` blocks
  that remove containers), so a slow cleanup never trips the heartbeat timeout and
  orphans a container;
- on cancellation the call is shielded: we keep heartbeating until the thread has
  finished its cleanup, then report the cancellation (the workflow waits for that with
  `ActivityCancellationType.WAIT_CANCELLATION_COMPLETED`);
- errors are translated in ONE place (`to_application_error`): an `EnvFactoryError`
  becomes `ApplicationError(non_retryable=not err.retryable)` with its class name as the
  type, a pydantic `ValidationError` is bad input (terminal), anything else is retried
  under the workflow's bounded retry policy.

Activity names are constants so fake activities in tests register under the same names.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

import pydantic
from temporalio import activity
from temporalio.exceptions import ApplicationError

from envfactory.core.errors import EnvFactoryError

from .services import PipelineServices
from .types import (
    AgentInput,
    BuiltEnv,
    DecisionInput,
    DecisionRecorded,
    EnvInput,
    GateOutcome,
    GatesInput,
    MineInput,
    MineOutcome,
    Published,
    PublishInput,
    ResearchInput,
    ReviewStateInput,
    ReviewStateOutcome,
    ScoreInput,
    ScoreOutcome,
    SpecRef,
    StatusInput,
    TrajectoryRef,
    VerifierInput,
    VerifierRef,
)

RESEARCH = "research"
BUILD = "build_environment"
RUN_AGENT = "run_agent"
SYNTHESIZE_VERIFIER = "synthesize_verifier"
RUN_GATES = "run_gates"
SCORE = "score_trajectories"
MINE = "mine_shortcuts"
RECORD_DECISION = "record_decision"
REVIEW_STATE = "review_state"
SET_STATUS = "set_env_status"
PUBLISH = "publish_environment"

#: which queue each activity runs on: LLM loops on `agents`, pure Docker work on `sandbox`
AGENT_ACTIVITIES = (RESEARCH, RUN_AGENT, SYNTHESIZE_VERIFIER)
SANDBOX_ACTIVITIES = (
    BUILD, RUN_GATES, SCORE, MINE, RECORD_DECISION, REVIEW_STATE, SET_STATUS, PUBLISH,
)  # fmt: skip

In = TypeVar("In")
Out = TypeVar("Out")


def to_application_error(err: BaseException) -> ApplicationError:
    """The one place where our errors become Temporal failures."""
    if isinstance(err, ApplicationError):
        return err
    if isinstance(err, EnvFactoryError):
        return ApplicationError(str(err), type=type(err).__name__, non_retryable=not err.retryable)
    if isinstance(err, pydantic.ValidationError):
        return ApplicationError(f"invalid input: {err}", type="InvalidInput", non_retryable=True)
    return ApplicationError(f"{type(err).__name__}: {err}", type=type(err).__name__)


def _heartbeat_interval() -> float:
    timeout = activity.info().heartbeat_timeout or timedelta(seconds=30)
    return min(max(timeout.total_seconds() / 3, 0.2), 10.0)


async def _heartbeat_forever(interval: float) -> None:
    while True:
        activity.heartbeat()
        await asyncio.sleep(interval)


class PipelineActivities:
    """Register `activities()` on a worker; each method is one activity."""

    def __init__(self, services: PipelineServices, *, max_threads: int = 8) -> None:
        self.services = services
        self._pool = concurrent.futures.ThreadPoolExecutor(max_threads, "envfactory-activity")

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def activities(self, names: tuple[str, ...] | None = None) -> list[Callable[..., Any]]:
        """The bound activity methods, optionally only those named (one queue's share)."""
        by_name = {
            RESEARCH: self.research, BUILD: self.build_environment, RUN_AGENT: self.run_agent,
            SYNTHESIZE_VERIFIER: self.synthesize_verifier, RUN_GATES: self.run_gates,
            SCORE: self.score_trajectories, MINE: self.mine_shortcuts,
            RECORD_DECISION: self.record_decision, REVIEW_STATE: self.review_state,
            SET_STATUS: self.set_env_status,
            PUBLISH: self.publish_environment,
        }  # fmt: skip
        return [fn for name, fn in by_name.items() if names is None or name in names]

    async def _call(self, fn: Callable[[In], Out], inp: In) -> Out:
        beat = asyncio.create_task(_heartbeat_forever(_heartbeat_interval()))
        work = asyncio.get_running_loop().run_in_executor(self._pool, fn, inp)
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            # The thread cannot be interrupted; let it finish its cleanup while we keep
            # heartbeating, then report the cancellation.
            await asyncio.wait([work])
            raise
        except Exception as err:
            raise to_application_error(err) from err
        finally:
            beat.cancel()

    @activity.defn(name=RESEARCH)
    async def research(self, inp: ResearchInput) -> SpecRef:
        return await self._call(self.services.research, inp)

    @activity.defn(name=BUILD)
    async def build_environment(self, inp: EnvInput) -> BuiltEnv:
        return await self._call(self.services.build, inp)

    @activity.defn(name=RUN_AGENT)
    async def run_agent(self, inp: AgentInput) -> TrajectoryRef:
        return await self._call(self.services.run_agent, inp)

    @activity.defn(name=SYNTHESIZE_VERIFIER)
    async def synthesize_verifier(self, inp: VerifierInput) -> VerifierRef:
        return await self._call(self.services.synthesize_verifier, inp)

    @activity.defn(name=RUN_GATES)
    async def run_gates(self, inp: GatesInput) -> GateOutcome:
        return await self._call(self.services.run_gates, inp)

    @activity.defn(name=SCORE)
    async def score_trajectories(self, inp: ScoreInput) -> ScoreOutcome:
        return await self._call(self.services.score, inp)

    @activity.defn(name=MINE)
    async def mine_shortcuts(self, inp: MineInput) -> MineOutcome:
        return await self._call(self.services.mine, inp)

    @activity.defn(name=RECORD_DECISION)
    async def record_decision(self, inp: DecisionInput) -> DecisionRecorded:
        return await self._call(self.services.record_decision, inp)

    @activity.defn(name=REVIEW_STATE)
    async def review_state(self, inp: ReviewStateInput) -> ReviewStateOutcome:
        return await self._call(self.services.review_state, inp)

    @activity.defn(name=SET_STATUS)
    async def set_env_status(self, inp: StatusInput) -> None:
        return await self._call(self.services.set_status, inp)

    @activity.defn(name=PUBLISH)
    async def publish_environment(self, inp: PublishInput) -> Published:
        return await self._call(self.services.publish, inp)
