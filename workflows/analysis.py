"""The model pass of shortcut mining, and the too-easy flag: findings for the review queue.

`analyze` runs the shortcut analyst over each rewarded trajectory, after the rules have
mined it, and turns each reported shortcut into a `ShortcutFinding` with `found_by="model"`
(its rationale and the exploited weakness kept on the finding and in its evidence, which is
what a patch round shows the verifier writer). `too_easy_finding` is the review item a solve
rate above the band becomes.

Invariants:
- ids are derived (env, trajectory, verifier version, rule), so a retried activity stores
  nothing twice; an analysis already stored is read back instead of asking the model again;
- an analysis that gave no valid report is a recorded failure (its trajectory is stored and
  the reason returned), never an exception; only an unreachable endpoint raises (retried);
- the analyst sees the instruction, the verifier and the trajectory — not the reference
  solution.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from envfactory.agents.roles import (
    ReportedFinding,
    RoleRuntime,
    ShortcutAnalystInput,
    VerifierFileText,
    report_from_trajectory,
    run_shortcut_analyst,
)
from envfactory.core.errors import NotFound
from envfactory.core.models import (
    AgentRole,
    EnvironmentSpec,
    Evidence,
    ShortcutFinding,
    SolveRate,
    Trajectory,
    Verifier,
)
from envfactory.core.models.rows import FindingRule, Rule
from envfactory.store import ArtifactStore, Store
from verifiers.mining import finding_id


def analysis_id(env_id: str, trajectory_id: str, verifier_version: int) -> str:
    key = f"{env_id}\0{trajectory_id}\0v{verifier_version}".encode()
    return "analysis-" + hashlib.sha256(key).hexdigest()[:16]


@dataclass
class Analysed:
    findings: list[ShortcutFinding]
    failure: str | None = None


@dataclass
class Analyst:
    """One environment's analyses under one verifier version."""

    store: Store
    artifacts: ArtifactStore
    spec: EnvironmentSpec
    verifier: Verifier
    runtime: Callable[[], RoleRuntime]  # a fresh model per analysis
    attempts: int

    def analyse(self, traj: Trajectory) -> Analysed:
        aid = analysis_id(self.spec.id, traj.id, self.verifier.version)
        try:
            done = self.store.trajectories.get(aid)
        except NotFound:
            done = self._run(traj, aid)
        report = report_from_trajectory(done)
        if report is None:
            return Analysed([], f"{traj.id}: {done.error or 'no valid report'} (see {aid})")
        return Analysed([self._finding(traj, r, i) for i, r in enumerate(report.findings)])

    def _run(self, traj: Trajectory, aid: str) -> Trajectory:
        inp = ShortcutAnalystInput(
            env_id=self.spec.id,
            instruction=self.spec.instruction,
            verifier_entry=self.verifier.entry,
            verifier_files=tuple(
                VerifierFileText(path=f.path, content=self._text(f.key))
                for f in self.verifier.files
            ),
            trajectory=traj,
            rule_findings=self._rule_lines(traj.id),
        )
        res = asyncio.run(run_shortcut_analyst(inp, rt=self.runtime(), attempts=self.attempts))
        analysis = res.analysis.model_copy(update={"id": aid, "env_id": self.spec.id})
        self.store.trajectories.add(analysis)
        return analysis

    def _text(self, key: str) -> str:
        return self.artifacts.get(key).decode("utf-8", errors="replace")

    def _rule_lines(self, trajectory_id: str) -> tuple[str, ...]:
        found = self.store.findings.list(env_id=self.spec.id, found_by="rules")
        return tuple(
            f"{f.rule}: {f.evidence.summary[:300]}"
            for f in found
            if f.evidence.trajectory_id == trajectory_id
        )

    def _finding(self, traj: Trajectory, r: ReportedFinding, n: int) -> ShortcutFinding:
        rule = str(Rule(FindingRule.MODEL, r.rule))
        version = f"{traj.id}@v{self.verifier.version}"
        summary = (
            f"{traj.role.value} trajectory {traj.id} (analyst): {r.rationale}\n"
            f"Verifier weakness: {r.weakness}"
        )
        commands = tuple(
            c.arguments[:2000]
            for s in traj.steps
            if s.index in r.step_indexes
            for c in s.tool_calls
        )
        return ShortcutFinding(
            id=finding_id(self.spec.id, version, rule),
            env_id=self.spec.id,
            source="trajectory",
            rule=rule,
            found_by="model",
            rationale=r.rationale,
            weakness=r.weakness,
            evidence=Evidence(
                summary=summary[:4000],
                diff=traj.diff,
                commands=commands,
                trajectory_id=traj.id,
                step_indexes=tuple(sorted(set(r.step_indexes))),
            ),
            state=traj.final_state,
        )


def rewarded(store: Store, trajectory_ids: tuple[str, ...]) -> list[Trajectory]:
    """The solver trajectories among these that earned reward 1 (never an analysis)."""
    trajs = (store.trajectories.get(t) for t in trajectory_ids)
    return [t for t in trajs if t.reward == 1 and t.role != AgentRole.SHORTCUT_ANALYST]


#: a solve rate above the band
TOO_EASY = Rule(FindingRule.SOLVE_RATE, "too-easy")


def too_easy_finding(env_id: str, report_id: str, solve: SolveRate) -> ShortcutFinding:
    """A solve rate above the band, for a reviewer: confirm keeps the task out (too easy),
    dismiss overrides the band and lets it be published."""
    return ShortcutFinding(
        id=finding_id(env_id, f"gate-report-{report_id}", str(TOO_EASY)),
        env_id=env_id,
        source="solve-rate",
        rule=str(TOO_EASY),
        evidence=Evidence(
            summary=(
                f"{solve.text()}. Above the band the task may be too easy to learn from. "
                "Confirm to keep it out of the catalogue (status too_easy); dismiss to "
                "override the band and publish it."
            )
        ),
    )
