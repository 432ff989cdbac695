"""Run one role k times on every target and collect an `EvalRun`.

Attempts run one after another (each holds containers; the machine's pool is small).
A target the role cannot start on — the verifier writer on a seed whose research failed,
a judge on an environment with no verifier — fails each of its k attempts with
`setup_failed` instead of stopping the eval; a Docker failure under one attempt is that
attempt's `sandbox_error`. Configuration problems (no model, no script) raise at once,
before anything is run or stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from envfactory.agents import ChatModel
from envfactory.core.errors import EnvFactoryError
from envfactory.core.models import (
    AgentRole,
    EvalAttempt,
    EvalRun,
    FailureCause,
    TaskSeed,
    new_id,
)
from envfactory.core.settings import AgentsSettings

from .attempts import Attempts, Done
from .outcome import measured
from .targets import Target

#: (role, the target's seed or None, the target's name) → a fresh model for one attempt
ModelFactory = Callable[[AgentRole, TaskSeed | None, str], ChatModel]
#: the roles an eval can run, and what each needs of a target
EVAL_ROLES = (AgentRole.RESEARCH, AgentRole.VERIFIER, AgentRole.JUDGE, AgentRole.RED_TEAM)


@dataclass
class EvalHarness:
    attempts: Attempts
    agents: AgentsSettings
    models: ModelFactory
    on_attempt: Callable[[EvalAttempt], None] | None = None

    def run(self, role: AgentRole, targets: Sequence[Target], k: int, source: str) -> EvalRun:
        cfg = self.agents.roles()[role.value]
        rows: list[EvalAttempt] = []
        for target in targets:
            ready, problem = self._prepare(role, target)
            for i in range(k):
                row = (
                    _setup_failed(target.name, i, problem)
                    if problem is not None
                    else self._attempt(role, ready, i)
                )
                rows.append(row)
                if self.on_attempt is not None:
                    self.on_attempt(row)
        return EvalRun(
            id=new_id("eval"),
            role=role,
            model=cfg.model_name,
            base_url=cfg.base_url if cfg.backend == "openai" else None,
            k=k,
            source=source,
            attempts=tuple(rows),
        )

    def _prepare(self, role: AgentRole, t: Target) -> tuple[Target, str | None]:
        """The target with what the role needs (the verifier writer on a seed: research's
        environment, made by the research role's own model), or why it cannot start."""
        if role == AgentRole.RESEARCH:
            return t, None if t.seed is not None else "research needs a seed, not an environment"
        if role in (AgentRole.JUDGE, AgentRole.RED_TEAM) and t.verifier is None:
            return t, f"environment {t.name} has no verifier to reward the attempt"
        if t.spec is not None:
            return t, None
        assert t.seed is not None
        cfg = self.agents.roles()[AgentRole.RESEARCH.value]
        model = self.models(AgentRole.RESEARCH, t.seed, t.name)
        try:
            done = self.attempts.research(t.seed, model, cfg)
        except EnvFactoryError as exc:
            return t, f"research could not make the environment: {exc.message}"
        if done.spec is None:
            why = done.failure[1] if done.failure else "no environment"
            return t, f"research could not make the environment: {why}"
        return Target(name=t.name, seed=t.seed, spec=done.spec), None

    def _attempt(self, role: AgentRole, t: Target, index: int) -> EvalAttempt:
        # a fresh model per attempt: each attempt runs on its own event loop
        model = self.models(role, t.seed, t.name)
        t0 = time.monotonic()
        try:
            done = self._run(role, t, model)
        except EnvFactoryError as exc:  # Docker trouble under the attempt, not the model
            done = Done(None, None, (FailureCause.SANDBOX_ERROR, exc.message[:300]))
        wall = time.monotonic() - t0
        return measured(
            done.trajectory,
            target=t.name,
            index=index,
            wall_s=wall,
            key=done.key,
            failure=done.failure,
        )

    def _run(self, role: AgentRole, t: Target, model: ChatModel) -> Done:
        cfg = self.agents.roles()[role.value]
        if role == AgentRole.RESEARCH:
            assert t.seed is not None
            return self.attempts.research(t.seed, model, cfg)
        assert t.spec is not None
        if role == AgentRole.VERIFIER:
            return self.attempts.verifier(t.spec, model, cfg)
        assert t.verifier is not None
        return self.attempts.solver(role, t.spec, t.verifier, model, cfg)


def _setup_failed(target: str, index: int, why: str) -> EvalAttempt:
    return measured(
        None,
        target=target,
        index=index,
        wall_s=0.0,
        key=None,
        failure=(FailureCause.SETUP_FAILED, why),
    )
