"""The rows a gate run has created, their results, and which share one verification.

Two probe states whose verification inputs are byte-identical (same image, same
workspace bytes, same tamper evidence, same recipe: `input_key`) are verified once and the
result is shared: the verifier cannot tell them apart. A probe whose state is byte-identical
to a row that expects reward 1 (the oracle) changed nothing the verifier sees: it is not
a row at all (there was nothing for it to attack). Pure: no container, no lock (the
scheduler holds it).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum

from envfactory.core.models import WARNING_KINDS, CheckKind, Reward
from envfactory.core.models.rows import RowId

from ..probes import Probe
from ..runner import PreparedState, VerifyResult
from ..states import ProducedState


@dataclass(eq=False)
class Row:
    """One gate row: a state, what it is verified as, and how often it runs."""

    id: RowId
    kind: CheckKind
    expected: Reward
    state: ProducedState
    prepared: PreparedState  # what is verified (layer image swapped in, harbor replay)
    probe: Probe | None = None
    repeats: int = 1

    @property
    def name(self) -> str:
        return str(self.id)

    @property
    def secondary(self) -> bool:
        """A row under the task's other runtime (named ``harbor:…``)."""
        return self.id.semantics is not None


#: what the report says of a dropped row
DROPPED_NOTE = "the probe left the oracle's state as it was (nothing for it to attack): not checked"


class Admission(Enum):
    OWNER = "owner"  # verified on its own
    SHARED = "shared"  # shares an identical row's verification
    DROPPED = "dropped"  # identical to a rewarded row: nothing for its probe to attack


@dataclass
class RowTable:
    rows: list[Row] = field(default_factory=list)
    results: dict[str, list[VerifyResult]] = field(default_factory=dict)  # owners only
    shared: dict[str, str] = field(default_factory=dict)  # row → the owner verified instead
    by_input: dict[str, str] = field(default_factory=dict)  # input key → first owner
    complete: set[str] = field(default_factory=set)  # rows whose planned runs are all in

    def admit(self, row: Row) -> Admission:
        """Add a row, sharing the verification of an identical probe state."""
        key = input_key(row.prepared)
        derived = row.kind in (CheckKind.PROBE, *WARNING_KINDS)
        twin = self.by_input.get(key) if derived else None
        if twin is not None and self._rewarded(twin):
            return Admission.DROPPED
        self.rows.append(row)
        if twin is not None:
            self.shared[row.name] = twin
            return Admission.SHARED
        self.by_input.setdefault(key, row.name)
        self.results[row.name] = []
        return Admission.OWNER

    def twin_of(self, row: Row) -> str | None:
        return self.shared.get(row.name)

    def record(self, row: Row, result: VerifyResult) -> list[VerifyResult]:
        """Add one result of an owner row; all its results so far."""
        self.results[row.name].append(result)
        return list(self.results[row.name])

    def finish(self, row: Row, runs: int) -> bool:
        """Whether `runs` results complete the row for the first time."""
        if runs != row.repeats or row.name in self.complete:
            return False
        self.complete.add(row.name)
        return True

    def results_of(self, row: Row) -> list[VerifyResult]:
        """The row's results, or those of the row it shares them with."""
        return self.results.get(self.shared.get(row.name, row.name)) or []

    def owners(self) -> list[Row]:
        """The rows that own a verification (not sharing another's)."""
        return [r for r in self.rows if r.name in self.results and r.name not in self.shared]

    def _rewarded(self, name: str) -> bool:
        return any(r.name == name and r.expected == 1 for r in self.rows)


def input_key(p: PreparedState) -> str:
    """Everything a verification of `p` depends on besides the verifier itself."""
    h = hashlib.sha256()
    h.update(p.image.encode() + b"\0" + p.scope.encode() + b"\0" + p.semantics.encode())
    # A replayed state is its recipe: two recipes are two states, even with no workspace
    # bytes or tamper evidence to tell them apart (regression: every harbor probe row, and
    # full-state probes without tamper evidence, shared the first such row's result).
    for entry in p.replay:
        h.update(b"\0".join(a.encode() for a in entry.argv) + b"\1" + entry.workdir.encode())
    h.update(b"\2" + "\0".join(sorted(p.expected)).encode())
    for path, tar in p.workspace:
        h.update(
            path.encode() + b"\0" + (hashlib.sha256(tar).digest() if tar is not None else b"-")
        )
    for t in p.tamper:
        h.update(f"{t.kind} {t.path}".encode())
    return h.hexdigest()
