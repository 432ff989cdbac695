"""One attempt of one role on one target, in its own sandbox, checked the way the pipeline
checks it: research by its finish tool (build + reference solution), the verifier writer
by the gates, judge and red team by the real verifier runner on their final state.

Each returns `(trajectory, key, failure, spec)`; a model failure is a result here (its
trajectory is stored), so one bad attempt never ends the eval. Containers are removed in
`finally`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from envfactory.agents import ChatModel
from envfactory.agents.recording import get_model, put_model
from envfactory.agents.roles import (
    JudgeInput,
    RedTeamInput,
    ResearchInput,
    RoleRuntime,
    SolverResult,
    VerifierWriterInput,
    run_judge,
    run_red_team,
    run_research,
    run_verifier_writer,
)
from envfactory.core.errors import AgentError
from envfactory.core.models import (
    AgentRole,
    EnvironmentSpec,
    FailureCause,
    GateVerdict,
    Purpose,
    TaskSeed,
    Trajectory,
    Verifier,
)
from envfactory.core.settings import AgentSettings
from envfactory.store import ArtifactStore
from sandboxes.protocol import SandboxEngine
from verifiers.battery import gate_input
from verifiers.gates import run_gates_detailed
from verifiers.runner import verify_state

from .outcome import classify

Failure = tuple[FailureCause, str] | None


@dataclass(frozen=True)
class Done:
    trajectory: Trajectory | None
    key: str | None
    failure: Failure
    spec: EnvironmentSpec | None = None  # research: the environment it proved


@dataclass
class Attempts:
    engine: SandboxEngine
    artifacts: ArtifactStore
    gate_repeats: int = 1
    concurrency: int = 2

    def _rt(self, model: ChatModel, settings: AgentSettings) -> RoleRuntime:
        return RoleRuntime(model=model, settings=settings, store=self.artifacts)

    def _failed(self, exc: AgentError) -> Done:
        """A run that raised: its trajectory (stored here if the role did not) and cause."""
        traj: Trajectory | None = getattr(exc, "trajectory", None)
        if traj is None:
            return Done(None, None, (FailureCause.MODEL_ERROR, exc.message[:300]))
        key = getattr(exc, "trajectory_key", None) or put_model(self.artifacts, traj)
        return Done(traj, key, classify(traj) or (FailureCause.MODEL_ERROR, exc.message[:300]))

    def research(self, seed: TaskSeed, model: ChatModel, settings: AgentSettings) -> Done:
        e = self.engine
        builder = e.start(e.ensure_base_image("python"), purpose=Purpose.RESEARCH, network=True)
        try:
            res = asyncio.run(
                run_research(
                    ResearchInput(seed=seed),
                    rt=self._rt(model, settings),
                    builder=builder,
                    engine=e,
                )
            )
        except AgentError as exc:
            return self._failed(exc)
        finally:
            builder.remove()
        traj = get_model(self.artifacts, res.trajectory_key, Trajectory)
        spec = res.spec.model_copy(update={"image": res.build.image})
        return Done(traj, res.trajectory_key, None, spec)

    def verifier(self, spec: EnvironmentSpec, model: ChatModel, settings: AgentSettings) -> Done:
        assert spec.image
        box = self.engine.start(spec.image, limits=spec.limits, purpose=Purpose.VERIFIER_WRITER)
        try:
            res = asyncio.run(
                run_verifier_writer(
                    VerifierWriterInput.from_spec(spec), rt=self._rt(model, settings), sandbox=box
                )
            )
        except AgentError as exc:
            return self._failed(exc)
        finally:
            box.remove()
        traj = get_model(self.artifacts, res.trajectory_key, Trajectory)
        return Done(traj, res.trajectory_key, self._gates(spec, res.verifier))

    def _gates(self, spec: EnvironmentSpec, verifier: Verifier) -> Failure:
        assert spec.image
        inp, _ = gate_input(
            self.engine,
            spec=spec,
            verifier=verifier,
            files=self.artifacts.get,
            image=spec.image,
            repeats=self.gate_repeats,
            concurrency=self.concurrency,
        )
        report = run_gates_detailed(inp).report
        if report.verdict == GateVerdict.PASSED:
            return None
        return FailureCause.GATES_REJECTED, "; ".join(report.reasons)

    def solver(
        self,
        role: AgentRole,
        spec: EnvironmentSpec,
        verifier: Verifier,
        model: ChatModel,
        settings: AgentSettings,
    ) -> Done:
        """A judge or red-team attempt, rewarded by the real runner on its final state."""
        assert spec.image
        box = self.engine.start(spec.image, limits=spec.limits, purpose=Purpose.of(role.value))
        rt = self._rt(model, settings)
        try:
            res: SolverResult
            if role == AgentRole.JUDGE:
                res = asyncio.run(run_judge(JudgeInput.from_spec(spec), rt=rt, sandbox=box))
            else:
                res = asyncio.run(run_red_team(RedTeamInput.from_spec(spec), rt=rt, sandbox=box))
        except AgentError as exc:
            return self._failed(exc)
        finally:
            box.remove()
        traj = get_model(self.artifacts, res.trajectory_key, Trajectory)
        if self._reward(spec, verifier, traj) == 1:
            return Done(traj, res.trajectory_key, None)
        failure = classify(traj) or (
            FailureCause.NOT_REWARDED,
            f"finished (claimed {'solved' if res.claimed_solved else 'not solved'}); reward 0",
        )
        return Done(traj, res.trajectory_key, failure)

    def _reward(self, spec: EnvironmentSpec, verifier: Verifier, traj: Trajectory) -> int:
        if traj.final_state is None:
            return 0
        assert spec.image
        return verify_state(
            self.engine,
            state_image=traj.final_state.image,
            pristine_image=spec.image,
            spec=spec,
            verifier=verifier,
            files=self.artifacts.get,
            state_diff=traj.diff or None,
        ).reward
