"""`ValidateTasks`: imported tasks (Harbor / Terminal-Bench) through build → gates → publish.

Their verifier is already stored by the importer, so there is no agent work: each task is
built, gated (probes included) and published or rejected, all tasks concurrently. One
task's failure is that task's "rejected" result, never the whole batch's failure.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from envfactory.core.models import EnvStatus

    from . import activities as acts
    from .steps import Steps, failure
    from .types import (
        BuiltEnv,
        EnvInput,
        GateOutcome,
        GatesInput,
        Published,
        PublishInput,
        StatusInput,
        SynthesisResult,
        ValidateInput,
        ValidateResult,
    )


@workflow.defn(name="ValidateTasks")
class ValidateTasks(Steps):
    """Imported tasks: their verifier exists already, so only build → gates → publish."""

    @workflow.init
    def __init__(self, inp: ValidateInput) -> None:
        self.config = inp.config
        self._done: dict[str, SynthesisResult] = {}

    @workflow.query(name="status")
    def status(self) -> ValidateResult:
        return ValidateResult(results=tuple(self._done.values()))

    @workflow.run
    async def run(self, inp: ValidateInput) -> ValidateResult:
        results = await asyncio.gather(*(self._one(env_id) for env_id in inp.env_ids))
        return ValidateResult(results=tuple(results))

    async def _one(self, env_id: str) -> SynthesisResult:
        try:
            await self.act(acts.BUILD, EnvInput(env_id=env_id), BuiltEnv)
            gate = await self.act(
                acts.RUN_GATES, GatesInput(env_id=env_id, repeats=self.config.repeats), GateOutcome
            )
            result = await self._decide(env_id, gate)
        except ActivityError as err:
            reason = failure("validation", err).message
            result = SynthesisResult(seed_id="", env_id=env_id, outcome="rejected", reasons=(reason,))
        self._done[env_id] = result
        return result

    async def _decide(self, env_id: str, gate: GateOutcome) -> SynthesisResult:
        base = {"seed_id": "", "env_id": env_id, "verifier_version": gate.verifier_version,
                "gate_report_id": gate.report_id}  # fmt: skip
        if gate.passed:
            pub = await self.act(
                acts.PUBLISH,
                PublishInput(env_id=env_id, verifier_version=gate.verifier_version,
                             gate_report_id=gate.report_id),
                Published,
            )  # fmt: skip
            if pub.published:
                return SynthesisResult(outcome="published", **base)
            reasons = pub.reasons
        else:
            reasons = gate.reasons
        status = StatusInput(env_id=env_id, status=EnvStatus.REJECTED, reasons=reasons)
        await self.act(acts.SET_STATUS, status, type(None))
        return SynthesisResult(outcome="rejected", reasons=reasons, **base)
