"""The identities of gate rows and finding rules: built once, carried as values, spelled once.

A gate row is named for display and storage (`GateCheck.name`, a finding's state, a
task's `expected_failure`) by a small grammar:

    row      := [semantics ":"] state
    state    := "no-op" | "oracle" | "prefix-" N | "without-step-" N
              | "partial:" NAME | "regression:" LABEL | "probe:" PROBE "@" base
    base     := any state but a probe

The semantics prefix is written only for a row under a task's secondary runtime
(``harbor:probe:reward-file@no-op``). `RowId` builds the string (`str(row)`) and
`RowId.parse` reads it back; no other code splits or prefix-matches a row name
(tests/core/test_rows.py greps for it). Stored names keep reading: the grammar is the one
every earlier report used.

A finding's rule is a `FindingRule` (the family) plus, for the families that carry one,
a detail (the probe's name, the tamper classes, the model's own rule): `Rule`, spelled
``family:detail`` or the family alone, parsed back by `Rule.parse`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import get_args

from .environments import Semantics

_SEMANTICS: tuple[str, ...] = get_args(Semantics)


class RowKind(StrEnum):
    """What a row's state is (finer than `CheckKind`: every unsolved kind is its own)."""

    NOOP = "no-op"
    ORACLE = "oracle"
    PREFIX = "prefix-"  # the reference's first N steps
    OMISSION = "without-step-"  # the reference with step N left out
    PARTIAL = "partial:"  # an authored partial solution
    REGRESSION = "regression:"  # a stored state of a confirmed shortcut
    PROBE = "probe:"  # a probe applied on a base state


_BARE = (RowKind.NOOP, RowKind.ORACLE)
#: the prefixes, longest first, so that no prefix hides another
_PREFIXED = sorted((k for k in RowKind if k not in _BARE), key=len, reverse=True)


@dataclass(frozen=True)
class RowId:
    """One gate row: its state's kind and label, a probe's base, a secondary runtime."""

    kind: RowKind
    label: str = ""  # N, NAME, LABEL or PROBE in the grammar above
    base: RowId | None = None  # the state a probe is applied on
    semantics: Semantics | None = None  # set only under a secondary runtime

    def __post_init__(self) -> None:
        if (self.kind == RowKind.PROBE) != (self.base is not None):
            raise ValueError(f"a probe row, and only a probe row, has a base: {self!r}")
        if self.base is not None and (self.base.kind == RowKind.PROBE or self.base.semantics):
            raise ValueError(f"a probe's base is a plain state: {self!r}")
        if (self.kind in _BARE) == bool(self.label):
            raise ValueError(
                f"{self.kind.value!r} rows {'take no' if self.label else 'need a'} label"
            )

    # -- the constructors every producer uses ---------------------------------------------

    @classmethod
    def noop(cls) -> RowId:
        return cls(RowKind.NOOP)

    @classmethod
    def oracle(cls) -> RowId:
        return cls(RowKind.ORACLE)

    @classmethod
    def prefix(cls, steps: int) -> RowId:
        return cls(RowKind.PREFIX, str(steps))

    @classmethod
    def omission(cls, step: int) -> RowId:
        return cls(RowKind.OMISSION, str(step))

    @classmethod
    def partial(cls, name: str) -> RowId:
        return cls(RowKind.PARTIAL, name)

    @classmethod
    def regression(cls, label: str) -> RowId:
        return cls(RowKind.REGRESSION, label)

    @classmethod
    def probe_on(cls, probe: str, base: RowId) -> RowId:
        return cls(RowKind.PROBE, probe, base)

    def under(self, semantics: Semantics | None) -> RowId:
        """The same row under another runtime (None: the primary one)."""
        return RowId(self.kind, self.label, self.base, semantics)

    # -- what readers ask of a row ----------------------------------------------------------

    @property
    def probe(self) -> str | None:
        """The probe's name, for a probe row."""
        return self.label if self.kind == RowKind.PROBE else None

    @property
    def state(self) -> RowId:
        """The row without its runtime: the state it verifies."""
        return self.under(None)

    @property
    def family(self) -> str:
        """The row's name up to its base (``probe:NAME`` for a probe row, else the name
        without runtime): what a finding's rule and a task's `expected_failure` name."""
        if self.kind == RowKind.PROBE:
            return f"{RowKind.PROBE.value}{self.label}"
        return str(self.state)

    def __str__(self) -> str:
        if self.kind in _BARE:
            text = self.kind.value
        elif self.kind == RowKind.PROBE:
            assert self.base is not None
            text = f"{self.family}@{self.base}"
        else:
            text = f"{self.kind.value}{self.label}"
        return f"{self.semantics}:{text}" if self.semantics else text

    @classmethod
    def parse(cls, name: str) -> RowId:
        """A stored row name back as a `RowId`; ValueError when it is none."""
        semantics = row_semantics_of(name)
        state = name.partition(":")[2] if semantics else name
        try:
            return cls._parse_state(state).under(semantics)
        except ValueError as exc:
            raise ValueError(f"not a gate row name: {name!r} ({exc})") from None

    @classmethod
    def _parse_state(cls, name: str) -> RowId:
        for kind in _BARE:
            if name == kind.value:
                return cls(kind)
        for kind in _PREFIXED:
            if name.startswith(kind.value) and len(name) > len(kind.value):
                rest = name[len(kind.value) :]
                if kind != RowKind.PROBE:
                    return cls(kind, rest)
                probe, at, base = rest.partition("@")
                if at and probe and base:
                    return cls(kind, probe, cls._parse_state(base))
        raise ValueError(f"not a gate row name: {name!r}")

    def matches(self, pattern: str) -> bool:
        """Whether a task's `expected_failure` names this row: the whole name, or its
        family (``probe:conftest-pass`` names every base it ran on; ``harbor:probe:X`` the
        harbor rows of that probe)."""
        semantics = f"{self.semantics}:" if self.semantics else ""
        return pattern in (str(self), f"{semantics}{self.family}")


def row_semantics_of(pattern: str) -> Semantics | None:
    """The runtime a row pattern names (``harbor:probe:X`` → harbor), None when none."""
    head, sep, _ = pattern.partition(":")
    return head if sep and head in _SEMANTICS else None  # type: ignore[return-value]


class FindingRule(StrEnum):
    """Every rule a finding can carry: the gates' probes and regressions, the tamper
    listing, trajectory mining, the mutation score, the solve rate and the model analyst."""

    PROBE = "probe"  # detail: the probe's name
    REGRESSION = "regression"
    TAMPER = "tamper"  # detail: the tamper classes, comma-separated
    NETWORK_ATTEMPT = "network-attempt"
    PATH_HIJACK = "path-hijack"
    WRITES_REWARD_FILE = "writes-reward-file"
    EDITS_TESTS = "edits-tests"
    SHORT_SOLUTION = "short-solution"
    RED_TEAM_REWARDED = "red-team-rewarded"
    WEAK_BATTERY = "mutation"  # detail: "weak-battery"
    SOLVE_RATE = "solve-rate"  # detail: "too-easy"
    MODEL = "model"  # detail: the analyst's own rule name
    #: not a shortcut: a state a correct solver could leave that the verifier gave 0;
    #: detail: the alternative's name, or "judge" for a judge's final state
    TOO_STRICT = "too-strict"


#: rules that name a detail after the family; the others stand alone
_DETAILED = frozenset(
    {
        FindingRule.PROBE,
        FindingRule.TAMPER,
        FindingRule.WEAK_BATTERY,
        FindingRule.SOLVE_RATE,
        FindingRule.MODEL,
        FindingRule.TOO_STRICT,
    }
)
#: heuristics: evidence that a shortcut may exist, not that one does
HEURISTIC_RULES = frozenset({FindingRule.SHORT_SOLUTION, FindingRule.NETWORK_ATTEMPT})


@dataclass(frozen=True)
class Rule:
    """A finding's rule: its family and, for the families that have one, its detail; a
    gate row's rule under a runtime other than envfactory's names that runtime first
    (``harbor:probe:reward-file``), as its row does."""

    family: FindingRule
    detail: str = ""
    semantics: Semantics | None = None

    def __post_init__(self) -> None:
        if (self.family in _DETAILED) != bool(self.detail):
            need = "needs a detail" if self.family in _DETAILED else "takes no detail"
            raise ValueError(f"rule {self.family.value!r} {need}")

    def __str__(self) -> str:
        rule = f"{self.family.value}:{self.detail}" if self.detail else self.family.value
        return f"{self.semantics}:{rule}" if self.semantics else rule

    @classmethod
    def parse(cls, text: str) -> Rule:
        """A stored rule back as a `Rule`; ValueError when its family is unknown."""
        semantics = row_semantics_of(text)
        rest = text.partition(":")[2] if semantics else text
        head, sep, detail = rest.partition(":")
        try:
            family = FindingRule(head)
        except ValueError:
            known = ", ".join(r.value for r in FindingRule)
            raise ValueError(f"unknown finding rule {text!r} (families: {known})") from None
        return cls(family, detail if sep else "", semantics)

    @property
    def heuristic(self) -> bool:
        return self.family in HEURISTIC_RULES

    @classmethod
    def names_shortcut(cls, text: str) -> bool:
        """Whether a stored finding's rule is a shortcut's; an unknown rule is (the safe
        side: its confirmed state becomes a regression row)."""
        try:
            return cls.parse(text).shortcut
        except ValueError:
            return True

    @property
    def shortcut(self) -> bool:
        """Whether a confirmed finding of this rule is a state the verifier must reject
        (a regression row expecting 0); a too-strict one is a state it should accept."""
        return self.family != FindingRule.TOO_STRICT
