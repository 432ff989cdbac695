"""The seam between Temporal and the rest of envfactory: one plain method per box.

Each method is one activity: its entry in activity_table.py names it, and
`PipelineActivities` (activities.py) wraps it — heartbeats, error translation and thread
hand-off live there, once. An implementation of this protocol is plain, synchronous
Python over the store, the sandbox engine, the agents and the verifiers (see
`workflows.store_services`), and can be called from a test without Temporal.

Contract for every method:
- it stores its output (store rows + artifact keys) before it returns, and returns ids;
- it is idempotent under retry: the same input twice leaves one stored result (ids are
  deterministic or looked up first);
- bad input raises an `InvalidInput` subclass (terminal); infrastructure trouble raises a
  retryable `EnvFactoryError` (or anything else, which is retried too).
"""

from __future__ import annotations

from typing import Protocol

from . import types as t


class PipelineServices(Protocol):
    def research(self, inp: t.ResearchInput) -> t.SpecRef:
        """Seed → a stored EnvironmentSpec (InvalidSeed when the seed is unusable)."""
        ...

    def build(self, inp: t.EnvInput) -> t.BuiltEnv:
        """Build the environment image and record it on the spec."""
        ...

    def run_agent(self, inp: t.AgentInput) -> t.TrajectoryRef:
        """A judge or red team attempt from the instruction alone; trajectory stored."""
        ...

    def synthesize_verifier(self, inp: t.VerifierInput) -> t.VerifierRef:
        """A new verifier version from instruction + criteria (+ evidence), never the solution."""
        ...

    def run_gates(self, inp: t.GatesInput) -> t.GateOutcome:
        """Oracle / no-op / unsolved / probes / regressions; the report is stored."""
        ...

    def score(self, inp: t.ScoreInput) -> t.ScoreOutcome:
        """Verify each trajectory's final state; rewards stored on the trajectories."""
        ...

    def mine(self, inp: t.MineInput) -> t.MineOutcome:
        """Probe failures + trajectory shortcuts → findings and review items (deduplicated)."""
        ...

    def analyze(self, inp: t.AnalyzeInput) -> t.AnalyzeOutcome:
        """The shortcut analyst over rewarded trajectories → model findings, review items."""
        ...

    def flag_too_easy(self, inp: t.FlagInput) -> t.Flagged:
        """A solve rate above the band → a finding and review item (idempotent)."""
        ...

    def record_decision(self, inp: t.DecisionInput) -> t.DecisionRecorded:
        """Store a review decision (Conflict if it was already decided differently)."""
        ...

    def review_state(self, inp: t.ReviewStateInput) -> t.ReviewStateOutcome:
        """Which of these review items the store already has decisions for."""
        ...

    def set_status(self, inp: t.StatusInput) -> None:
        """Record the environment's status (built, unproven, rejected, …)."""
        ...

    def publish(self, inp: t.PublishInput) -> t.Published:
        """guard() then mark published; a refusal is a result listing every reason."""
        ...

    def take_repository(self, inp: t.TakeRepoInput) -> t.RepoPlan:
        """Clone a repository once into the artifact store; the commits asked for."""
        ...

    def mine_candidate(self, inp: t.CandidateInput) -> t.CandidateResult:
        """One commit → an environment stored for the gates, or dropped with the reason."""
        ...

    def conclude_candidate(self, inp: t.ConcludeInput) -> t.CandidateResult:
        """A mined candidate's outcome from its validation (reasons, untested hunks)."""
        ...

    def store_yield(self, inp: t.YieldInput) -> t.YieldRef:
        """A mining run's yield table and rows, stored as one artifact."""
        ...
