"""Workflow definitions: the order of the boxes, and nothing else.

`SynthesizeEnvironment` (one per seed):

    research → build → judges ×k ∥ red team → ┌ verifier → gates ─(hard failure)─┐
                                              │   → score → (rate 0 or below the band: unproven)
                                              │   → mine (rules) → analyze (model) → review
                                              └─ confirmed shortcut or gate failure: patch round ≤ N
                                          → (rate above the band: flag → review; confirmed: too easy)
                                          → publish (or rejected)

`ValidateTasks` (imported tasks) lives in validate.py.

Invariants:
- deterministic: no I/O, clocks or randomness here; every box is an activity whose
  output is stored before the next starts, so a crash resumes at the last finished box;
- payloads are ids and short summaries (types.py);
- every activity has a bounded retry policy, a heartbeat timeout and waits for its
  cancellation to complete (the activity's cleanup finishes before the workflow moves on);
- the judges k and the solve-rate band come from the seed (research's SpecRef) or else
  the config; the too-easy flag is a review item, but deciding it never starts a patch
  round (it is about the task, not the verifier);
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
    from envfactory.core.models import (
        AgentRole,
        CheckKind,
        EnvStatus,
        GateFailure,
        ReviewState,
        SolveRate,
    )

    from . import activity_table as acts
    from .steps import Steps, failure
    from .types import (
        AgentInput,
        AgentKind,
        AgentRun,
        AnalyzeInput,
        DecisionInput,
        DecisionRecorded,
        EnvInput,
        FlagInput,
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
        self._judges = inp.config.judges  # the seed's own k replaces it after research
        self._band = inp.config.solve_rate_band
        self._flag_item: str | None = None  # the too-easy review item, once flagged
        self._flag_state = ReviewState.OPEN

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
        if recorded.item_id == self._flag_item:
            self._flag_state = recorded.state  # about the task: never a patch round
        elif recorded.state == ReviewState.CONFIRMED:
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
        self._judges = spec.judges or self._judges
        self._band = spec.band or self._band
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
        plan: list[tuple[AgentKind, int]] = [(AgentRole.JUDGE, i) for i in range(self._judges)]
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
            solve = await self._score(env_id, gate)
            if solve.verdict == "unproven":
                why = (
                    ("no judge solved the task under a verifier that passed its gates",)
                    if solve.solved == 0
                    else (f"solve rate below the band: {solve.text()}",)
                )
                await self._record_status(EnvStatus.UNPROVEN, why, solve.rate)
                return self._finish(seed_id, "unproven", why)
            await self._mine_and_review(env_id, gate)
            if len(self._confirmed) > confirmed_before:
                confirmed_before = len(self._confirmed)
                feedback = ()
                reasons = tuple(f"confirmed shortcut {f}" for f in self._confirmed)
                continue
            if not gate.passed:
                return await self._reject(seed_id, gate.reasons)
            if solve.verdict == "too_easy" and await self._too_easy(env_id, gate, solve):
                why = (f"too easy: {solve.text()}; a reviewer confirmed the flag",)
                await self._record_status(EnvStatus.TOO_EASY, why, solve.rate)
                return self._finish(seed_id, "too_easy", why)
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

    async def _score(self, env_id: str, gate: GateOutcome) -> SolveRate:
        self._stage("scoring")
        ids = tuple(r.trajectory_id for r in self._status.agents if not r.failed)
        scored = await self.act(
            acts.SCORE,
            ScoreInput(
                env_id=env_id,
                verifier_version=gate.verifier_version,
                trajectory_ids=ids,
                gate_report_id=gate.report_id,
                judges=self._judges,
                band=self._band,
            ),
        )
        runs = tuple(
            r.model_copy(update={"reward": scored.rewards.get(r.trajectory_id)})
            for r in self._status.agents
        )
        solved = sum(1 for r in runs if r.kind == AgentRole.JUDGE and r.reward == 1)
        solve = scored.solve_rate or SolveRate.measure(self._judges, solved, self._band)
        self._set(agents=runs, solve_rate=solve.rate, solve_rate_band=solve.band)
        self._log(f"scoring: judge solve rate {solve.rate:.2f} (band {solve.band.text()})")
        return solve

    async def _mine_and_review(self, env_id: str, gate: GateOutcome) -> None:
        self._stage("mining")
        rewarded = tuple(r.trajectory_id for r in self._status.agents if r.reward == 1)
        mined = await self.act(
            acts.MINE,
            MineInput(env_id=env_id, gate_report_id=gate.report_id, trajectory_ids=rewarded),
        )
        self._log(f"mining: {len(mined.finding_ids)} finding(s), {len(mined.open_items)} open")
        open_items = list(mined.open_items)
        if rewarded and workflow.patched("shortcut-analyst"):
            open_items += await self._analyze(env_id, gate, rewarded)
        if not open_items:
            return
        self._open = list(dict.fromkeys(open_items))
        await self._await_review(env_id)

    async def _analyze(
        self, env_id: str, gate: GateOutcome, rewarded: tuple[str, ...]
    ) -> list[str]:
        """The model pass over what the rules passed over; its failures are logged, and
        the pipeline goes on with what the rules found."""
        found = await self.act(
            acts.ANALYZE,
            AnalyzeInput(
                env_id=env_id, verifier_version=gate.verifier_version, trajectory_ids=rewarded
            ),
        )
        line = f"analysis: {len(found.finding_ids)} model finding(s), {len(found.open_items)} open"
        if found.skipped:
            line += f", {len(found.skipped)} not read (no analyst model or script)"
        self._log(line)
        for why in found.failures:
            self._log(f"analysis failed: {why}")
        return list(found.open_items)

    async def _too_easy(self, env_id: str, gate: GateOutcome, solve: SolveRate) -> bool:
        """Flag a rate above the band for review: True once a reviewer confirms it (too
        easy), False when they dismiss it (publish anyway)."""
        flagged = await self.act(
            acts.FLAG_TOO_EASY,
            FlagInput(env_id=env_id, gate_report_id=gate.report_id, solve_rate=solve),
        )
        self._flag_item, self._flag_state = flagged.item_id, flagged.state
        self._log(f"solve rate: {solve.text()}; flagged for review ({flagged.item_id})")
        if flagged.state == ReviewState.OPEN:
            self._open = [flagged.item_id]
            await self._await_review(env_id)
        return self._flag_state == ReviewState.CONFIRMED

    async def _await_review(self, env_id: str) -> None:
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
