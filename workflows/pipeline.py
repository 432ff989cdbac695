"""Workflow definitions: the order of the boxes, and nothing else.

`SynthesizeEnvironment` (one per seed):

    research → build → judges ×k ∥ red team → ┌ verifier → gates ─(hard failure)─┐
                                              │   → score → (no judge solved: unproven)
                                              │   → mine → review (only if open items)
                                              └─ confirmed shortcut or gate failure: patch round ≤ N
                                          → publish (or rejected)

`ValidateTasks` (imported tasks) lives in validate.py.

Invariants:
- deterministic: no I/O, clocks or randomness here; every box is an activity whose
  output is stored before the next starts, so a crash resumes at the last finished box;
- payloads are ids and short summaries (types.py);
- every activity has a bounded retry policy, a heartbeat timeout and waits for its
  cancellation to complete (the activity's cleanup finishes before the workflow moves on);
- review decisions arrive through the `decide` update, whose validator refuses a
  decision for the wrong stage or an item that is not open before it reaches history;
  the `decide_signal` signal is the fallback for clients that cannot send updates.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from envfactory.core.models import AgentRole, CheckKind, EnvStatus, GateFailure, ReviewState

    from . import activity_table as acts
    from .steps import Steps, failure
    from .types import (
        AgentInput,
        AgentKind,
        AgentRun,
        DecisionInput,
        DecisionRecorded,
        EnvInput,
        GateOutcome,
        GatesInput,
        MineInput,
        PipelineStatus,
        PublishInput,
        ResearchInput,
        ReviewDecision,
        ReviewStateInput,
        ScoreInput,
        Stage,
        StatusInput,
        SynthesisInput,
        SynthesisResult,
        VerifierInput,
    )


def _hard_failures(gate: GateOutcome) -> tuple[GateFailure, ...]:
    """Gate failures that need no human: everything but shortcut probes (those go to review)."""
    return tuple(f for f in gate.failures if f.check_kind != CheckKind.PROBE)


def _trajectory_id(workflow_id: str, kind: AgentKind, index: int) -> str:
    """Decided here, so a retried attempt overwrites its trajectory. Ids are hyphenated
    (`synthesize-<seed>-red-team-0`), as runs before the role spelling was one named them."""
    return f"{workflow_id}-{kind.value.replace('_', '-')}-{index}"


@workflow.defn(name="SynthesizeEnvironment")
class SynthesizeEnvironment(Steps):
    @workflow.init
    def __init__(self, inp: SynthesisInput) -> None:
        self.config = inp.config
        self._status = PipelineStatus(seed_id=inp.seed_id)
        self._open: list[str] = []
        self._pending: set[str] = set()
        self._confirmed: list[str] = []  # finding ids, across rounds

    # -- queries, updates, signals ----------------------------------------------------

    @workflow.query(name="status")
    def status(self) -> PipelineStatus:
        return self._status.model_copy(update={"open_review_items": tuple(self._open)})

    # The update is named after the method ("decide"). `@workflow.update(name=...)` would
    # type it as returning the coroutine, not the DecisionRecorded a client receives.
    @workflow.update
    async def decide(self, decision: ReviewDecision) -> DecisionRecorded:
        return await self._record_decision(decision)

    async def _record_decision(self, decision: ReviewDecision) -> DecisionRecorded:
        self._pending.add(decision.item_id)
        try:
            recorded = await self.act(
                acts.RECORD_DECISION,
                DecisionInput(env_id=self._status.env_id or "", decision=decision),
            )
        except ActivityError as err:
            raise failure("recording the decision", err) from err
        finally:
            self._pending.discard(decision.item_id)
        self._apply(recorded, decision)
        return recorded

    def _apply(self, recorded: DecisionRecorded, decision: ReviewDecision) -> None:
        if recorded.item_id not in self._open:
            return  # already applied (the store poll and an update raced)
        self._open.remove(recorded.item_id)
        if recorded.state == ReviewState.CONFIRMED:
            self._confirmed.append(recorded.finding_id)
        self._set(decided=(*self._status.decided, decision))

    @decide.validator
    def _validate_decision(self, decision: ReviewDecision) -> None:
        problem = self._decision_problem(decision)
        if problem:
            raise ValueError(problem)

    @workflow.signal(name="decide_signal")
    async def decide_signal(self, decision: ReviewDecision) -> None:
        """Fallback for clients without updates: invalid decisions are logged and dropped."""
        problem = self._decision_problem(decision)
        if problem:
            workflow.logger.warning("review decision ignored: %s", problem)
            return
        await self._record_decision(decision)

    def _decision_problem(self, decision: ReviewDecision) -> str | None:
        stage = self._status.stage
        if stage != "awaiting-review":
            return f"this workflow is at stage '{stage}', not awaiting review"
        if decision.item_id in self._pending:
            return f"review item {decision.item_id} is already being decided"
        if decision.item_id not in self._open:
            return (
                f"review item {decision.item_id} is not open here; "
                f"open items: {', '.join(self._open) or 'none'}"
            )
        return None

    # -- the pipeline -----------------------------------------------------------------

    @workflow.run
    async def run(self, inp: SynthesisInput) -> SynthesisResult:
        try:
            result = await self._pipeline(inp)
        except ActivityError as err:
            fail = failure(self._status.stage, err)
            if self._status.env_id:
                await self._record_status(EnvStatus.REJECTED, (fail.message,))
            raise fail from err
        await workflow.wait_condition(workflow.all_handlers_finished)
        return result

    async def _pipeline(self, inp: SynthesisInput) -> SynthesisResult:
        self._stage("research")
        env_id = "env-" + workflow.info().run_id.replace("-", "")[:12]
        spec = await self.act(acts.RESEARCH, ResearchInput(seed_id=inp.seed_id, env_id=env_id))
        self._set(env_id=spec.env_id)
        self._log(f"research: {spec.env_id} v{spec.version}, {spec.reference_steps} step(s)")
        self._stage("build")
        built = await self.act(acts.BUILD, EnvInput(env_id=spec.env_id))
        self._log(f"build: {built.image[:19]}{' (cached)' if built.cached else ''}")
        await self._record_status(EnvStatus.BUILT)
        self._stage("agents")
        await self._run_agents(spec.env_id)
        return await self._rounds(inp.seed_id, spec.env_id)

    async def _run_agents(self, env_id: str) -> None:
        wid = workflow.info().workflow_id
        plan: list[tuple[AgentKind, int]] = [
            (AgentRole.JUDGE, i) for i in range(self.config.judges)
        ]
        plan += [(AgentRole.RED_TEAM, i) for i in range(self.config.red_team)]
        inputs = [
            AgentInput(
                env_id=env_id, kind=kind, index=i, trajectory_id=_trajectory_id(wid, kind, i)
            )
            for kind, i in plan
        ]
        calls = [self.act(acts.RUN_AGENT, a) for a in inputs]
        results = await asyncio.gather(*calls, return_exceptions=True)
        runs = []
        for a, res in zip(inputs, results, strict=True):
            if isinstance(res, BaseException) and not isinstance(res, ActivityError):
                raise res  # cancellation and bugs are not "the judge failed"
            claimed = None if isinstance(res, BaseException) else res.claimed_solved
            runs.append(
                AgentRun(
                    kind=a.kind,
                    index=a.index,
                    trajectory_id=a.trajectory_id,
                    claimed_solved=claimed,
                    failed=isinstance(res, BaseException),
                )
            )
            if isinstance(res, BaseException):
                self._log(f"{a.kind} {a.index}: failed ({failure(a.kind, res).message})")
        self._set(agents=tuple(runs))
        judge_errors = [
            r for a, r in zip(inputs, results, strict=True) if a.kind == AgentRole.JUDGE
        ]
        if all(isinstance(r, ActivityError) for r in judge_errors):
            # no judge even ran to the end: that is a broken pipeline, not an unproven task
            raise judge_errors[0]  # type: ignore[misc]
        self._log(f"agents: {len(runs)} attempt(s) recorded")

    async def _rounds(self, seed_id: str, env_id: str) -> SynthesisResult:
        feedback: tuple[str, ...] = ()
        confirmed_before = 0
        reasons: tuple[str, ...] = ()
        for rnd in range(self.config.max_patch_rounds + 1):
            self._set(round=rnd)
            gate = await self._verifier_and_gates(env_id, rnd, feedback)
            hard = _hard_failures(gate)
            if hard:
                feedback = reasons = tuple(f.reason for f in hard)
                continue
            solve_rate = await self._score(env_id, gate.verifier_version)
            if solve_rate == 0:
                why = ("no judge solved the task under a verifier that passed its gates",)
                await self._record_status(EnvStatus.UNPROVEN, why, solve_rate)
                return self._finish(seed_id, "unproven", why)
            await self._mine_and_review(env_id, gate)
            if len(self._confirmed) > confirmed_before:
                confirmed_before = len(self._confirmed)
                feedback = ()
                reasons = tuple(f"confirmed shortcut {f}" for f in self._confirmed)
                continue
            if not gate.passed:
                return await self._reject(seed_id, gate.reasons)
            return await self._publish(seed_id, env_id, gate)
        rounds = self.config.max_patch_rounds
        return await self._reject(
            seed_id, (f"still failing after {rounds} patch round(s)", *reasons)
        )

    async def _verifier_and_gates(
        self, env_id: str, rnd: int, feedback: tuple[str, ...]
    ) -> GateOutcome:
        self._stage("verifier")
        verifier = await self.act(
            acts.SYNTHESIZE_VERIFIER,
            VerifierInput(
                env_id=env_id,
                gate_reasons=feedback,
                confirmed_finding_ids=tuple(self._confirmed),
                round=rnd,
            ),
        )
        self._set(verifier_version=verifier.version)
        self._log(f"verifier: v{verifier.version} (round {rnd})")
        self._stage("gates")
        gate = await self.act(
            acts.RUN_GATES,
            GatesInput(
                env_id=env_id, verifier_version=verifier.version, repeats=self.config.repeats
            ),
        )
        self._set(gate_report_id=gate.report_id, gate_passed=gate.passed, gate_reasons=gate.reasons)
        self._log(f"gates: {'passed' if gate.passed else 'failed'} ({gate.report_id})")
        return gate

    async def _score(self, env_id: str, verifier_version: int) -> float:
        self._stage("scoring")
        ids = tuple(r.trajectory_id for r in self._status.agents if not r.failed)
        scored = await self.act(
            acts.SCORE,
            ScoreInput(env_id=env_id, verifier_version=verifier_version, trajectory_ids=ids),
        )
        runs = tuple(
            r.model_copy(update={"reward": scored.rewards.get(r.trajectory_id)})
            for r in self._status.agents
        )
        judges = [r for r in runs if r.kind == AgentRole.JUDGE]
        rate = sum(1 for r in judges if r.reward == 1) / max(1, self.config.judges)
        self._set(agents=runs, solve_rate=rate)
        self._log(f"scoring: judge solve rate {rate:.2f}")
        return rate

    async def _mine_and_review(self, env_id: str, gate: GateOutcome) -> None:
        self._stage("mining")
        rewarded = tuple(r.trajectory_id for r in self._status.agents if r.reward == 1)
        mined = await self.act(
            acts.MINE,
            MineInput(env_id=env_id, gate_report_id=gate.report_id, trajectory_ids=rewarded),
        )
        self._log(f"mining: {len(mined.finding_ids)} finding(s), {len(mined.open_items)} open")
        if not mined.open_items:
            return
        self._open = list(mined.open_items)
        self._stage("awaiting-review")
        poll = timedelta(seconds=self.config.review_poll_s)
        while self._open or self._pending:
            try:
                await workflow.wait_condition(
                    lambda: not self._open and not self._pending, timeout=poll
                )
            except TimeoutError:
                await self._sync_review(env_id)
        self._log(f"review: {len(self._status.decided)} decision(s) so far")

    async def _sync_review(self, env_id: str) -> None:
        """Apply decisions the store has but the workflow was never told (nothing is lost)."""
        asked = tuple(i for i in self._open if i not in self._pending)
        if not asked:
            return
        known = await self.act(acts.REVIEW_STATE, ReviewStateInput(env_id=env_id, item_ids=asked))
        for recorded, reviewer in zip(known.decided, known.reviewers, strict=True):
            if recorded.item_id in self._pending:
                continue  # an update for it is in flight and will apply it
            self._apply(
                recorded,
                ReviewDecision(
                    item_id=recorded.item_id,
                    decision=recorded.state.decision,
                    reviewer=reviewer,
                    comment="from the store",
                ),
            )

    async def _publish(self, seed_id: str, env_id: str, gate: GateOutcome) -> SynthesisResult:
        self._stage("publishing")
        published = await self.act(
            acts.PUBLISH,
            PublishInput(
                env_id=env_id, verifier_version=gate.verifier_version, gate_report_id=gate.report_id
            ),
        )
        if not published.published:
            return await self._reject(seed_id, published.reasons)
        return self._finish(seed_id, "published", ())

    async def _reject(self, seed_id: str, reasons: tuple[str, ...]) -> SynthesisResult:
        await self._record_status(EnvStatus.REJECTED, reasons)
        return self._finish(seed_id, "rejected", reasons)

    async def _record_status(
        self, status: EnvStatus, reasons: tuple[str, ...] = (), rate: float | None = None
    ) -> None:
        env_id = self._status.env_id or ""
        inp = StatusInput(env_id=env_id, status=status, reasons=reasons, solve_rate=rate)
        await self.act(acts.SET_STATUS, inp)

    # -- status bookkeeping -----------------------------------------------------------

    def _finish(self, seed_id: str, outcome: Any, reasons: tuple[str, ...]) -> SynthesisResult:
        self._set(stage="done", outcome=outcome, outcome_reasons=reasons)
        self._log(f"outcome: {outcome}" + (f" ({'; '.join(reasons)})" if reasons else ""))
        s = self._status
        return SynthesisResult(
            seed_id=seed_id,
            env_id=s.env_id,
            outcome=outcome,
            reasons=reasons,
            verifier_version=s.verifier_version,
            gate_report_id=s.gate_report_id,
            solve_rate=s.solve_rate,
            rounds=s.round,
        )

    def _stage(self, stage: Stage) -> None:
        self._set(stage=stage)

    def _set(self, **changes: Any) -> None:
        self._status = self._status.model_copy(update=changes)

    def _log(self, line: str) -> None:
        self._set(history=(*self._status.history, line))
