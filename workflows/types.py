"""Inputs and outputs of every workflow, update and activity: one frozen model each.

Invariants:
- payloads carry ids, versions, artifact keys and short summaries only — never a
  trajectory, a build context or a log (Temporal refuses payloads over 2 MiB, and a blob
  in history is replayed for ever); the store holds the objects;
- every model here is plain pydantic (no I/O), so workflow code may import this module
  inside the deterministic sandbox.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from envfactory.core.models import (
    AgentRole,
    Decision,
    EnvStatus,
    GateFailure,
    ReviewState,
    SolveRate,
    SolveRateBand,
    TaskVerdict,
)
from envfactory.core.models.repos import CandidateInput as CandidateInput
from envfactory.core.models.repos import CandidateResult as CandidateResult
from envfactory.core.models.repos import RepoSnapshot, YieldTable


class _In(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


Stage = Literal[
    "queued",
    "research",
    "build",
    "agents",
    "verifier",
    "gates",
    "scoring",
    "mining",
    "awaiting-review",
    "publishing",
    "done",
]
Outcome = Literal["published", "unproven", "too_easy", "rejected"]
#: the roles that attempt a task from its instruction alone (their final states are scored)
AgentKind = Literal[AgentRole.JUDGE, AgentRole.RED_TEAM]


class Queue(StrEnum):
    """The two task queues; `PipelineConfig` names them for one deployment."""

    AGENTS = "agents"  # the workflows and the LLM-driven activities (hold sandboxes long)
    SANDBOX = "sandbox"  # Docker-only work and store updates


class PipelineConfig(_In):
    """Knobs a workflow run is started with (from GateSettings at the client edge)."""

    judges: int = Field(default=2, ge=1, le=32)
    red_team: int = Field(default=1, ge=0, le=8)
    repeats: int = Field(default=3, ge=1)
    max_patch_rounds: int = Field(default=2, ge=0, le=10)
    #: the accepted judge solve-rate band, unless the seed sets its own (SpecRef.band)
    solve_rate_band: SolveRateBand = SolveRateBand()
    #: heartbeat timeout for long activities: a dead worker is noticed after this long
    heartbeat_timeout_s: int = Field(default=60, ge=2)
    agent_timeout_s: int = Field(default=3600, ge=10)
    sandbox_timeout_s: int = Field(default=3600, ge=10)
    max_attempts: int = Field(default=5, ge=1, le=50)
    #: while waiting for review, look in the store this often for decisions that were
    #: stored but never delivered to the workflow (e.g. the API's notify failed)
    review_poll_s: int = Field(default=60, ge=1)
    task_queue_agents: str = Queue.AGENTS.value
    task_queue_sandbox: str = Queue.SANDBOX.value

    def task_queue(self, queue: Queue) -> str:
        """This deployment's name for `queue`."""
        return self.task_queue_agents if queue == Queue.AGENTS else self.task_queue_sandbox

    def timeout_s(self, queue: Queue) -> int:
        """Start-to-close timeout of an activity on `queue`."""
        return self.agent_timeout_s if queue == Queue.AGENTS else self.sandbox_timeout_s


# -- workflow inputs / status ---------------------------------------------------------


class SynthesisInput(_In):
    seed_id: str
    config: PipelineConfig = PipelineConfig()


class ValidateInput(_In):
    env_ids: tuple[str, ...] = Field(min_length=1)
    config: PipelineConfig = PipelineConfig()


class ReviewDecision(_In):
    """A human decision on one review item, sent as an update (or the fallback signal)."""

    item_id: str
    decision: Decision
    reviewer: str = Field(min_length=1)
    comment: str = ""


class AgentRun(_In):
    kind: AgentKind
    index: int
    trajectory_id: str
    reward: int | None = None
    claimed_solved: bool | None = None
    failed: bool = False  # the attempt itself crashed after its retries: nothing to score


class PipelineStatus(_In):
    """What `envfactory status` shows: answered by the `status` query, never from history."""

    workflow: Literal["synthesize", "validate"] = "synthesize"
    seed_id: str | None = None
    env_id: str | None = None
    stage: Stage = "queued"
    round: int = 0
    verifier_version: int | None = None
    agents: tuple[AgentRun, ...] = ()
    solve_rate: float | None = None
    #: the band the solve rate is held against (the seed's own, or the config's)
    solve_rate_band: SolveRateBand | None = None
    gate_report_id: str | None = None
    gate_passed: bool | None = None
    gate_reasons: tuple[str, ...] = ()
    open_review_items: tuple[str, ...] = ()
    decided: tuple[ReviewDecision, ...] = ()
    outcome: Outcome | None = None
    outcome_reasons: tuple[str, ...] = ()
    history: tuple[str, ...] = ()  # one line per finished box, for a human


class SynthesisResult(_In):
    seed_id: str
    env_id: str | None
    outcome: Outcome
    reasons: tuple[str, ...] = ()
    verifier_version: int | None = None
    gate_report_id: str | None = None
    solve_rate: float | None = None
    rounds: int = 0


def validation_result(
    env_id: str, gate: GateOutcome, outcome: Outcome, reasons: tuple[str, ...]
) -> SynthesisResult:
    """What a validation of one imported task came to, from its gate outcome."""
    return SynthesisResult(
        seed_id="",
        env_id=env_id,
        outcome=outcome,
        reasons=reasons,
        verifier_version=gate.verifier_version,
        gate_report_id=gate.report_id,
    )


class ValidateResult(_In):
    results: tuple[SynthesisResult, ...]


TaskStage = Literal["queued", "build", "gates", "mining", "publishing", "done"]


class TaskProgress(_In):
    """One imported task inside a `ValidateTasks` run, as its `status` query reports it."""

    env_id: str
    stage: TaskStage = "queued"
    verdict: TaskVerdict | None = None  # the gate report's `outcome`, once gated
    gate_report_id: str | None = None
    finding_ids: tuple[str, ...] = ()
    open_review_items: tuple[str, ...] = ()
    outcome: Outcome | None = None
    reasons: tuple[str, ...] = ()


class ValidateStatus(_In):
    """What `envfactory status validate-…` shows: answered by the workflow's query."""

    workflow: Literal["validate"] = "validate"
    tasks: tuple[TaskProgress, ...]

    @property
    def done(self) -> bool:
        return all(t.stage == "done" for t in self.tasks)


# -- activity inputs / outputs --------------------------------------------------------


class ResearchInput(_In):
    seed_id: str
    #: chosen by the workflow (from its run id), so a retried research activity finds
    #: the environment an earlier attempt stored instead of making a second one
    env_id: str


class SpecRef(_In):
    env_id: str
    version: int = 1
    reference_steps: int = 0
    #: the seed's own judges k and solve-rate band (constraints), when it sets them
    judges: int | None = None
    band: SolveRateBand | None = None


class EnvInput(_In):
    env_id: str


class BuiltEnv(_In):
    env_id: str
    image: str
    cached: bool = False


class AgentInput(_In):
    env_id: str
    kind: AgentKind
    index: int
    #: deterministic id (workflow id + kind + index): a retried attempt overwrites,
    #: never duplicates, its trajectory
    trajectory_id: str


class TrajectoryRef(_In):
    trajectory_id: str
    claimed_solved: bool | None = None


class VerifierInput(_In):
    env_id: str
    #: evidence for a patch round: gate reasons and confirmed finding ids — never the
    #: reference solution, partial solutions or a solved state
    gate_reasons: tuple[str, ...] = ()
    confirmed_finding_ids: tuple[str, ...] = ()
    round: int = 0


class VerifierRef(_In):
    env_id: str
    version: int


class GatesInput(_In):
    env_id: str
    verifier_version: int | None = None  # None → the latest stored version
    repeats: int = 3


class GateOutcome(_In):
    report_id: str
    verifier_version: int
    passed: bool
    #: the report's failures as data: workflows decide on these (`reasons` is for humans)
    failures: tuple[GateFailure, ...] = ()
    #: names of probe checks that earned reward (shortcut probes that fooled the verifier)
    failed_probes: tuple[str, ...] = ()
    #: the report's `outcome` (whose fault a failure is); None from older workers
    verdict: TaskVerdict | None = None

    @model_validator(mode="before")
    @classmethod
    def _failures_from_old_reasons(cls, data: Any) -> Any:
        """Histories recorded before failures were typed carry only the reason lines:
        read them back into failures, so those histories replay to the same decisions."""
        if isinstance(data, dict) and "reasons" in data:
            data = dict(data)
            reasons = data.pop("reasons")
            data.setdefault("failures", [GateFailure.from_reason(r) for r in reasons])
        return data

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(f.reason for f in self.failures)


class ScoreInput(_In):
    env_id: str
    verifier_version: int
    trajectory_ids: tuple[str, ...]
    #: the gate report the solve rate is written to, the judges planned (k) and the band;
    #: None from workflows started before solve-rate bands (no rate is measured)
    gate_report_id: str | None = None
    judges: int | None = None
    band: SolveRateBand | None = None


class ScoreOutcome(_In):
    rewards: dict[str, int]  # trajectory id → 0 | 1
    solve_rate: SolveRate | None = None


class AnalyzeInput(_In):
    """The shortcut analyst over the rewarded trajectories, after the rules (MineInput)."""

    env_id: str
    verifier_version: int
    trajectory_ids: tuple[str, ...]


class AnalyzeOutcome(_In):
    finding_ids: tuple[str, ...] = ()
    open_items: tuple[str, ...] = ()
    #: "<trajectory id>: <why>" for each analysis that gave no valid report (recorded)
    failures: tuple[str, ...] = ()
    #: trajectory ids the analyst did not read (a scripted analyst with no script)
    skipped: tuple[str, ...] = ()


class FlagInput(_In):
    """Send a solve rate above the band to review (a reviewer may override it)."""

    env_id: str
    gate_report_id: str
    solve_rate: SolveRate


class Flagged(_In):
    item_id: str
    finding_id: str
    state: ReviewState  # an item decided in an earlier run is not reopened


class MineInput(_In):
    env_id: str
    gate_report_id: str
    trajectory_ids: tuple[str, ...]


class MineOutcome(_In):
    finding_ids: tuple[str, ...] = ()
    #: review items still open (decided ones from earlier rounds are not reopened)
    open_items: tuple[str, ...] = ()


class DecisionInput(_In):
    env_id: str
    decision: ReviewDecision


class DecisionRecorded(_In):
    item_id: str
    finding_id: str
    state: ReviewState


class ReviewStateInput(_In):
    env_id: str
    item_ids: tuple[str, ...]


class ReviewStateOutcome(_In):
    """Items among those asked about that the store says are decided (by any path)."""

    decided: tuple[DecisionRecorded, ...] = ()
    reviewers: tuple[str, ...] = ()  # one per decided item, same order


class StatusInput(_In):
    env_id: str
    status: EnvStatus
    reasons: tuple[str, ...] = ()
    solve_rate: float | None = None


class PublishInput(_In):
    env_id: str
    verifier_version: int
    gate_report_id: str


class Published(_In):
    env_id: str
    published: bool
    reasons: tuple[str, ...] = ()


# -- mining a repository's history (repo_mining.py) -------------------------------------


class RepoMineInput(_In):
    """`MineRepository`: one repository's commits mined, gated and published.

    `revisions`: empty for HEAD's first-parent history, one `A..B` range, or a list of
    commits, tags or merge commits; `paths`: only commits touching one of these."""

    source: str = Field(min_length=1)
    revisions: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    limit: int | None = Field(default=None, ge=1)
    max_bytes: int = Field(default=1 << 30, ge=1)
    suite: str | None = None
    pass_to_pass_max: int = Field(default=10, ge=0)
    hunk_max: int = Field(default=6, ge=0)
    #: candidates in flight at once in this run (each worker bounds its own activities)
    parallel: int = Field(default=4, ge=1, le=64)
    config: PipelineConfig = PipelineConfig()


class TakeRepoInput(_In):
    """The intake activity: clone once into the artifact store, list the commits."""

    source: str
    revisions: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    limit: int | None = None
    max_bytes: int = 1 << 30
    suite: str | None = None


class RepoPlan(_In):
    snapshot: RepoSnapshot
    commits: tuple[str, ...]
    suite: str


class MineCandidateInput(_In):
    """`MineCandidate`: one commit mined, then gated by a child `ValidateTasks`."""

    candidate: CandidateInput
    config: PipelineConfig = PipelineConfig()


class ConcludeInput(_In):
    """A mined candidate and what its validation (a `ValidateTasks` result) said."""

    mined: CandidateResult
    validated: SynthesisResult


class YieldInput(_In):
    snapshot: RepoSnapshot
    results: tuple[CandidateResult, ...]
    wall_s: float = 0.0


class YieldRef(_In):
    key: str
    table: YieldTable


class RepoMineResult(_In):
    snapshot: RepoSnapshot
    candidates: tuple[CandidateResult, ...]
    totals: YieldTable
    yield_key: str


class RepoMineStatus(_In):
    """The `status` query of `MineRepository`: the plan once taken, each ended commit."""

    source: str
    head: str | None = None
    commits: tuple[str, ...] = ()
    ended: tuple[CandidateResult, ...] = ()
    done: bool = False
