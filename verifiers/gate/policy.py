"""The gate's rules: how often a row runs, when a verdict is settled early, why a row is
skipped. Pure: plain values in, decisions out; the scheduler holds the lock.

Repeats (`RepeatPolicy`): the oracle, the no-op and every state no probe will run on
(omission and regression states; unsolved states when the battery has no probes) run R
times: a verifier that checks some things only in some runs (random spot checks, the
clock, set order, load) shows it on them. An unsolved state that probes will run on runs
once: each of its probe rows is the same state plus a change, so the verifier is asked
about it again a dozen times, and a run that lets part of the work go unchecked shows
there as an unexpected 1 (benchmarks/flaky_detection.py measures that detection does not
drop). Probe rows, the many, run once. Any row runs R times when its first result is
unexpected, and once the verifier has disagreed with itself anywhere every row is brought
up to R. Secondary (harbor) rows run once.

Early verdicts (`OracleGate`, `EarlyVerdicts`): the oracle settles first; an oracle the
verifier rejects (or a reference step that fails) skips every row that needs a working
oracle. A secondary runtime settles early too: once one of its rows fails, that runtime is
refused (its export), and once a primary row fails the verdict is a rejection under every
runtime; either way the secondary rows not started yet cannot change a verdict and are
skipped. Primary rows always all run: each failing one is a finding for review.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from envfactory.core.models import WARNING_KINDS, CheckKind, Reward
from envfactory.core.models.rows import RowId

#: the key under which a primary failure refuses every runtime
EVERY_RUNTIME = "*"


class Repeated(Protocol):
    """What the repeat policy reads and sets on a row."""

    @property
    def secondary(self) -> bool: ...
    @property
    def expected(self) -> Reward: ...

    repeats: int


@dataclass
class RepeatPolicy:
    """How many runs each row gets: R (`repeats`) where runs tell something, once where
    the state is asked about again by other rows; everything R once the verifier
    disagrees with itself (`disagreed`)."""

    repeats: int
    adaptive: bool = True
    disagreed: bool = False

    def first(self, kind: CheckKind, *, secondary: bool, resampled: bool = False) -> int:
        """How often a new row runs at first (`resampled`: an unsolved state its probe
        rows will ask about again)."""
        if secondary:
            return 1
        if self.disagreed or not self.adaptive:  # R times from the start
            return self.repeats
        if kind in (CheckKind.PROBE, *WARNING_KINDS) or resampled:
            return 1
        return self.repeats

    def escalate(
        self, row: Repeated, rewards: Sequence[int], owners: Iterable[Repeated]
    ) -> list[tuple[Repeated, int]]:
        """The rows to run more now that `row` has all its planned `rewards`, each with
        how many more runs: `row` itself when its result was unexpected; every row that
        owns a verification and was planned fewer times (`owners`) once the verifier
        disagrees with itself. Sets each one's `repeats` to R."""
        full = self.repeats
        if row.secondary or full <= 1:
            return []
        if len(set(rewards)) > 1 and not self.disagreed:
            self.disagreed = True
            again = [c for c in owners if not c.secondary and c.repeats < full]
        elif row.repeats < full and (rewards[0] != row.expected or self.disagreed):
            again = [row]
        else:
            return []
        out = [(c, full - c.repeats) for c in again]
        for c in again:
            c.repeats = full
        return out


@dataclass
class OracleGate:
    """The oracle settles first: `ok` is None until its verdict; the bases whose probes
    wait for it are kept until then."""

    ok: bool | None = None
    waiting: list[object] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.ok is False

    def wait_for(self, base: object) -> bool | None:
        """The verdict so far; a base queued before it is kept for `settle`."""
        if self.ok is None:
            self.waiting.append(base)
        return self.ok

    def settle(self, ok: bool) -> list[object] | None:
        """Record the verdict; the waiting bases, or None when it was settled already."""
        if self.ok is not None:
            return None
        self.ok = ok
        waiting, self.waiting = self.waiting, []
        return waiting


@dataclass
class EarlyVerdicts:
    """Which secondary runtimes can no longer change a verdict, and why."""

    settle_early: bool = True
    #: runtime (or EVERY_RUNTIME) → the first row whose failure settled it
    moot: dict[str, str] = field(default_factory=dict)

    def failed(self, row: RowId) -> None:
        """A row got an unexpected reward: under a secondary runtime that runtime is
        refused; under the primary one every runtime is."""
        self.moot.setdefault(row.semantics or EVERY_RUNTIME, str(row))

    def is_moot(self, row: RowId) -> bool:
        """Whether a secondary row not yet started can be skipped."""
        if not self.settle_early or row.semantics is None:
            return False
        return EVERY_RUNTIME in self.moot or row.semantics in self.moot

    def skip_reason(self, row: RowId) -> str:
        """Why a row has no results (it was skipped before its first verification)."""
        if row.semantics is not None and EVERY_RUNTIME in self.moot:
            return (
                f"{self.moot[EVERY_RUNTIME]} failed: the verdict is a rejection under every runtime"
            )
        if row.semantics is not None and row.semantics in self.moot:
            failed = self.moot[row.semantics]
            return f"{failed} failed: the task is already unsafe under {row.semantics}"
        return "the oracle settled the verdict"
