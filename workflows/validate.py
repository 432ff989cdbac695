"""`ValidateTasks`: imported tasks (Harbor / Terminal-Bench) through build → gates → publish.

Their verifier is already stored by the importer, so there is no agent work: each task is
built, gated (probes included), its findings filed for review, and published or
rejected, all tasks concurrently. One task's failure is that task's "rejected" result,
never the whole batch's failure.

    per task:  build → (status built) → gates → mine (the report's findings only)
               → gates passed: publish (the publish guard refuses open review items)
               → gates failed: status rejected with the gate's reasons

Decision for a task whose gates fail: it is rejected at once (no human wait, unlike
`SynthesizeEnvironment`, which has a verifier writer to patch with): its probe and
tamper findings go to the review queue as evidence of what the verifier lets through.
A reviewer's confirmation becomes a regression check for the next validation; a
dismissal keeps the item closed, so validating again after review can publish it.

Invariants: deterministic (no I/O here); the `status` query answers per task: its stage,
the gate report's verdict (`TaskVerdict`), findings and review items, outcome, reasons.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from envfactory.core.models import EnvStatus

    from . import activity_table as acts
    from .steps import Steps, failure
    from .types import (
        EnvInput,
        GateOutcome,
        GatesInput,
        MineInput,
        PublishInput,
        StatusInput,
        SynthesisResult,
        TaskProgress,
        ValidateInput,
        ValidateResult,
        ValidateStatus,
        validation_result,
    )


@workflow.defn(name="ValidateTasks")
class ValidateTasks(Steps):
    """Imported tasks: their verifier exists already, so only build → gates → publish."""

    @workflow.init
    def __init__(self, inp: ValidateInput) -> None:
        self.config = inp.config
        self._tasks = {env_id: TaskProgress(env_id=env_id) for env_id in inp.env_ids}

    @workflow.query(name="status")
    def status(self) -> ValidateStatus:
        return ValidateStatus(tasks=tuple(self._tasks.values()))

    @workflow.run
    async def run(self, inp: ValidateInput) -> ValidateResult:
        results = await asyncio.gather(*(self._one(env_id) for env_id in self._tasks))
        return ValidateResult(results=tuple(results))

    async def _one(self, env_id: str) -> SynthesisResult:
        try:
            self._set(env_id, stage="build")
            await self.act(acts.BUILD, EnvInput(env_id=env_id))
            await self.act(acts.SET_STATUS, StatusInput(env_id=env_id, status=EnvStatus.BUILT))
            self._set(env_id, stage="gates")
            gate = await self.act(
                acts.RUN_GATES, GatesInput(env_id=env_id, repeats=self.config.repeats)
            )
            self._set(
                env_id,
                stage="mining",
                verdict=gate.verdict,
                gate_report_id=gate.report_id,
                reasons=gate.reasons,
            )
            mined = await self.act(
                acts.MINE,
                MineInput(env_id=env_id, gate_report_id=gate.report_id, trajectory_ids=()),
            )
            self._set(env_id, finding_ids=mined.finding_ids, open_review_items=mined.open_items)
            result = await self._decide(env_id, gate)
        except ActivityError as err:
            reason = failure(self._tasks[env_id].stage, err).message
            result = SynthesisResult(
                seed_id="", env_id=env_id, outcome="rejected", reasons=(reason,)
            )
            await self._reject_quietly(env_id, (reason,))
        self._set(env_id, stage="done", outcome=result.outcome, reasons=result.reasons)
        return result

    async def _decide(self, env_id: str, gate: GateOutcome) -> SynthesisResult:
        if gate.passed:
            self._set(env_id, stage="publishing")
            pub = await self.act(
                acts.PUBLISH,
                PublishInput(
                    env_id=env_id,
                    verifier_version=gate.verifier_version,
                    gate_report_id=gate.report_id,
                ),
            )
            if pub.published:
                return validation_result(env_id, gate, "published", ())
            return validation_result(env_id, gate, "rejected", pub.reasons)
        status = StatusInput(env_id=env_id, status=EnvStatus.REJECTED, reasons=gate.reasons)
        await self.act(acts.SET_STATUS, status)
        return validation_result(env_id, gate, "rejected", gate.reasons)

    async def _reject_quietly(self, env_id: str, reasons: tuple[str, ...]) -> None:
        """A task that could not be built or gated is rejected in the store too; if even
        that fails, the workflow result still carries the reason."""
        try:
            await self.act(
                acts.SET_STATUS,
                StatusInput(env_id=env_id, status=EnvStatus.REJECTED, reasons=reasons),
            )
        except ActivityError:
            workflow.logger.warning("could not mark %s rejected: %s", env_id, reasons)

    def _set(self, env_id: str, **changes: Any) -> None:
        self._tasks[env_id] = self._tasks[env_id].model_copy(update=changes)
