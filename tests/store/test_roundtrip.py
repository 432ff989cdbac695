"""Every stored domain model comes back from the database exactly as it went in, on SQLite
and PostgreSQL, with every nested model populated (no field left at a default)."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import BaseModel

import envfactory.core.models as models
from envfactory.core.errors import Conflict, InvalidInput, NotFound
from envfactory.core.models import (
    AgentRole,
    Attachment,
    BuildContext,
    BuildResult,
    CheckKind,
    Constraints,
    EnvironmentSpec,
    EnvStatus,
    EvalAttempt,
    EvalRun,
    Evidence,
    FailureCause,
    FileEntry,
    FinishRefusal,
    GateCheck,
    GateReport,
    Limits,
    Mutant,
    MutationScore,
    PackEnvironment,
    PackManifest,
    PackMember,
    PartialSolution,
    PathChange,
    Provenance,
    ProvenanceChain,
    ReviewItem,
    ReviewState,
    SeedHistory,
    ServiceSpec,
    ShortcutFinding,
    SkippedCheck,
    SolveRate,
    SolveRateBand,
    StateKind,
    StateRef,
    Step,
    StepCause,
    StepFailure,
    StopCause,
    TaskOrigin,
    TaskSeed,
    ToolCall,
    Trajectory,
    TrajectoryStep,
    Usage,
    Verifier,
)
from envfactory.store import Store

K1, K2, K3 = "1" * 64, "2" * 64, "3" * 64
# Microseconds and a non-UTC zone: both must survive the trip (UTC-normalised equality).
T0 = datetime(2026, 11, 29, 8, 30, 15, 123456, tzinfo=UTC)

#: Models that are never stored on their own or inside a stored model, and why.
NOT_STORED = {
    "ExecResult": "a transient sandbox exec result; gates keep rewards, not raw output",
    "GateFailure": "derived from a stored gate report's checks on every read, never stored",
    "PackSignature": "lives in a pack's signature file beside pack.json, never in the store",
    "EvalTotals": "derived from a stored eval run's attempts on every read, never stored",
    "LimitCaps": "an operator's setting (settings.sandbox.task_caps), applied at import, never stored",
    "TaskFileLimits": "an operator's setting (settings.sandbox.task_files), checked at import, never stored",
    **{
        name: "read from a stored row's columns for a list page (tests/store/test_pages.py)"
        for name in ("SeedSummary", "EnvSummary", "ReviewSummary", "PackSummary")
    },
}


def _state(kind: StateKind, label: str) -> StateRef:
    diff = (PathChange(path="/workspace/out.csv", kind="A"), PathChange(path="/tmp", kind="C"))
    return StateRef(
        image=f"sha256:{'e' * 64}", kind=kind, label=label, env_id="env-1", diff=diff, created_at=T0
    )


def samples() -> dict[str, BaseModel]:
    spec = EnvironmentSpec(
        id="env-1",
        version=1,
        name="etl-fix",
        seed_id="seed-abc",
        instruction="Fix the ETL job.",
        success_criteria="6 rows kept",
        hidden_state_notes="delimiter changed to ';'",
        build=BuildContext(
            dockerfile="docker/Dockerfile", files=(FileEntry(path="a.py", key=K1, mode=0o755),)
        ),
        workdir="/srv",
        workspace_paths=("/srv", "/data"),
        verify_scope="full-state",
        reference_solution=(Step(title="patch", script="sed -i s/,/;/ job.py"),),
        partial_solutions=(PartialSolution(name="half", steps=(Step(script="true"),)),),
        limits=Limits(cpus=0.5, memory_mb=512, pids=64, exec_timeout_s=30, network=True),
        services=(
            ServiceSpec(
                name="db",
                build=BuildContext(dockerfile="db.Dockerfile", files=()),
                command=("redis-server", "--save", ""),
                env={"A": "1"},
                ready="redis-cli ping",
                image="sha256:def",
            ),
        ),
        image="sha256:abc",
        source="manual",
        created_at=T0,
        semantics=("envfactory", "harbor"),
        origin=TaskOrigin(
            suite="tb2",
            path="suites/tb2/etl-fix",
            repository="https://example.org/tb.git",
            commit="c" * 40,
            files_key=K3,
        ),
    )
    return {
        "seed": TaskSeed(
            id="seed-abc",
            title="ETL drops rows",
            description='# Context\n\nUnicode ✓ — "quotes"',
            domain="data-engineering",
            attachments=(Attachment(path="data/x.csv", key=K1, size=10),),
            repository="https://example.org/r.git",
            history=SeedHistory(revisions=("v1..v2",), paths=("src/",), limit=5),
            constraints=Constraints(max_turns=7, time_budget_s=99, base_image="debian"),
            source="ticket 1",
            content_hash=K2,
            created_at=T0,
        ),
        "environment": spec,
        "verifier": Verifier(
            env_id="env-1",
            version=1,
            files=(FileEntry(path="test.sh", key=K2),),
            entry="bash test.sh",
            timeout_s=60,
            provenance=Provenance(
                author="agent:verifier/m", inputs_seen=("instruction",), prompt_version="v3"
            ),
            mount_path="/tests",
            reward_dir="/logs/verifier",
            created_at=T0,
        ),
        "gate_report": GateReport(
            env_id="env-1",
            verifier_version=1,
            repeats=2,
            notes=("one-block solution",),
            created_at=T0,
            checks=(
                GateCheck(
                    kind=CheckKind.ORACLE,
                    name="oracle",
                    state=_state(StateKind.ORACLE, "oracle"),
                    expected=1,
                    observed=(1, 1),
                    duration_s=1.25,
                    evidence=("ok",),
                    tamper=(PathChange(path="/usr/bin/python3", kind="C"),),
                ),
                GateCheck(
                    kind=CheckKind.NOOP,
                    name="no-op",
                    expected=0,
                    observed=(0, 1),
                    semantics="harbor",
                    derived_from="oracle",
                ),
            ),
            reference_failure=StepFailure(step=2, title="build", exit_code=2, output="make: *** "),
            unrunnable=("needs https://astral.sh",),
            provided=("uv 0.9.5",),
            skipped=(SkippedCheck(name="prefix-1", why="one-block solution"),),
            mutation=MutationScore(
                killed=1,
                survived=1,
                mutants=(
                    Mutant(
                        file="test.sh",
                        operator="early-exit",
                        line=3,
                        diff="+exit 0",
                        status="survived",
                    ),
                ),
            ),
            solve_rate=SolveRate.measure(4, 3, SolveRateBand(min=0.25, max=0.5)),
        ),
        "trajectory": Trajectory(
            id="traj-1",
            role=AgentRole.JUDGE,
            env_id="env-1",
            model="m-7b",
            steps=(
                TrajectoryStep(
                    index=0,
                    assistant_text="look",
                    prompt_tokens=10,
                    completion_tokens=3,
                    latency_s=0.5,
                    error="timeout",
                    meta={"k": [1, {"x": None}], "f": 0.1},
                    tool_calls=(ToolCall(id="c1", name="shell", arguments='{"cmd": "ls'),),
                    observations=("a.py\n",),
                    causes=(StepCause.RETRIED, StepCause.MALFORMED_ARGUMENTS),
                    refusal=FinishRefusal.BUILD_FAILED,
                ),
            ),
            stop_reason="budget",
            stop_cause=StopCause.STUCK,
            final_state=_state(StateKind.SOLVER, "judge-1"),
            diff=(PathChange(path="/x", kind="D"),),
            usage=Usage(prompt_tokens=10, completion_tokens=3, turns=1, wall_s=2.5),
            claimed_solved=True,
            summary="done",
            reward=1,
            created_at=T0,
        ),
        "finding": ShortcutFinding(
            id="find-1",
            env_id="env-1",
            source="trajectory",
            rule="writes-reward-file",
            evidence=Evidence(
                summary="wrote reward",
                diff=(PathChange(path="/logs/r", kind="A"),),
                commands=("echo 1 > /logs/r",),
                trajectory_id="traj-1",
                step_indexes=(0, 2),
                verifier_output="PASS",
            ),
            state=_state(StateKind.PROBE, "probe:reward-file"),
            created_at=T0,
            found_by="model",
            rationale="wrote the reward file instead of fixing the job",
            weakness="the verifier trusts /logs/r",
        ),
        "review": ReviewItem(
            id="rev-1",
            finding_id="find-1",
            env_id="env-1",
            state=ReviewState.OPEN,
            comment="",
            created_at=T0 + timedelta(seconds=1),
        ),
        "agent_eval": EvalRun(
            id="eval-1",
            role=AgentRole.RESEARCH,
            model="m-7b",
            base_url="http://127.0.0.1:30000/v1",
            k=2,
            source="examples/seeds",
            created_at=T0,
            attempts=(
                EvalAttempt(target="etl", index=0, success=True, turns=5, tool_calls=7, wall_s=1.5),
                EvalAttempt(
                    target="etl",
                    index=1,
                    success=False,
                    cause=FailureCause.REFERENCE_FAILED,
                    detail="reference_failed (stuck): step 1 failed",
                    prompt_tokens=100,
                    completion_tokens=20,
                    trajectory_key=K1,
                ),
            ),
        ),
        "pack": PackManifest(
            id="pack-1",
            created_by="human:ana",
            created_at=T0,
            environments=(
                PackEnvironment(
                    env_id="env-1",
                    name="etl-fix",
                    image_format="build-context",
                    provenance=ProvenanceChain(
                        seed_id="seed-abc",
                        env_id="env-1",
                        env_version=1,
                        verifier_version=1,
                        gate_report_created_at=T0,
                    ),
                ),
            ),
            members=(
                PackMember(path="env-1/instruction.md", sha256=K3, size=42, visibility="solver"),
            ),
        ),
        "build": BuildResult(
            image="sha256:abc",
            tag="envfactory/env-1:1",
            context_hash=K1,
            log_key=K2,
            cached=True,
            substitutions=("python:3.12-slim -> base",),
            duration_s=3.5,
        ),
    }


def _store_all(store: Store, s: dict[str, BaseModel]) -> None:
    with store.session() as tx:
        tx.seeds.add(s["seed"])
        tx.environments.add(s["environment"], EnvStatus.BUILT)
        tx.verifiers.add(s["verifier"])
        tx.gate_reports.add(s["gate_report"])
        tx.trajectories.add(s["trajectory"])
        tx.findings.add(s["finding"])
        tx.reviews.add(s["review"])
        tx.packs.add(s["pack"], archive_key=K3)
        tx.agent_evals.add(s["agent_eval"])
        tx.environments.set_build("env-1", 1, s["build"])


def test_every_stored_model_round_trips_exactly(store: Store) -> None:
    s = samples()
    _store_all(store, s)
    assert store.seeds.get("seed-abc") == s["seed"]
    assert store.environments.get("env-1", 1) == s["environment"]
    assert store.verifiers.get("env-1") == s["verifier"]
    assert store.gate_reports.list("env-1") == [s["gate_report"]]
    assert store.trajectories.get("traj-1") == s["trajectory"]
    assert store.findings.get("find-1") == s["finding"]
    assert store.reviews.get("rev-1") == s["review"]
    assert store.packs.get("pack-1") == s["pack"]
    assert store.packs.archive_key("pack-1") == K3
    assert store.agent_evals.get("eval-1") == s["agent_eval"]
    record = store.environments.record("env-1")
    assert (record.build, record.status) == (s["build"], EnvStatus.BUILT)


def test_environments_are_listed_by_the_suite_of_their_origin(store: Store) -> None:
    s = samples()
    _store_all(store, s)
    other = s["environment"].model_copy(update={"id": "env-2", "origin": None})
    store.environments.add(other, EnvStatus.IMPORTED)
    assert [r.spec.id for r in store.environments.list(suite="tb2")] == ["env-1"]
    assert store.environments.list(suite="nope") == []
    assert [r.spec.id for r in store.environments.list()] == ["env-1", "env-2"]


def test_round_tripped_datetimes_are_aware_utc(store: Store) -> None:
    s = samples()
    _store_all(store, s)
    item = store.reviews.get("rev-1")
    assert item.created_at == T0 + timedelta(seconds=1) and item.created_at.tzinfo is not None
    assert store.gate_reports.list("env-1")[0].verdict == s["gate_report"].verdict  # type: ignore[attr-defined]


def _model_types(value: object, seen: set[str]) -> None:
    if isinstance(value, BaseModel):
        seen.add(type(value).__name__)
        for name in type(value).model_fields:
            _model_types(getattr(value, name), seen)
    elif isinstance(value, tuple | list):
        for v in value:
            _model_types(v, seen)
    elif isinstance(value, dict):
        for v in value.values():
            _model_types(v, seen)


def test_the_round_trip_covers_every_core_model() -> None:
    """A new model in envfactory.core.models must be stored somewhere (or listed as not)."""
    exported = {
        name
        for name, obj in inspect.getmembers(models, inspect.isclass)
        if issubclass(obj, models.Model) and obj is not models.Model
    }
    covered: set[str] = set()
    for value in samples().values():
        _model_types(value, covered)
    # audit: test_reviews; reviewers (plain columns, no doc): test_reviewers
    missing = exported - covered - NOT_STORED.keys() - {"ReviewAudit", "Reviewer"}
    assert not missing, f"add these to samples() or NOT_STORED with a reason: {sorted(missing)}"


def test_inserting_an_existing_id_conflicts_and_the_transaction_survives(store: Store) -> None:
    s = samples()
    with store.session() as tx:
        tx.seeds.add(s["seed"])
        with pytest.raises(Conflict):
            tx.seeds.add(s["seed"])
        tx.findings.add(s["finding"])  # still usable after the failed insert (savepoint)
    assert store.seeds.count() == 1
    assert store.findings.get("find-1") == s["finding"]


def test_a_failed_session_stores_nothing(store: Store) -> None:
    s = samples()
    with pytest.raises(RuntimeError):
        with store.session() as tx:
            tx.seeds.add(s["seed"])
            raise RuntimeError("crash mid-transaction")
    assert store.seeds.count() == 0


@pytest.mark.parametrize(
    "call",
    [
        lambda st: st.seeds.get("nope"),
        lambda st: st.environments.get("nope"),
        lambda st: st.verifiers.get("nope", 3),
        lambda st: st.trajectories.get("nope"),
        lambda st: st.findings.get("nope"),
        lambda st: st.reviews.get("nope"),
        lambda st: st.packs.get("nope"),
        lambda st: st.gate_reports.get(12345),
    ],
)
def test_missing_ids_raise_not_found(store: Store, call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NotFound):
        call(store)


def test_environment_versions_status_and_build(store: Store) -> None:
    spec = samples()["environment"]
    assert isinstance(spec, EnvironmentSpec)
    v1 = store.environments.add_version(spec)
    v2 = store.environments.add_version(spec.model_copy(update={"instruction": "Second try."}))
    assert (v1.version, v2.version) == (1, 2)
    assert store.environments.versions("env-1") == [1, 2]
    assert store.environments.get("env-1").instruction == "Second try."
    assert store.environments.get("env-1", 1).instruction == "Fix the ETL job."
    store.environments.set_status("env-1", 2, EnvStatus.BUILT, expect=EnvStatus.DRAFT)
    with pytest.raises(Conflict, match="is built, expected"):
        store.environments.set_status("env-1", 2, EnvStatus.GATED, expect=EnvStatus.DRAFT)
    latest = store.environments.list()
    assert [(r.spec.version, r.status) for r in latest] == [(2, EnvStatus.BUILT)]
    assert len(store.environments.list(latest_only=False)) == 2
    assert store.environments.list(status=EnvStatus.DRAFT) == []


def test_verifier_versions_and_trajectory_reward(store: Store) -> None:
    s = samples()
    ver = s["verifier"]
    assert isinstance(ver, Verifier)
    assert store.verifiers.add_version(ver).version == 1
    assert store.verifiers.add_version(ver.model_copy(update={"entry": "pytest"})).version == 2
    assert store.verifiers.get("env-1").entry == "pytest"
    assert store.verifiers.get("env-1", 1).entry == "bash test.sh"
    store.trajectories.add(s["trajectory"])  # type: ignore[arg-type]
    assert store.trajectories.set_reward("traj-1", 0).reward == 0
    assert store.trajectories.get("traj-1").reward == 0
    assert [t.id for t in store.trajectories.list(env_id="env-1", role="judge")] == ["traj-1"]


def test_a_review_item_needs_its_finding(store: Store) -> None:
    with pytest.raises(NotFound, match="refers to a row that is not stored"):
        store.reviews.add(samples()["review"])  # type: ignore[arg-type]


def test_a_build_records_the_images_of_the_environments_services(store: Store) -> None:
    s = samples()
    _store_all(store, s)
    with store.session() as tx:
        tx.environments.set_build("env-1", 1, s["build"], ["sha256:svc-db"])
    spec = store.environments.get("env-1", 1)
    assert [svc.image for svc in spec.services] == ["sha256:svc-db"]
    assert spec.services[0].ready == "redis-cli ping"  # the rest of the service kept


def test_text_with_a_nul_byte_is_bad_input_on_both_databases_and_stores_nothing(
    store: Store,
) -> None:
    # PostgreSQL cannot hold a NUL in text (the API answered such a query with a 503);
    # SQLite would have stored it: both refuse it as the user's input, before the database
    s = samples()
    with pytest.raises(InvalidInput, match="NUL"):
        store.environments.list(suite="tb2\x00")
    with pytest.raises(InvalidInput, match="NUL"):
        store.seeds.add(s["seed"].model_copy(update={"title": "Recover\x00 the orders"}))
    assert store.seeds.count() == 0
    _store_all(store, s)  # the store stays usable
    assert [r.spec.id for r in store.environments.list(suite="tb2")] == ["env-1"]
