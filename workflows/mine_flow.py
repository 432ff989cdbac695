"""`MineRepository` and `MineCandidate`: a repository's commits through the pipeline.

    MineRepository:  take_repository (clone once into the artifact store, list commits)
                     → one child MineCandidate per commit, at most `parallel` in flight
                     → store_yield (the yield table and every row, one artifact)
    MineCandidate:   mine_candidate (tests split from the fix, image at the parent,
                     fail-to-pass) → stored: a child ValidateTasks for its environment
                     (build → gates → findings → publish, as for any imported task)
                     → conclude_candidate (outcome, gate reasons, untested hunks)

Every commit ends exactly once: a child's id is the run's id and the commit, so a
replayed or restarted parent finds its children instead of starting them twice; a child
whose activities failed after their retries ends as that commit's "dropped" (reason kind
`error`), never the run's failure. Each worker bounds its own concurrent activities; the
run bounds how many commits are in flight (`parallel`), so a 500-commit range does not
queue 500 image builds at once.

Deterministic (no I/O here); the `status` query lists the plan and each ended commit.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from envfactory.core.models.repos import CandidateInput, CandidateResult

    from . import activity_table as acts
    from .steps import Steps
    from .types import (
        ConcludeInput,
        MineCandidateInput,
        RepoMineInput,
        RepoMineResult,
        RepoMineStatus,
        RepoPlan,
        SynthesisResult,
        TakeRepoInput,
        ValidateInput,
        YieldInput,
    )
    from .validate import ValidateTasks


@workflow.defn(name="MineCandidate")
class MineCandidate(Steps):
    """One commit: mined, and when stored, validated like any imported task."""

    @workflow.run
    async def run(self, inp: MineCandidateInput) -> CandidateResult:
        self.config = inp.config
        mined = await self.act(acts.MINE_CANDIDATE, inp.candidate)
        if mined.outcome != "stored" or mined.env_id is None:
            return mined
        validation = await workflow.execute_child_workflow(
            ValidateTasks.run,
            ValidateInput(env_ids=(mined.env_id,), config=self.config),
            id=f"{workflow.info().workflow_id}/gates",
            task_queue=self.config.task_queue_agents,
        )
        (validated,) = validation.results
        # the child's result arrives as the sandbox's copy of the class: read it by fields
        done = SynthesisResult.model_validate(validated, from_attributes=True)
        return await self.act(acts.CONCLUDE_CANDIDATE, ConcludeInput(mined=mined, validated=done))


@workflow.defn(name="MineRepository")
class MineRepository(Steps):
    """A repository's commits → gated, published environments and a yield table."""

    @workflow.init
    def __init__(self, inp: RepoMineInput) -> None:
        self.config = inp.config
        self._source = inp.source
        self._plan: RepoPlan | None = None
        self._ended: dict[str, CandidateResult] = {}
        self._done = False

    @workflow.query(name="status")
    def status(self) -> RepoMineStatus:
        plan = self._plan
        return RepoMineStatus(
            source=self._source,
            head=plan.snapshot.head if plan else None,
            commits=plan.commits if plan else (),
            ended=tuple(self._ended.values()),
            done=self._done,
        )

    @workflow.run
    async def run(self, inp: RepoMineInput) -> RepoMineResult:
        started = workflow.now()
        plan = await self.act(
            acts.TAKE_REPOSITORY,
            TakeRepoInput(source=inp.source, revisions=inp.revisions, paths=inp.paths,
                          limit=inp.limit, max_bytes=inp.max_bytes, suite=inp.suite),
        )  # fmt: skip
        self._plan = plan
        room = asyncio.Semaphore(inp.parallel)
        results = await asyncio.gather(*(self._one(room, inp, plan, sha) for sha in plan.commits))
        wall = (workflow.now() - started).total_seconds()
        ref = await self.act(
            acts.STORE_YIELD,
            YieldInput(snapshot=plan.snapshot, results=tuple(results), wall_s=wall),
        )
        self._done = True
        return RepoMineResult(
            snapshot=plan.snapshot, candidates=tuple(results), totals=ref.table, yield_key=ref.key
        )

    async def _one(
        self, room: asyncio.Semaphore, inp: RepoMineInput, plan: RepoPlan, sha: str
    ) -> CandidateResult:
        candidate = CandidateInput(
            snapshot=plan.snapshot, commit=sha, suite=plan.suite,
            pass_to_pass_max=inp.pass_to_pass_max, hunk_max=inp.hunk_max,
        )  # fmt: skip
        async with room:
            try:
                result = await workflow.execute_child_workflow(
                    MineCandidate.run,
                    MineCandidateInput(candidate=candidate, config=self.config),
                    id=f"{workflow.info().workflow_id}/{sha[:12]}",
                    task_queue=self.config.task_queue_agents,
                    execution_timeout=timedelta(days=1),
                )
            except ChildWorkflowError as err:
                result = _failed(sha, err)
        self._ended[sha] = result
        return result


def _failed(sha: str, err: ChildWorkflowError) -> CandidateResult:
    """A child that failed after its retries: that commit's drop, with the cause."""
    cause: BaseException | None = err.cause
    while isinstance(cause, (ActivityError, ChildWorkflowError)) and cause.cause is not None:
        cause = cause.cause
    return CandidateResult(
        commit=sha, outcome="dropped", stage="scanned", reason_kind="error",
        reason=f"mining failed: {cause or err}",
    )  # fmt: skip
