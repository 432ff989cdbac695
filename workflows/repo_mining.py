"""A mined candidate through the pipeline's own gates and publishing, as plain calls.

`gate_candidate` runs the activities `ValidateTasks` runs for an imported task, in the
same order and on the same services: build → status built → gates (the whole battery:
probes, partial states from the fix's hunks, repeats, Harbor semantics) → the report's
findings into the review queue → publish (the publish guard) or reject with the gate's
reasons. The result adds the under-tested hunks the gates showed. A candidate mined
before and already decided is reported as stored, not gated again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from envfactory.core.errors import EnvFactoryError
from envfactory.core.models import EnvStatus
from envfactory.core.models.repos import (
    CandidateInput,
    CandidateOutcome,
    CandidateResult,
    CandidateStage,
    DropKind,
    RepoSnapshot,
)
from envfactory.repos import RepoMiner, hunk_findings
from envfactory.repos.miner import cpu_seconds as _cpu

from .store_services import StoreServices
from .types import EnvInput, GatesInput, MineInput, PublishInput, StatusInput

DECIDED: dict[EnvStatus, CandidateOutcome] = {
    EnvStatus.PUBLISHED: "published",
    EnvStatus.REJECTED: "rejected",
}


def gate_candidate(
    services: StoreServices, result: CandidateResult, repeats: int
) -> CandidateResult:
    """Gate and publish a candidate the miner stored (`outcome == "stored"`); any other
    result is returned as it is."""
    if result.outcome != "stored" or result.env_id is None:
        return result
    env_id = result.env_id
    status = services.store.environments.record(env_id).status
    if status in DECIDED:
        outcome = DECIDED[status]
        stage: CandidateStage = "published" if outcome == "published" else "gated"
        return _with(result, outcome, "", stage=stage)
    try:
        services.build(EnvInput(env_id=env_id))
        services.set_status(StatusInput(env_id=env_id, status=EnvStatus.BUILT))
        gate = services.run_gates(GatesInput(env_id=env_id, repeats=repeats))
        services.mine(MineInput(env_id=env_id, gate_report_id=gate.report_id, trajectory_ids=()))
    except EnvFactoryError as exc:
        _reject(services, env_id, (exc.message,))
        return _with(result, "rejected", f"could not be gated: {exc.message}", "error")
    found = hunk_findings(result, services.store.gate_reports.get(int(gate.report_id)))
    gated = result.model_copy(update={"stage": "gated", "findings": found})
    if not gate.passed:
        _reject(services, env_id, gate.reasons)
        reason = "; ".join((*found, *gate.reasons)) or "the gates failed"
        return _with(gated, "rejected", reason, "gates_failed")
    pub = services.publish(
        PublishInput(
            env_id=env_id, verifier_version=gate.verifier_version, gate_report_id=gate.report_id
        )
    )
    if not pub.published:
        return _with(gated, "rejected", "; ".join(pub.reasons), "publish_refused")
    return _with(gated, "published", "", stage="published")


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


def _reject(services: StoreServices, env_id: str, reasons: tuple[str, ...]) -> None:
    services.set_status(StatusInput(env_id=env_id, status=EnvStatus.REJECTED, reasons=reasons))


def mine_commits(
    services: StoreServices,
    miner: RepoMiner,
    snapshot: RepoSnapshot,
    commits: Sequence[str],
    *,
    repeats: int = 2,
    suite: str = "repo",
    pass_to_pass_max: int = 10,
    on_result: Callable[[int, CandidateResult], None] | None = None,
) -> list[CandidateResult]:
    """Mine, gate and publish each commit in turn (`on_result` after each: progress)."""
    results = []
    for i, sha in enumerate(commits):
        try:
            mined = miner.mine_candidate(
                CandidateInput(
                    snapshot=snapshot, commit=sha, suite=suite, pass_to_pass_max=pass_to_pass_max
                )
            )
        except EnvFactoryError as exc:  # one commit's failure is that commit's result
            mined = CandidateResult(
                commit=sha, outcome="dropped", stage="scanned", reason=exc.message,
                reason_kind="error",
            )  # fmt: skip
        t0 = _cpu()
        gated = gate_candidate(services, mined, repeats)
        if gated is not mined:
            gated = gated.model_copy(update={"cpu_s": gated.cpu_s + _cpu() - t0})
        results.append(gated)
        if on_result:
            on_result(i, gated)
    return results
