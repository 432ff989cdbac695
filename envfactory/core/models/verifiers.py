"""Verifiers and the gate reports that decide whether their reward can be trusted."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field, computed_field

from .base import Model, NonEmpty, utcnow
from .environments import FileEntry
from .sandbox import PathChange, StateRef


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
    created_at: datetime = Field(default_factory=utcnow)


class CheckKind(StrEnum):
    ORACLE = "oracle"
    NOOP = "no-op"
    UNSOLVED = "unsolved"
    PROBE = "probe"
    JUDGE = "judge"
    REGRESSION = "regression"
    FLAKINESS = "flakiness"


class GateVerdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"


class GateCheck(Model):
    kind: CheckKind
    name: str  # "oracle", "prefix-1", "probe:reward-file", ...
    state: StateRef | None = None
    expected: Literal[0, 1]
    observed: tuple[int, ...]  # one reward per repeat
    duration_s: float = 0.0
    evidence: tuple[str, ...] = ()
    tamper: tuple[PathChange, ...] = ()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        return bool(self.observed) and all(r == self.expected for r in self.observed)

    @property
    def flaky(self) -> bool:
        return len(set(self.observed)) > 1


class GateReport(Model):
    env_id: str
    verifier_version: int
    checks: tuple[GateCheck, ...]
    repeats: int = 3
    notes: tuple[str, ...] = ()  # e.g. "one-block solution: no prefix states"
    created_at: datetime = Field(default_factory=utcnow)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict(self) -> GateVerdict:
        return GateVerdict.PASSED if not self.reasons else GateVerdict.FAILED

    @computed_field  # type: ignore[prop-decorator]
    @property
    def reasons(self) -> tuple[str, ...]:
        out = [_reason(c) for c in self.checks if not c.passed]
        if not any(c.kind == CheckKind.ORACLE for c in self.checks):
            out.append("no oracle check was run")
        if not any(c.kind == CheckKind.NOOP for c in self.checks):
            out.append("no no-op check was run")
        return tuple(out)


def _reason(check: GateCheck) -> str:
    if check.flaky:
        return f"{check.kind.value} {check.name}: flaky, rewards {list(check.observed)}"
    return f"{check.kind.value} {check.name}: expected {check.expected}, got {list(check.observed)}"
