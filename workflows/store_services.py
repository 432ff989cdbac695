"""The real `PipelineServices`: the store, the sandbox engine, the agents and the verifiers.

Each method is a thin composition of other packages' plain functions; the rules here are
only about *storing* and *idempotency*:
- every output is in the store (rows + artifact keys) before the method returns;
- ids are decided by the workflow (env id, trajectory ids) or derived from the round
  (verifier version = round + 1), so a retried activity finds what an earlier attempt
  stored and returns it instead of doing the work twice;
- containers are removed in `finally` (the activity layer keeps heartbeating meanwhile).

The agent roles are async; they run on a private event loop in the activity's thread.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

from envfactory.agents.build_context import context_tar, load_context
from envfactory.agents.recording import get_model
from envfactory.agents.roles import (
    JudgeInput,
    RedTeamInput,
    ResearchInput,
    RoleRuntime,
    VerifierFileText,
    VerifierWriterInput,
    run_judge,
    run_red_team,
    run_research,
    run_verifier_writer,
)
from envfactory.core.errors import Conflict, NotFound
from envfactory.core.models import (
    AgentRole,
    AuthMethod,
    BuildContext,
    BuildResult,
    CheckKind,
    EnvironmentSpec,
    EnvStatus,
    GateReport,
    GateVerdict,
    Purpose,
    ReviewItem,
    ReviewState,
    Rule,
    ShortcutFinding,
    SolveRate,
    SolveRateBand,
    StateRef,
    TaskSeed,
    Trajectory,
    Verifier,
    gated_spec_hash,
)
from envfactory.core.settings import Settings
from envfactory.store import ArtifactStore, Store
from sandboxes.protocol import SandboxEngine
from verifiers.battery import gate_input
from verifiers.evidence import findings_from_report
from verifiers.formats import settle_workdir
from verifiers.gates import GateRun, run_gates_detailed
from verifiers.mining import MiningConfig, mine, rejected_claims
from verifiers.mutation import mutation_findings, mutation_score
from verifiers.runner import verify_state

from . import types as t
from .analysis import Analyst, rewarded, too_easy_finding
from .models_source import ModelSource, role_settings
from .repo_mining import RepoMiningServices


@dataclass
class StoreServices(RepoMiningServices):
    settings: Settings
    store: Store
    artifacts: ArtifactStore
    engine: SandboxEngine
    models: ModelSource
    #: the engine agent roles use (research, judges, red team, verifier writer): its own
    #: pool, so agents holding sandboxes can never starve the gates of theirs (and the
    #: agents queue runs at most pool_size // 2 at once, since research nests a second
    #: container inside its builder's lifetime)
    agent_engine: SandboxEngine | None = None
    #: one gate run at a time per process: a gate run already fans out to the whole pool,
    #: and two at once hold state containers while waiting for verify slots (starvation)
    _gate_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def agents_engine(self) -> SandboxEngine:
        return self.agent_engine or self.engine

    # -- helpers ----------------------------------------------------------------------

    def _rt(self, role: AgentRole, seed: TaskSeed | None) -> RoleRuntime:
        return RoleRuntime(
            model=self.models.model(role, seed),
            settings=role_settings(self.settings.agents, role),
            store=self.artifacts,
        )

    def _spec(self, env_id: str) -> EnvironmentSpec:
        return self.store.environments.get(env_id)

    def _seed_of(self, spec: EnvironmentSpec) -> TaskSeed | None:
        return self.store.seeds.get(spec.seed_id) if spec.seed_id else None

    def _image(self, spec: EnvironmentSpec) -> str:
        if not spec.image:
            raise NotFound(f"environment {spec.id} has no built image yet")
        return spec.image

    # -- research and build -----------------------------------------------------------

    def research(self, inp: t.ResearchInput) -> t.SpecRef:
        try:
            spec = self._spec(inp.env_id)  # an earlier attempt stored it: done
        except NotFound:
            spec = self._research(inp)
        c = self.store.seeds.get(inp.seed_id).constraints
        return t.SpecRef(
            env_id=spec.id,
            version=spec.version,
            reference_steps=len(spec.reference_solution),
            judges=c.judges,
            band=SolveRateBand.for_seed(c.min_solve_rate, c.max_solve_rate),
        )

    def _research(self, inp: t.ResearchInput) -> EnvironmentSpec:
        seed = self.store.seeds.get(inp.seed_id)  # NotFound is terminal: a clear failure
        # The builder is a workbench (the agent writes the build context there); the
        # environment's own base is whatever its Dockerfile says. Always the python base.
        engine = self.agents_engine
        builder = engine.start(
            engine.ensure_base_image("python"), purpose=Purpose.RESEARCH, network=True
        )
        try:
            result = asyncio.run(
                run_research(
                    ResearchInput(seed=seed),
                    rt=self._rt(AgentRole.RESEARCH, seed),
                    builder=builder,
                    engine=engine,
                )
            )
        finally:
            builder.remove()
        spec = result.spec.model_copy(update={"id": inp.env_id})
        self.store.environments.add(spec, EnvStatus.DRAFT)
        self.store.environments.set_build(spec.id, spec.version, result.build)
        return self._spec(spec.id)

    def build(self, inp: t.EnvInput) -> t.BuiltEnv:
        spec = self._spec(inp.env_id)
        files = load_context(self.artifacts, spec.build)
        built = self.engine.build(context_tar(files), dockerfile=spec.build.dockerfile)
        services = [self._build_context(s.build).image for s in spec.services]
        with self.store.session() as tx:  # the image and what it settles, together
            spec = tx.environments.set_build(spec.id, spec.version, built, services)
            if spec.image_decides:  # an imported task: its verifier exists already
                verifier = tx.verifiers.get(spec.id)
                settled, settled_verifier = settle_workdir(spec, verifier, built.workdir)
                tx.environments.settle(settled)
                if settled_verifier is not verifier:  # the tests run from the workdir
                    tx.verifiers.add_version(settled_verifier)
        return t.BuiltEnv(env_id=spec.id, image=built.image, cached=built.cached)

    def _build_context(self, build: BuildContext) -> BuildResult:
        files = load_context(self.artifacts, build)
        return self.engine.build(context_tar(files), dockerfile=build.dockerfile)

    # -- agents -----------------------------------------------------------------------

    def run_agent(self, inp: t.AgentInput) -> t.TrajectoryRef:
        try:  # stored by an earlier attempt of this very activity
            done = self.store.trajectories.get(inp.trajectory_id)
            return t.TrajectoryRef(trajectory_id=done.id, claimed_solved=done.claimed_solved)
        except NotFound:
            pass
        spec = self._spec(inp.env_id)
        rt = self._rt(inp.kind, self._seed_of(spec))
        box = self.agents_engine.start(
            self._image(spec),
            limits=spec.limits,
            purpose=Purpose.of(inp.kind),
            services=spec.services,
        )
        try:
            if inp.kind == AgentRole.JUDGE:
                res = asyncio.run(run_judge(JudgeInput.from_spec(spec), rt=rt, sandbox=box))
            else:
                res = asyncio.run(run_red_team(RedTeamInput.from_spec(spec), rt=rt, sandbox=box))
        finally:
            box.remove()
        traj = get_model(self.artifacts, res.trajectory_key, Trajectory)
        self.store.trajectories.add(traj.model_copy(update={"id": inp.trajectory_id}))
        return t.TrajectoryRef(trajectory_id=inp.trajectory_id, claimed_solved=res.claimed_solved)

    def synthesize_verifier(self, inp: t.VerifierInput) -> t.VerifierRef:
        version = inp.round + 1
        if version in self.store.verifiers.versions(inp.env_id):
            return t.VerifierRef(env_id=inp.env_id, version=version)
        spec = self._spec(inp.env_id)
        writer_in = VerifierWriterInput.from_spec(spec)
        if inp.round > 0:
            previous = self.store.verifiers.get(inp.env_id)
            texts = [
                VerifierFileText(path=f.path, content=self.artifacts.get(f.key).decode())
                for f in previous.files
            ]
            findings = [self.store.findings.get(fid) for fid in inp.confirmed_finding_ids]
            writer_in = VerifierWriterInput.for_patch(spec, previous, texts, findings)
            if inp.gate_reasons:  # hard gate failures are evidence too (never the solution)
                writer_in = writer_in.model_copy(
                    update={
                        "success_criteria": (
                            writer_in.success_criteria
                            + "\n\nThe previous verifier failed its gates:\n- "
                            + "\n- ".join(inp.gate_reasons)
                        )
                    }
                )
        writer_in = writer_in.model_copy(update={"version": version})
        box = self.agents_engine.start(
            self._image(spec),
            limits=spec.limits,
            purpose=Purpose.VERIFIER_WRITER,
            services=spec.services,
        )
        try:
            rt = self._rt(AgentRole.VERIFIER, self._seed_of(spec))
            res = asyncio.run(run_verifier_writer(writer_in, rt=rt, sandbox=box))
        finally:
            box.remove()
        self.store.verifiers.add(res.verifier)
        return t.VerifierRef(env_id=inp.env_id, version=res.verifier.version)

    # -- gates, scoring, mining -------------------------------------------------------

    def _regressions(self, env_id: str) -> tuple[StateRef, ...]:
        confirmed = self.store.reviews.list(state=ReviewState.CONFIRMED, env_id=env_id)
        findings = (self.store.findings.get(item.finding_id) for item in confirmed)
        # a confirmed too-strict finding is a state the verifier should accept: never a
        # regression row (which expects 0)
        return tuple(
            f.state for f in findings if f.state is not None and Rule.names_shortcut(f.rule)
        )

    def run_gates(self, inp: t.GatesInput) -> t.GateOutcome:
        spec = self._spec(inp.env_id)
        verifier = self.store.verifiers.get(inp.env_id, inp.verifier_version)
        with self._gate_lock:
            report = self._gates(spec, verifier, inp.repeats)
        # the report names the spec it judged: an export takes it only for that spec
        report = report.model_copy(update={"spec_hash": gated_spec_hash(spec)})
        report_id = self.store.gate_reports.add(report)
        probes = tuple(
            c.name
            for c in report.checks
            if c.kind == CheckKind.PROBE and not c.passed and not c.not_applicable
        )
        return t.GateOutcome(
            report_id=str(report_id),
            verifier_version=verifier.version,
            passed=report.verdict == GateVerdict.PASSED,
            failures=report.failures,
            failed_probes=probes,
            verdict=report.outcome,
        )

    def _gates(self, spec: EnvironmentSpec, verifier: Verifier, repeats: int) -> GateReport:
        inp, notes = gate_input(
            self.engine,
            spec=spec,
            verifier=verifier,
            files=self.artifacts.get,
            image=self._image(spec),
            repeats=repeats,
            regressions=self._regressions(spec.id),
            concurrency=self.settings.sandbox.pool_size,
        )
        run = run_gates_detailed(inp)
        if notes:
            run.report = run.report.model_copy(update={"notes": (*run.report.notes, *notes)})
        return self._with_mutation_score(run, spec, verifier)

    def _with_mutation_score(
        self, run: GateRun, spec: EnvironmentSpec, verifier: Verifier
    ) -> GateReport:
        """The battery's mutation score on the states just gated (gates.mutation_max > 0 and
        the gates passed: a rejected verifier is not worth measuring)."""
        cfg = self.settings.gates
        if cfg.mutation_max <= 0 or run.report.verdict != GateVerdict.PASSED:
            return run.report
        score = mutation_score(
            run,
            engine=self.engine,
            spec=spec,
            verifier=verifier,
            files=self.artifacts.get,
            max_mutants=cfg.mutation_max,
            concurrency=self.settings.sandbox.pool_size,
        )
        return run.report.model_copy(update={"mutation": score})

    def score(self, inp: t.ScoreInput) -> t.ScoreOutcome:
        spec = self._spec(inp.env_id)
        verifier = self.store.verifiers.get(inp.env_id, inp.verifier_version)
        rewards: dict[str, int] = {}
        for tid in inp.trajectory_ids:
            traj = self.store.trajectories.get(tid)
            reward = 0
            if traj.final_state is not None:
                reward = verify_state(
                    self.engine,
                    state_image=traj.final_state.image,
                    pristine_image=self._image(spec),
                    spec=spec,
                    verifier=verifier,
                    files=self.artifacts.get,
                    state_diff=traj.diff or None,
                ).reward
            self.store.trajectories.set_reward(tid, reward)
            rewards[tid] = reward
        return t.ScoreOutcome(rewards=rewards, solve_rate=self._solve_rate(inp, rewards))

    def _solve_rate(self, inp: t.ScoreInput, rewards: dict[str, int]) -> SolveRate | None:
        """Measured against the band and written into the gate report (the pack's source)."""
        if inp.gate_report_id is None or inp.judges is None:
            return None  # a workflow from before solve-rate bands
        trajs = [self.store.trajectories.get(tid) for tid in rewards]
        solved = sum(1 for tr in trajs if tr.role == AgentRole.JUDGE and rewards[tr.id] == 1)
        rate = SolveRate.measure(inp.judges, solved, inp.band or SolveRateBand())
        self.store.gate_reports.set_solve_rate(int(inp.gate_report_id), rate)
        return rate

    def mine(self, inp: t.MineInput) -> t.MineOutcome:
        spec = self._spec(inp.env_id)
        trajectories = [self.store.trajectories.get(tid) for tid in inp.trajectory_ids]
        config = MiningConfig(
            env_id=spec.id,
            workspace_paths=spec.workspace_paths,
            reference_steps=len(spec.reference_solution),
        )
        report = self.store.gate_reports.get(int(inp.gate_report_id))
        judges = self.store.trajectories.list(env_id=spec.id, role=AgentRole.JUDGE)
        findings = [
            *findings_from_report(report),
            *mutation_findings(report, self.settings.gates.mutation_min_score),
            *mine(trajectories, config),
            *rejected_claims(judges, config),
        ]
        open_items = [i for i, state in self._queue(findings) if state == ReviewState.OPEN]
        return t.MineOutcome(
            finding_ids=tuple(f.id for f in findings), open_items=tuple(dict.fromkeys(open_items))
        )

    def _queue(self, findings: list[ShortcutFinding]) -> list[tuple[str, ReviewState]]:
        """Store each finding with its review item (once); (item id, its state) each."""
        out = []
        for finding in findings:
            item_id = "rev-" + finding.id.split("-", 1)[-1]
            with self.store.session() as tx:  # finding and its item together, or neither
                try:
                    tx.findings.get(finding.id)
                except NotFound:
                    tx.findings.add(finding)
                    tx.reviews.add(
                        ReviewItem(id=item_id, finding_id=finding.id, env_id=finding.env_id)
                    )
                out.append((item_id, tx.reviews.get(item_id).state))
        return out

    def analyze(self, inp: t.AnalyzeInput) -> t.AnalyzeOutcome:
        spec = self._spec(inp.env_id)
        seed = self._seed_of(spec)
        trajs = rewarded(self.store, inp.trajectory_ids)
        if not self.models.has_model(AgentRole.SHORTCUT_ANALYST, seed):
            return t.AnalyzeOutcome(skipped=tuple(tr.id for tr in trajs))
        analyst = Analyst(
            store=self.store,
            artifacts=self.artifacts,
            spec=spec,
            verifier=self.store.verifiers.get(inp.env_id, inp.verifier_version),
            runtime=lambda: self._rt(AgentRole.SHORTCUT_ANALYST, seed),
            attempts=self.settings.agents.analyst_attempts,
        )
        findings: list[ShortcutFinding] = []
        failures: list[str] = []
        for traj in trajs:
            done = analyst.analyse(traj)
            findings += done.findings
            failures += [done.failure] if done.failure else []
        queued = self._queue(findings)
        return t.AnalyzeOutcome(
            finding_ids=tuple(f.id for f in findings),
            open_items=tuple(dict.fromkeys(i for i, s in queued if s == ReviewState.OPEN)),
            failures=tuple(failures),
        )

    def flag_too_easy(self, inp: t.FlagInput) -> t.Flagged:
        finding = too_easy_finding(inp.env_id, inp.gate_report_id, inp.solve_rate)
        [(item_id, state)] = self._queue([finding])
        return t.Flagged(item_id=item_id, finding_id=finding.id, state=state)

    # -- decisions, status, publish ---------------------------------------------------

    def record_decision(self, inp: t.DecisionInput) -> t.DecisionRecorded:
        d = inp.decision
        try:
            # reached only by a decision sent straight to the workflow (API and CLI store first)
            item = self.store.reviews.decide(
                d.item_id, d.reviewer, d.decision, d.comment, auth=AuthMethod.WORKFLOW_UPDATE
            )
        except Conflict:
            item = self.store.reviews.get(d.item_id)
            if item.state != d.decision.state:  # decided the other way already: it stands
                raise
        return t.DecisionRecorded(item_id=item.id, finding_id=item.finding_id, state=item.state)

    def review_state(self, inp: t.ReviewStateInput) -> t.ReviewStateOutcome:
        items = [self.store.reviews.get(i) for i in inp.item_ids]
        done = [i for i in items if i.state != ReviewState.OPEN]
        return t.ReviewStateOutcome(
            decided=tuple(
                t.DecisionRecorded(item_id=i.id, finding_id=i.finding_id, state=i.state)
                for i in done
            ),
            reviewers=tuple(i.reviewer or "unknown" for i in done),
        )

    def set_status(self, inp: t.StatusInput) -> None:
        spec = self._spec(inp.env_id)
        self.store.environments.set_status(spec.id, spec.version, inp.status)

    def publish(self, inp: t.PublishInput) -> t.Published:
        spec = self._spec(inp.env_id)
        problems = self._guard(spec, inp)
        if problems:
            self.store.environments.set_status(spec.id, spec.version, EnvStatus.REJECTED)
            return t.Published(env_id=spec.id, published=False, reasons=tuple(problems))
        self.store.environments.set_status(spec.id, spec.version, EnvStatus.PUBLISHED)
        return t.Published(env_id=spec.id, published=True)

    def _guard(self, spec: EnvironmentSpec, inp: t.PublishInput) -> list[str]:
        """Check, then publish: every reason at once (SWE-bench's publish guard)."""
        problems = []
        report = self.store.gate_reports.get(int(inp.gate_report_id))
        if report.verifier_version != inp.verifier_version:
            problems.append(
                f"gate report {inp.gate_report_id} is for verifier "
                f"v{report.verifier_version}, not v{inp.verifier_version}"
            )
        problems += [f"gate: {r}" for r in report.reasons]
        problems += self._band_problems(spec, report, inp.gate_report_id)
        still_open = self.store.reviews.list(state=ReviewState.OPEN, env_id=spec.id)
        problems += [f"review item {i.id} is still open" for i in still_open]
        if not spec.image:
            problems.append("no built image")
        return problems

    def _band_problems(
        self, spec: EnvironmentSpec, report: GateReport, report_id: str
    ) -> list[str]:
        """Outside the band nothing is published, unless a reviewer overrode a too-easy flag."""
        solve = report.solve_rate
        if solve is None or solve.verdict == "in_band":
            return []
        if solve.verdict == "unproven":
            return [f"solve rate: {solve.text()}"]
        flag = too_easy_finding(spec.id, report_id, solve)
        items = [i for i in self.store.reviews.list(env_id=spec.id) if i.finding_id == flag.id]
        if any(i.state == ReviewState.DISMISSED for i in items):
            return []  # a reviewer overrode the band
        return [f"solve rate: {solve.text()}, and no reviewer overrode the flag"]


def build_services(
    settings: Settings,
    engine: SandboxEngine,
    models: ModelSource,
    agent_engine: SandboxEngine | None = None,
) -> StoreServices:
    """The worker edge: open the stores (migrating the embedded default)."""
    return StoreServices(
        settings=settings,
        store=Store.from_settings(settings),
        artifacts=ArtifactStore.from_settings(settings),
        engine=engine,
        models=models,
        agent_engine=agent_engine,
    )
