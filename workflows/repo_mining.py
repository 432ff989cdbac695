"""Mining a repository's history: the activities' plain methods, and the same steps in one
process.

`RepoMiningServices` is the share of `PipelineServices` that mining adds (StoreServices
inherits it): take the repository (clone once into the artifact store, list the
commits), mine one commit, conclude a candidate from its validation, store the yield
table. The `MineRepository` workflow (mine_flow.py) calls them as activities, one child
workflow per commit; each stored candidate is gated by a child `ValidateTasks`, the
pipeline's own build → gates → findings → publish.

`mine_commits` runs the same steps in one process, in order, with no Temporal server:
`envfactory repo mine` without `--durable`. `validate_here` is `ValidateTasks` for one
task as plain calls, in the same order on the same services.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from envfactory.core.errors import EnvFactoryError, InvalidInput
from envfactory.core.models import AgentRole, EnvStatus
from envfactory.core.models.repos import (
    CandidateInput,
    CandidateOutcome,
    CandidateResult,
    CandidateStage,
    DropKind,
)
from envfactory.core.settings import Settings
from envfactory.repos import (
    RepoMiner,
    check_revisions,
    clone_repository,
    hunk_findings,
    open_snapshot,
    repo_suite,
    select_commits,
    yield_table,
)
from envfactory.repos.wording import InstructionWriter, model_writer
from envfactory.store import ArtifactStore, Store
from sandboxes.protocol import SandboxEngine

from . import types as t
from .models_source import ModelSource, role_settings
from .services import PipelineServices

DECIDED: dict[EnvStatus, CandidateOutcome] = {
    EnvStatus.PUBLISHED: "published",
    EnvStatus.REJECTED: "rejected",
}


class RepoMiningServices:
    """The mining activities, over the services' settings, store, artifacts and engine."""

    settings: Settings
    store: Store
    artifacts: ArtifactStore
    engine: SandboxEngine
    models: ModelSource

    @property
    def _repos_dir(self) -> Path:
        return self.settings.home / "repos"

    def take_repository(self, inp: t.TakeRepoInput) -> t.RepoPlan:
        """Clone once into the artifact store (content-addressed: a retry stores nothing
        new) and list the commits asked for."""
        check_revisions(inp.revisions)  # before anything is cloned
        snap = clone_repository(inp.source, self.artifacts, max_bytes=inp.max_bytes)
        bare = open_snapshot(snap, self.artifacts, self._repos_dir / "clones")
        commits = select_commits(bare, inp.revisions, inp.paths, inp.limit)
        return t.RepoPlan(
            snapshot=snap, commits=tuple(commits), suite=inp.suite or repo_suite(inp.source)
        )

    def mine_candidate(self, inp: CandidateInput) -> CandidateResult:
        """One commit → stored for the gates, or dropped. A commit whose environment an
        earlier run already published or rejected is reported so, not gated again. Bad
        input about this one commit is its drop; infrastructure trouble is raised (the
        activity is retried)."""
        miner = RepoMiner(self.engine, self.artifacts, self.store, self._repos_dir,
                          self.settings.sandbox.task_caps, self._writer())  # fmt: skip
        hold = self.settings.repos.hold_underspecified
        try:
            mined = miner.mine_candidate(inp.model_copy(update={"hold_underspecified": hold}))
        except InvalidInput as exc:
            return CandidateResult(
                commit=inp.commit, outcome="dropped", stage="scanned", reason=exc.message,
                reason_kind="error",
            )  # fmt: skip
        return _decided_before(self.store, mined)

    def _writer(self) -> InstructionWriter | None:
        """The research model writes instructions when one is configured (not scripted)."""
        cfg = role_settings(self.settings.agents, AgentRole.RESEARCH)
        if cfg.backend == "scripted":
            return None
        model = self.models.model(AgentRole.RESEARCH, None)
        return model_writer(model, timeout_s=cfg.request_timeout_s)

    def conclude_candidate(self, inp: t.ConcludeInput) -> CandidateResult:
        """The candidate's outcome from its validation: published, or rejected with the
        gates' reasons and the hunks the tests do not exercise."""
        mined, done = inp.mined, inp.validated
        if done.gate_report_id is None:
            reason = f"could not be gated: {'; '.join(done.reasons)}"
            return _with(mined, "rejected", reason, "error")
        report = self.store.gate_reports.get(int(done.gate_report_id))
        found = hunk_findings(mined, report)
        findings = (*mined.findings, *found)
        gated = mined.model_copy(update={"stage": "gated", "findings": findings})
        if done.outcome == "published":
            return _with(gated, "published", "", stage="published")
        if report.reasons:
            reason = "; ".join((*findings, *report.reasons)) or "the gates failed"
            return _with(gated, "rejected", reason, "gates_failed")
        return _with(gated, "rejected", "; ".join(done.reasons), "publish_refused")

    def store_yield(self, inp: t.YieldInput) -> t.YieldRef:
        """The run's yield table and every candidate's row, as one artifact."""
        table = yield_table(inp.results, inp.wall_s)
        body = {
            "repository": inp.snapshot.model_dump(mode="json"),
            "candidates": [r.model_dump(mode="json") for r in inp.results],
            "totals": table.model_dump(mode="json"),
        }
        key = self.artifacts.put_bytes(json.dumps(body, indent=1).encode())
        return t.YieldRef(key=key, table=table)


def _decided_before(store: Store, mined: CandidateResult) -> CandidateResult:
    if mined.outcome != "stored" or mined.env_id is None:
        return mined
    outcome = DECIDED.get(store.environments.record(mined.env_id).status)
    if outcome == "published":
        return _with(mined, outcome, "", stage="published")
    if outcome == "rejected":
        reason = f"rejected before: {mined.env_id} was gated by an earlier run"
        return _with(mined, outcome, reason, "gates_failed", stage="gated")
    return mined


def _with(
    result: CandidateResult,
    outcome: CandidateOutcome,
    reason: str,
    kind: DropKind | None = None,
    *,
    stage: CandidateStage | None = None,
) -> CandidateResult:
    update = {"outcome": outcome, "reason": reason, "reason_kind": kind}
    return result.model_copy(update=update | ({"stage": stage} if stage else {}))


# -- the same steps in one process ------------------------------------------------------


def validate_here(services: PipelineServices, env_id: str, repeats: int) -> t.SynthesisResult:
    """`ValidateTasks` for one task, as plain calls: build → built → gates → findings →
    publish (the publish guard) or rejected with the gate's reasons."""
    try:
        services.build(t.EnvInput(env_id=env_id))
        services.set_status(t.StatusInput(env_id=env_id, status=EnvStatus.BUILT))
        gate = services.run_gates(t.GatesInput(env_id=env_id, repeats=repeats))
        services.mine(t.MineInput(env_id=env_id, gate_report_id=gate.report_id, trajectory_ids=()))
    except EnvFactoryError as exc:
        _reject(services, env_id, (exc.message,))
        return t.SynthesisResult(seed_id="", env_id=env_id, outcome="rejected",
                                 reasons=(exc.message,))  # fmt: skip
    if not gate.passed:
        _reject(services, env_id, gate.reasons)
        return t.validation_result(env_id, gate, "rejected", gate.reasons)
    pub = services.publish(
        t.PublishInput(
            env_id=env_id, verifier_version=gate.verifier_version, gate_report_id=gate.report_id
        )
    )
    outcome: t.Outcome = "published" if pub.published else "rejected"
    return t.validation_result(env_id, gate, outcome, pub.reasons)


def _reject(services: PipelineServices, env_id: str, reasons: tuple[str, ...]) -> None:
    services.set_status(t.StatusInput(env_id=env_id, status=EnvStatus.REJECTED, reasons=reasons))


def gate_candidate(
    services: PipelineServices, mined: CandidateResult, repeats: int
) -> CandidateResult:
    """Gate and publish a candidate stored for the gates; any other result as it is."""
    if mined.outcome != "stored" or mined.env_id is None:
        return mined
    validated = validate_here(services, mined.env_id, repeats)
    return services.conclude_candidate(t.ConcludeInput(mined=mined, validated=validated))


def mine_commits(
    services: PipelineServices,
    plan: t.RepoPlan,
    *,
    repeats: int = 2,
    pass_to_pass_max: int = 10,
    hunk_max: int = 6,
    on_result: Callable[[int, CandidateResult], None] | None = None,
) -> list[CandidateResult]:
    """Mine, gate and publish each commit of the plan in turn (`on_result` after each)."""
    results = []
    for i, sha in enumerate(plan.commits):
        candidate = CandidateInput(snapshot=plan.snapshot, commit=sha, suite=plan.suite,
                                   pass_to_pass_max=pass_to_pass_max, hunk_max=hunk_max)  # fmt: skip
        try:
            mined = services.mine_candidate(candidate)
        except EnvFactoryError as exc:  # one commit's failure is that commit's result
            mined = CandidateResult(
                commit=sha, outcome="dropped", stage="scanned", reason=exc.message,
                reason_kind="error",
            )  # fmt: skip
        results.append(gate_candidate(services, mined, repeats))
        if on_result:
            on_result(i, results[-1])
    return results
