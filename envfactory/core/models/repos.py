"""Environments mined from a repository's history: the values that cross a process.

`RepoSnapshot` is one clone stored in the artifact store (a git bundle of every ref,
named by the commit its HEAD points at); `CandidateInput` asks to mine one commit of it
and `CandidateResult` is what came of that commit: an environment stored for the gates,
or dropped with the reason. Outcomes and stages are closed vocabularies (`Literal`s).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import ArtifactKey, Model

#: what became of one commit scanned
#: (held: stored, not gated, for a reviewer: the tests require names the instruction
#: does not give, and the repository settings hold such candidates)
CandidateOutcome = Literal["published", "dropped", "rejected", "stored", "held"]
#: how far a commit got (the yield table counts each stage reached)
CandidateStage = Literal["scanned", "candidate", "buildable", "fail_to_pass", "gated", "published"]
#: why a commit did not become a published environment (the yield table counts these)
DropKind = Literal[
    "root_commit",
    "no_test_change",
    "only_test_change",
    "no_test_runner",
    "diff_not_text",
    "unbuildable",
    "invalid_task",
    "fix_does_not_apply",
    "tests_did_not_report",
    "reverts_visible_commit",
    "collection_error",
    "fails_at_commit",
    "no_fail_to_pass",
    "underspecified",
    "gates_failed",
    "publish_refused",
    "error",
]
#: who wrote an instruction
InstructionSource = Literal["template", "model"]


class RepoSnapshot(Model):
    """A repository cloned once into the artifact store (`bundle_key`: `git bundle --all`)."""

    source: str  # the URL or path as given
    head: str  # the commit HEAD pointed at when cloned
    bundle_key: ArtifactKey
    size_bytes: int


class CandidateInput(Model):
    """Mine one commit of a stored clone into an environment (one activity's input)."""

    snapshot: RepoSnapshot
    commit: str
    #: at most this many pass-to-pass tests are kept (a deterministic sample)
    pass_to_pass_max: int = Field(default=10, ge=0)
    #: patches of up to this many hunks get every hunk-alone and without-hunk state;
    #: beyond it, this many of each (a sample seeded by the commit)
    hunk_max: int = Field(default=6, ge=0)
    suite: str = "repo"
    test_timeout_s: int = Field(default=300, gt=0)
    #: a candidate whose fail-to-pass tests require names its instruction does not give
    #: is held for review (True) or gated and published like any other (False)
    hold_underspecified: bool = True


class TestCounts(Model):
    """The touched tests' outcomes on one side (parent or commit): `errors` are files
    that did not collect; `not_collected` are tests the other side ran that this side
    never reached."""

    __test__ = False  # not a pytest class

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0
    not_collected: int = 0

    def __str__(self) -> str:
        parts = [f"{self.passed} passed", f"{self.failed} failed"]
        parts += [f"{self.skipped} skipped"] if self.skipped else []
        parts += [f"{self.errors} files did not collect"] if self.errors else []
        parts += [f"{self.not_collected} not collected"] if self.not_collected else []
        return ", ".join(parts)


class HunkRef(Model):
    """One hunk of the reference patch: its 1-based number in the file and overall."""

    number: int  # overall, 1-based
    file: str
    index_in_file: int  # 1-based


class PartialState(Model):
    """A partial solution made of some of the fix's hunks (`hunks`: overall numbers)."""

    name: str
    hunks: tuple[int, ...]
    missing: tuple[int, ...]


class CandidateResult(Model):
    """What came of one commit. `stage` is the furthest stage reached; `reason` says why
    it stopped there (empty when it was published)."""

    commit: str
    subject: str = ""
    outcome: CandidateOutcome
    stage: CandidateStage
    reason: str = ""
    reason_kind: DropKind | None = None
    runner: str | None = None
    env_id: str | None = None
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    hunks: tuple[HunkRef, ...] = ()
    partials: tuple[PartialState, ...] = ()
    #: "the tests do not exercise hunk N of file F", one per hunk a rewarded partial lacks
    findings: tuple[str, ...] = ()
    instruction_source: InstructionSource = "template"
    #: the touched tests' counts at the parent and at the commit (None: they never ran)
    parent_counts: TestCounts | None = None
    commit_counts: TestCounts | None = None
    #: the toolchain the image was built with ("3.11") and why it was chosen
    toolchain: str | None = None
    toolchain_why: str = ""
    #: what the image installed, each with where the project declares it
    installed: tuple[str, ...] = ()
    #: names the fail-to-pass tests require that the instruction does not give
    unsaid_names: tuple[str, ...] = ()
    #: tokens a model spent writing the instruction (0 for a template's)
    tokens: int = 0
    cpu_s: float = 0.0


class YieldTable(Model):
    """A mining run's yield: commits that reached each stage, each drop's reason, and the
    seconds per published environment (CPU of the mining process and its git commands;
    the containers' own CPU is not in it; and wall clock)."""

    scanned: int
    #: stage → commits that reached it (scanned, candidate, buildable, …, published)
    reached: dict[str, int]
    #: reason kind (`DropKind`) → commits dropped or rejected for it
    reasons: dict[str, int] = Field(default_factory=dict)
    published: int
    cpu_s: float
    cpu_s_per_published: float | None
    wall_s: float = 0.0
    wall_s_per_published: float | None = None
    #: tokens models spent on instructions, and the instructions each source wrote
    tokens: int = 0
    tokens_per_published: float | None = None
    instructions: dict[str, int] = Field(default_factory=dict)
