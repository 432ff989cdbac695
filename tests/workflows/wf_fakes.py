"""File-backed fake services: the same `PipelineServices` seam, no Docker and no model.

They sit behind the real activities (`PipelineActivities`, built from the activity table),
so every activity runs under its real name on its real queue.

State lives in a directory, so a worker in another process (the kill test) and the test
itself see the same store. Every call appends one line to `calls.jsonl`, which is how
tests count executions ("nothing lost or duplicated"). Behaviour comes from
`scenario.json` in the same directory.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from pydantic import BaseModel

from envfactory.core.errors import Conflict, InvalidSeed, SandboxError
from envfactory.core.models import (
    AgentRole,
    CheckKind,
    Decision,
    FailureKind,
    GateFailure,
    ReviewState,
    SolveRate,
    SolveRateBand,
)
from envfactory.core.models.repos import RepoSnapshot
from envfactory.repos.yields import yield_table
from workflows import types as t

#: the hard gate failure the fake gates report: the no-op state earned reward
NOOP_ACCEPTED = GateFailure(
    kind=FailureKind.CHECK,
    check_kind=CheckKind.NOOP,
    check="no-op",
    reason="no-op no-op: expected 0, got [1, 1, 1]",
)
#: a shortcut probe the fake gates report: a planted reward file earned reward (review's)
PROBE_REWARDED = GateFailure(
    kind=FailureKind.CHECK,
    check_kind=CheckKind.PROBE,
    check="reward-file@no-op",
    reason="probe reward-file@no-op: expected 0, got [1, 1, 1]",
)


class Scenario(BaseModel):
    invalid_seeds: list[str] = []
    judge_rewards: list[int] = [1, 0]  # per judge index
    #: the red team finds a shortcut that verifier versions below this accept
    red_team_shortcut_until: int = 0
    hard_gate_failures: int = 0  # the first N verifier versions fail a hard gate
    probe_gate_failures: int = 0  # the first N verifier versions fail a shortcut probe
    #: judges whose index is listed wait for `release-judge-<i>` before finishing
    blocking_judges: list[int] = []
    failing_envs: list[str] = []  # environments whose gates always fail (no-op accepted)
    crashing_judges: list[int] = []  # judges whose attempt always raises (infrastructure)
    slow_build_s: float = 0.0  # the build blocks this long (no heartbeats of its own)...
    slow_cleanup_s: float = 0.0  # ...then its `finally` cleanup takes this long
    #: the shortcut analyst reports a shortcut in each rewarded judge trajectory
    analyst_finds: bool = False
    #: the analyst's output stays invalid: every analysis is a recorded failure
    analyst_fails: bool = False
    #: the seed's own constraints, as research reads them (None: the config's)
    seed_judges: int | None = None
    seed_band: SolveRateBand | None = None
    #: a mined repository: this many commits (`c00`, `c01`, …); those listed are dropped
    repo_commits: int = 3
    dropped_commits: list[str] = []
    slow_mine_s: float = 0.0  # mine_candidate blocks this long


class FileServices:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        scenario = self.root / "scenario.json"
        self.scenario = (
            Scenario.model_validate_json(scenario.read_text()) if scenario.exists() else Scenario()
        )

    # -- bookkeeping ------------------------------------------------------------------

    def _call(self, name: str, **fields: object) -> None:
        line = json.dumps({"call": name, "pid": os.getpid(), **fields})
        with open(self.root / "calls.jsonl", "a") as f:
            f.write(line + "\n")

    def calls(self, name: str | None = None) -> list[dict]:
        path = self.root / "calls.jsonl"
        rows = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
        return [r for r in rows if name is None or r["call"] == name]

    def _put(self, kind: str, key: str, value: BaseModel | dict) -> None:
        d = self.root / kind
        d.mkdir(exist_ok=True)
        data = value.model_dump_json() if isinstance(value, BaseModel) else json.dumps(value)
        tmp = d / f".{key}.tmp"
        tmp.write_text(data)
        tmp.replace(d / f"{key}.json")  # atomic: a retried write overwrites, never duplicates

    def _get(self, kind: str, key: str) -> dict | None:
        path = self.root / kind / f"{key}.json"
        return json.loads(path.read_text()) if path.exists() else None

    def stored(self, kind: str) -> list[str]:
        d = self.root / kind
        return sorted(p.stem for p in d.glob("*.json")) if d.exists() else []

    # -- PipelineServices ------------------------------------------------------------

    def research(self, inp: t.ResearchInput) -> t.SpecRef:
        self._call("research", seed=inp.seed_id)
        if inp.seed_id in self.scenario.invalid_seeds:
            raise InvalidSeed(
                "seed.yaml: description",
                "must not be empty",
                hint="describe the expert workflow in markdown",
            )
        spec = t.SpecRef(
            env_id=inp.env_id,
            version=1,
            reference_steps=3,
            judges=self.scenario.seed_judges,
            band=self.scenario.seed_band,
        )
        self._put("specs", spec.env_id, spec)
        return spec

    def build(self, inp: t.EnvInput) -> t.BuiltEnv:
        self._call("build", env=inp.env_id)
        try:
            time.sleep(self.scenario.slow_build_s)
        finally:  # like removing a container: must finish even when the activity is cancelled
            time.sleep(self.scenario.slow_cleanup_s)
            self._call("build_cleanup", env=inp.env_id)
        return t.BuiltEnv(env_id=inp.env_id, image="sha256:" + "0" * 64)

    def run_agent(self, inp: t.AgentInput) -> t.TrajectoryRef:
        self._call("run_agent", trajectory=inp.trajectory_id)
        if inp.kind == AgentRole.JUDGE and inp.index in self.scenario.crashing_judges:
            raise SandboxError("the Docker daemon went away")
        if inp.kind == AgentRole.JUDGE and inp.index in self.scenario.blocking_judges:
            release = self.root / f"release-judge-{inp.index}"
            (self.root / f"started-judge-{inp.index}-{os.getpid()}").touch()
            while not release.exists():
                time.sleep(0.05)
        self._put("trajectories", inp.trajectory_id, {"kind": inp.kind, "index": inp.index})
        return t.TrajectoryRef(trajectory_id=inp.trajectory_id, claimed_solved=True)

    def synthesize_verifier(self, inp: t.VerifierInput) -> t.VerifierRef:
        self._call(
            "synthesize_verifier",
            round=inp.round,
            confirmed=list(inp.confirmed_finding_ids),
            reasons=list(inp.gate_reasons),
        )
        version = len(self.stored(f"verifiers-{inp.env_id}")) + 1
        self._put(f"verifiers-{inp.env_id}", f"v{version}", inp)
        return t.VerifierRef(env_id=inp.env_id, version=version)

    def run_gates(self, inp: t.GatesInput) -> t.GateOutcome:
        self._call("run_gates", version=inp.verifier_version)
        version = inp.verifier_version or 1
        ok = (
            version > self.scenario.hard_gate_failures
            and inp.env_id not in self.scenario.failing_envs
        )
        failures = () if ok else (NOOP_ACCEPTED,)
        if version <= self.scenario.probe_gate_failures:
            failures += (PROBE_REWARDED,)
        report = f"gate-{inp.env_id}-v{version}"
        return t.GateOutcome(
            report_id=report, verifier_version=version, passed=not failures, failures=failures
        )

    def score(self, inp: t.ScoreInput) -> t.ScoreOutcome:
        self._call("score", version=inp.verifier_version)
        rewards = {}
        for tid in inp.trajectory_ids:
            traj = self._get("trajectories", tid) or {}
            if traj.get("kind") == AgentRole.JUDGE:
                rewards[tid] = self.scenario.judge_rewards[traj["index"]]
            else:
                rewards[tid] = int(inp.verifier_version < self.scenario.red_team_shortcut_until)
        solve = None
        if inp.judges is not None:
            solved = sum(1 for tid, r in rewards.items() if "-judge-" in tid and r == 1)
            solve = SolveRate.measure(inp.judges, solved, inp.band or SolveRateBand())
            self._put("solve-rates", inp.env_id, solve)
        return t.ScoreOutcome(rewards=rewards, solve_rate=solve)

    def mine(self, inp: t.MineInput) -> t.MineOutcome:
        self._call("mine", trajectories=list(inp.trajectory_ids))
        findings, open_items = [], []
        for tid in inp.trajectory_ids:
            if (self._get("trajectories", tid) or {}).get("kind") != AgentRole.RED_TEAM:
                continue
            fid, item = f"find-{tid}", f"item-{tid}"
            findings.append(fid)
            if self._get("decisions", item) is None:
                open_items.append(item)
        return t.MineOutcome(finding_ids=tuple(findings), open_items=tuple(open_items))

    def analyze(self, inp: t.AnalyzeInput) -> t.AnalyzeOutcome:
        self._call("analyze", trajectories=list(inp.trajectory_ids))
        judges = [tid for tid in inp.trajectory_ids if "-judge-" in tid]
        if self.scenario.analyst_fails:
            return t.AnalyzeOutcome(failures=tuple(f"{tid}: no valid report" for tid in judges))
        if not self.scenario.analyst_finds:
            return t.AnalyzeOutcome()
        items = [f"item-model-{tid}" for tid in judges]
        return t.AnalyzeOutcome(
            finding_ids=tuple(f"find-model-{tid}" for tid in judges),
            open_items=tuple(i for i in items if self._get("decisions", i) is None),
        )

    def flag_too_easy(self, inp: t.FlagInput) -> t.Flagged:
        self._call("flag_too_easy", rate=inp.solve_rate.rate)
        item = f"item-too-easy-{inp.env_id}"
        d = self._get("decisions", item)
        state = Decision(d["decision"]).state if d else ReviewState.OPEN
        return t.Flagged(item_id=item, finding_id="find-" + item[5:], state=state)

    def record_decision(self, inp: t.DecisionInput) -> t.DecisionRecorded:
        d = inp.decision
        self._call("record_decision", item=d.item_id, decision=d.decision.value)
        before = self._get("decisions", d.item_id)
        if before is not None and before["decision"] != d.decision.value:
            raise Conflict(f"review item {d.item_id} was already {before['decision']}ed")
        self._put("decisions", d.item_id, {"decision": d.decision.value, "reviewer": d.reviewer})
        return t.DecisionRecorded(
            item_id=d.item_id, finding_id="find-" + d.item_id[5:], state=d.decision.state
        )

    def review_state(self, inp: t.ReviewStateInput) -> t.ReviewStateOutcome:
        self._call("review_state", items=list(inp.item_ids))
        decided, reviewers = [], []
        for item in inp.item_ids:
            d = self._get("decisions", item)
            if d is not None:
                state = Decision(d["decision"]).state
                decided.append(
                    t.DecisionRecorded(item_id=item, finding_id="find-" + item[5:], state=state)
                )
                reviewers.append(d["reviewer"])
        return t.ReviewStateOutcome(decided=tuple(decided), reviewers=tuple(reviewers))

    def decide_in_store(self, item: str, decision: str, reviewer: str) -> None:
        """What the API does first: the decision is stored before anyone is told."""
        self._put("decisions", item, {"decision": decision, "reviewer": reviewer})

    def set_status(self, inp: t.StatusInput) -> None:
        self._call("set_status", env=inp.env_id, status=inp.status.value)
        self._put("status", inp.env_id, inp)

    def publish(self, inp: t.PublishInput) -> t.Published:
        self._call("publish", env=inp.env_id, version=inp.verifier_version)
        self._put("published", inp.env_id, inp)
        return t.Published(env_id=inp.env_id, published=True)

    # -- mining a repository (fake clone, fake commits) --------------------------------

    def take_repository(self, inp: t.TakeRepoInput) -> t.RepoPlan:
        self._call("take_repository", source=inp.source)
        snap = RepoSnapshot(source=inp.source, head="f" * 40, bundle_key="0" * 64, size_bytes=1)
        commits = tuple(f"c{i:02d}" for i in range(self.scenario.repo_commits))
        return t.RepoPlan(snapshot=snap, commits=commits[-inp.limit :] if inp.limit else commits,
                          suite=inp.suite or "fake")  # fmt: skip

    def mine_candidate(self, inp: t.CandidateInput) -> t.CandidateResult:
        self._call("mine_candidate", commit=inp.commit, start=time.monotonic())
        time.sleep(self.scenario.slow_mine_s)
        self._call("mine_candidate_end", commit=inp.commit, end=time.monotonic())
        if inp.commit in self.scenario.dropped_commits:
            return t.CandidateResult(commit=inp.commit, outcome="dropped", stage="buildable",
                                     reason="no fail-to-pass", reason_kind="no_fail_to_pass")  # fmt: skip
        return t.CandidateResult(
            commit=inp.commit, outcome="stored", stage="fail_to_pass", env_id=f"env-{inp.commit}"
        )

    def conclude_candidate(self, inp: t.ConcludeInput) -> t.CandidateResult:
        self._call("conclude_candidate", commit=inp.mined.commit)
        if inp.validated.outcome == "published":
            return inp.mined.model_copy(update={"outcome": "published", "stage": "published"})
        return inp.mined.model_copy(
            update={
                "outcome": "rejected",
                "stage": "gated",
                "reason_kind": "gates_failed",
                "reason": "; ".join(inp.validated.reasons),
            }  # fmt: skip
        )

    def store_yield(self, inp: t.YieldInput) -> t.YieldRef:
        self._call("store_yield", rows=len(inp.results))
        table = yield_table(inp.results, inp.wall_s)
        self._put("yields", inp.snapshot.head, table)
        return t.YieldRef(key=inp.snapshot.head, table=table)
