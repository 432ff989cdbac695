"""Verifiers and the gate reports that decide whether their reward can be trusted."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field, computed_field

from .base import Model, NonEmpty, utcnow
from .environments import FileEntry, Semantics
from .rows import RowId
from .sandbox import PathChange, StateRef
from .solve_rate import SolveRate

#: a binary reward, and what a check expects of one
Reward = Literal[0, 1]
#: what the gates made of a weakened verifier
MutantStatus = Literal["killed", "survived", "equivalent-suspected"]


class Provenance(Model):
    """Who wrote a verifier and exactly which inputs they saw (artifact keys or field names)."""

    author: NonEmpty  # "agent:verifier/<model>", "import:harbor", "human:<name>"
    inputs_seen: tuple[str, ...] = ()
    prompt_version: str | None = None


class Verifier(Model):
    """Files plus an entry command. Reward = 1 iff the entry command exits 0."""

    env_id: str
    version: int = Field(default=1, ge=1)
    files: tuple[FileEntry, ...]
    entry: NonEmpty  # shell command, run from the verifier directory
    timeout_s: int = Field(default=120, ge=1)
    provenance: Provenance
    #: where the files go at verification time (Harbor: "/tests"); None: a fresh random
    #: directory under /run/envfactory-verifier-. Either way they arrive only then.
    mount_path: str | None = None
    #: Harbor's reward contract: the runner creates this directory empty just before the
    #: entry starts and takes the reward from reward.txt / reward.json written during the
    #: run. None: the entry's exit status is the reward.
    reward_dir: str | None = None
    #: the directory the entry runs from (Harbor and Terminal-Bench run their tests from
    #: the task's WORKDIR); None: the verifier's own directory
    cwd: str | None = None
    created_at: datetime = Field(default_factory=utcnow)


class CheckKind(StrEnum):
    ORACLE = "oracle"
    NOOP = "no-op"
    UNSOLVED = "unsolved"
    PROBE = "probe"
    JUDGE = "judge"
    REGRESSION = "regression"
    FLAKINESS = "flakiness"
    #: a correct solver's other final state (the oracle's results re-serialised, a
    #: repository garbage-collected…): expected 1; a 0 is a warning ("too strict"), for a
    #: reviewer to decide, never a rejection (exact bytes may be what the task requires)
    ALTERNATIVE = "alternative"
    #: a change of the oracle's results that the instruction does not rule out by its own
    #: words (records reordered where no order is asked for, one record duplicated where
    #: uniqueness is not asked for): expected 0; a 1 is a *tolerance* shown beside the
    #: too-strict warnings, never a rejection
    TOLERANCE = "tolerance"


class GateVerdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"


class TaskVerdict(StrEnum):
    """Whose fault a gate result is (what a suite's user needs to know first)."""

    PASSED = "passed"  # the reward can be trusted
    REJECTED = "rejected"  # the verifier is weak (or wrong): the failing rows say how
    REFERENCE_FAILED = "reference-failed"  # the task's own solution did not run through
    VERIFIER_UNRUNNABLE = "verifier-unrunnable"  # it needs something we cannot provide


class StepFailure(Model):
    """A reference-solution step that failed while producing the oracle state; with
    `command`, a command inside a step that itself ran through (`verifiers.step_errors`)."""

    step: int  # 1-based
    title: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    output: str = ""  # tail of stderr/stdout
    command: str = ""  # the failing command, where the step went on past it


class SkippedCheck(Model):
    name: str
    why: str


class Mutant(Model):
    """One automatically weakened verifier and what the gates said of it."""

    file: str
    operator: str  # "drop-assert", "compare-true", "early-exit", ...
    line: int | None = None
    diff: str
    status: MutantStatus
    killed_by: str | None = None  # the first check that rejected it


class MutationScore(Model):
    killed: int = 0
    survived: int = 0
    equivalent: int = 0
    mutants: tuple[Mutant, ...] = ()
    #: what the run cost: mutants generated before the cap, verifications run, wall time
    candidates: int = 0
    verifications: int = 0
    wall_s: float = 0.0

    @property
    def score(self) -> float | None:
        """Killed over non-equivalent mutants; None when there were none."""
        n = self.killed + self.survived
        return None if n == 0 else self.killed / n


class GateCheck(Model):
    kind: CheckKind
    name: str  # "oracle", "prefix-1", "probe:reward-file", ...
    state: StateRef | None = None
    expected: Reward
    observed: tuple[int, ...]  # one reward per repeat
    duration_s: float = 0.0
    evidence: tuple[str, ...] = ()
    tamper: tuple[PathChange, ...] = ()
    semantics: Semantics = "envfactory"
    #: set on a row whose failure follows from another's (a probe on a partial state the
    #: verifier already accepts): that row's name. Reasons fold it under its cause.
    derived_from: str | None = None
    #: set on a probe row the verifier's traced run shows it cannot judge (it never read
    #: what the probe changed, or overwrote it first): why. Listed, never a rejection.
    not_applicable: str | None = None
    #: set on a probe row whose state the verifier's traced run never read where that is
    #: itself the weakness (a program the task asks for, never run): the sentence saying
    #: so. The row's failure is a reason, and the reason carries the sentence.
    finding: str | None = None
    #: set on a probe row whose attack uses what a solver does not have (the verifier's
    #: own file names, read from its trace): what that is (`Probe.privileged`)
    privileged: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        return bool(self.observed) and all(r == self.expected for r in self.observed)

    @property
    def flaky(self) -> bool:
        return len(set(self.observed)) > 1

    @property
    def row(self) -> RowId:
        """The row's identity, read back from its stored name."""
        return RowId.parse(self.name)


class FailureKind(StrEnum):
    """What kind of thing failed a gate report (`GateFailure.kind`)."""

    CHECK = "check"  # a gate row failed: `check_kind` and `check` name it
    REFERENCE_FAILED = "reference-failed"  # the reference solution did not run through
    UNRUNNABLE = "verifier-unrunnable"  # the verifier needs something we cannot provide
    MISSING_CHECK = "missing-check"  # a check every report needs was never run


class GateFailure(Model):
    """One reason a gate report failed, as data. Code decides on `kind` and `check_kind`
    (a shortcut probe goes to review, anything else is the verifier's to fix); `reason`
    is the same failure as a sentence for a human, written once, here."""

    kind: FailureKind
    check_kind: CheckKind | None = None  # the failing row's kind, or the missing check's
    check: str | None = None  # the failing row's name ("oracle", "prefix-1", "reward-file@no-op")
    semantics: Semantics = "envfactory"
    flaky: bool = False
    derived_rows: int = 0  # probe rows whose failure follows from this one's
    #: the failing row's attack used what a solver does not have (`GateCheck.privileged`)
    privileged: str | None = None
    reason: str

    @classmethod
    def from_reason(cls, reason: str) -> GateFailure:
        """Read back a line of `GateReport.reasons`: only for payloads that carry nothing
        else (workflow histories recorded before failures were typed). The line format is
        written in this module, so its reading stays next to it."""
        head = reason.partition(": ")[0]
        word, _, rest = head.partition(" ")
        if word in _CHECK_KINDS:
            name, _, where = rest.partition(" [")
            sem: Semantics = "harbor" if where == "harbor]" else "envfactory"
            _, marked, privileged = reason.partition(_PRIVILEGED)
            return cls(
                kind=FailureKind.CHECK,
                check_kind=_CHECK_KINDS[word],
                check=name,
                semantics=sem,
                flaky=": flaky, " in reason,
                privileged=privileged.removesuffix(")") if marked else None,
                reason=reason,
            )
        missing = reason.removeprefix("no ").removesuffix(" check was run")
        if missing in _CHECK_KINDS and missing != reason:
            return cls(
                kind=FailureKind.MISSING_CHECK, check_kind=_CHECK_KINDS[missing], reason=reason
            )
        if head == "verifier unrunnable":
            return cls(kind=FailureKind.UNRUNNABLE, reason=reason)
        if head.startswith("reference solution failed"):
            return cls(kind=FailureKind.REFERENCE_FAILED, reason=reason)
        raise ValueError(f"not a line of GateReport.reasons: {reason!r}")


_CHECK_KINDS = {k.value: k for k in CheckKind}
_PRIVILEGED = " (privileged: uses "


class GateReport(Model):
    env_id: str
    verifier_version: int
    checks: tuple[GateCheck, ...]
    repeats: int = 3
    notes: tuple[str, ...] = ()  # e.g. "one-block solution: no prefix states"
    created_at: datetime = Field(default_factory=utcnow)
    reference_failure: StepFailure | None = None
    #: what the verifier needs that could not be provided ("python3.13", "network: astral.sh")
    unrunnable: tuple[str, ...] = ()
    #: what the verification layer provided offline ("uv 0.9.5", "pytest==8.4.1")
    provided: tuple[str, ...] = ()
    skipped: tuple[SkippedCheck, ...] = ()
    mutation: MutationScore | None = None
    #: the semantics this report gated under, the reward's own runtime first
    semantics: tuple[Semantics, ...] = ("envfactory",)
    #: the judges' solve rate under this verifier and the band it was held against
    #: (filled in by scoring, after the gates; outside the band the task is not published)
    solve_rate: SolveRate | None = None
    #: `gated_spec_hash` of the spec these gates ran on, written by the install that ran
    #: them; None on a report that came in a pack (its gates ran elsewhere, on a spec we
    #: cannot see): `pack export --all-published` takes only a report of its own spec
    spec_hash: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> TaskVerdict:
        if self.reference_failure is not None:
            return TaskVerdict.REFERENCE_FAILED
        if self.unrunnable:
            return TaskVerdict.VERIFIER_UNRUNNABLE
        return TaskVerdict.PASSED if not self.reasons else TaskVerdict.REJECTED

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict(self) -> GateVerdict:
        return GateVerdict.PASSED if not self.reasons else GateVerdict.FAILED

    @property
    def too_strict(self) -> tuple[str, ...]:
        """Warnings, not reasons: each correct alternative state the verifier gave 0 (a
        reviewer decides whether the task requires those exact bytes)."""
        return tuple(
            f"too strict: rejects {c.evidence[0].partition(': ')[2] if c.evidence else c.name} "
            f"({c.name}: rewards {list(c.observed)})"
            for c in self.checks
            if c.kind == CheckKind.ALTERNATIVE and c.observed and not c.passed
        )

    @property
    def tolerances(self) -> tuple[str, ...]:
        """Warnings, not reasons: each change the instruction does not rule out (records
        reordered, one duplicated) that the verifier rewarded 1."""
        return tuple(
            f"tolerates {c.evidence[0].partition(': ')[2] if c.evidence else c.name} "
            f"({c.name}: rewards {list(c.observed)})"
            for c in self.checks
            if c.kind == CheckKind.TOLERANCE and c.observed and not c.passed
        )

    @property
    def not_applicable(self) -> tuple[str, ...]:
        """Probe rows the trace shows the verifier could not judge, each with why."""
        return tuple(f"{c.name}: {c.not_applicable}" for c in self.checks if c.not_applicable)

    @property
    def failures(self) -> tuple[GateFailure, ...]:
        """One failure per failing root cause under the task's first semantics (the runtime
        its reward is for); rows derived from a cause are counted on its failure."""
        primary = self.semantics[0] if self.semantics else "envfactory"
        out = _row_failures(self.checks, primary)
        if self.reference_failure is not None:
            out.insert(0, _reference_failure(self.reference_failure))
        out += [
            GateFailure(kind=FailureKind.UNRUNNABLE, reason=f"verifier unrunnable: {what}")
            for what in self.unrunnable
        ]
        for kind in (CheckKind.ORACLE, CheckKind.NOOP):
            if not out and not any(c.kind == kind for c in self.checks):
                out.append(
                    GateFailure(
                        kind=FailureKind.MISSING_CHECK,
                        check_kind=kind,
                        reason=f"no {kind.value} check was run",
                    )
                )
        return tuple(out)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def reasons(self) -> tuple[str, ...]:
        """`failures` as one line each, for a human (decide on `failures`, never on these)."""
        return tuple(f.reason for f in self.failures)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def privileged_only(self) -> bool:
        """Every reason is a failing row whose attack used what a solver does not have:
        the rejection shows what a solver who knew the tests could do, not what any
        solver can (a reviewer weighs it so; the verdict stays a rejection)."""
        failures = self.failures
        return bool(failures) and all(f.privileged for f in failures)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def other_runtime_reasons(self) -> tuple[str, ...]:
        """Failing rows under the task's other semantics (e.g. a verifier safe in
        envfactory's runtime but not in Harbor's): they block an export to that format."""
        return tuple(
            f.reason for sem in self.semantics[1:] for f in _row_failures(self.checks, sem)
        )

    def safe_under(self, semantics: Semantics) -> bool:
        """Gated under `semantics` and nothing failed there (export guards ask this)."""
        if semantics not in self.semantics or self.outcome != TaskVerdict.PASSED:
            return False
        return semantics == self.semantics[0] or not _row_failures(self.checks, semantics)


def _row_failures(checks: tuple[GateCheck, ...], semantics: Semantics) -> list[GateFailure]:
    rows = [c for c in checks if c.semantics == semantics]
    derived: dict[str, int] = {}
    for c in rows:
        if not c.passed and c.derived_from:
            derived[c.derived_from] = derived.get(c.derived_from, 0) + 1
    failing = [c for c in rows if not c.passed and counts(c)]
    return [_row_failure(c, derived.get(c.name, 0)) for c in failing]


#: rows whose failure is a warning for a reviewer, never a reason
WARNING_KINDS = (CheckKind.ALTERNATIVE, CheckKind.TOLERANCE)


def counts(check: GateCheck) -> bool:
    """Whether a failure of `check` is a reason of its own: not a warning's kind, not
    derived from another row's failure, not a row the trace shows could not judge."""
    return not check.derived_from and not check.not_applicable and check.kind not in WARNING_KINDS


def _row_failure(check: GateCheck, derived_rows: int) -> GateFailure:
    where = "" if check.semantics == "envfactory" else f" [{check.semantics}]"
    if check.flaky:
        what = f"flaky, rewards {list(check.observed)}"
    else:
        what = f"expected {check.expected}, got {list(check.observed)}"
    reason = f"{check.kind.value} {check.name}{where}: {what}"
    if check.finding:
        reason += f": {check.finding}"
    if derived_rows:
        reason += f" (and {derived_rows} probe rows on it)"
    if check.privileged:
        reason += f"{_PRIVILEGED}{check.privileged})"
    return GateFailure(
        kind=FailureKind.CHECK,
        check_kind=check.kind,
        check=check.name,
        semantics=check.semantics,
        flaky=check.flaky,
        derived_rows=derived_rows,
        privileged=check.privileged,
        reason=reason,
    )


def _reference_failure(f: StepFailure) -> GateFailure:
    title = f" ({f.title})" if f.title else ""
    return GateFailure(
        kind=FailureKind.REFERENCE_FAILED,
        reason=f"reference solution failed at step {f.step}{title}: "
        + (f"`{f.command}` exited {f.exit_code}" if f.command else f"exit {f.exit_code}"),
    )
