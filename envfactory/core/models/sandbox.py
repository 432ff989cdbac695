"""What the sandbox layer hands back: exec results, path changes and saved states."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field

from .base import Model, utcnow


class Purpose(StrEnum):
    """What a sandbox is for: its label and its name's middle part, and half of the key
    under which the engine's standby hands a container out (a container started for one
    purpose is never handed to another). One spelling, checked at the engine's door."""

    EPISODE = "episode"  # a policy's rollout, a pack's episode
    RESEARCH = "research"  # the research agent's builder
    RESEARCH_CHECK = "research-check"  # the research agent trying its own environment
    JUDGE = "judge"
    RED_TEAM = "red_team"
    VERIFIER_WRITER = "verifier-writer"
    GATE_STATE = "gate-state"  # a gate state: the reference, a partial, a regression
    GATE_PROBE = "gate-probe"  # a probe applied on a gate state
    VERIFY = "verify"  # one verification
    VERIFY_EXTRACT = "verify-extract"  # reading a state's files out for the verifier
    VERIFY_TRACE = "verify-trace"  # the verifier traced on the oracle state
    VERIFY_DEPS = "verify-deps"  # building the verification layer
    VERIFY_DIFF = "verify-diff"  # what a state changed
    BENCHMARK = "benchmark"  # benchmarks/ measuring the engine itself
    TEST = "test"  # the test suite's own sandboxes

    @classmethod
    def of(cls, value: str) -> Purpose:
        """`value` as a purpose; a clear error naming the known ones otherwise."""
        try:
            return cls(value)
        except ValueError:
            known = ", ".join(p.value for p in cls)
            raise ValueError(f"unknown sandbox purpose {value!r}; use one of: {known}") from None


class ExecResult(Model):
    exit_code: int | None  # None when the process was killed before reporting
    stdout: str = ""
    stderr: str = ""
    truncated: bool = False  # output exceeded the cap and was cut
    timed_out: bool = False  # the hard timeout killed it
    oom_killed: bool = False
    #: the sandbox's writable layer passed `Limits.disk_mb`: it was stopped and removed
    disk_exceeded: bool = False
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.disk_exceeded


#: a `docker diff` line's kind: A(dded), C(hanged) or D(eleted)
ChangeKind = Literal["A", "C", "D"]


class PathChange(Model):
    """One line of `docker diff`: A(dded), C(hanged) or D(eleted)."""

    path: str
    kind: ChangeKind


class StateKind(StrEnum):
    PRISTINE = "pristine"  # the untouched environment (the no-op state)
    ORACLE = "oracle"
    PARTIAL = "partial"
    PROBE = "probe"
    SOLVER = "solver"  # a judge / red-team / rl final state
    REGRESSION = "regression"


class StateRef(Model):
    """A container state saved as an image (`docker commit`) or the environment image itself."""

    image: str  # image id (sha256:...) or tag
    kind: StateKind
    label: str = ""  # e.g. "prefix-2", "probe:conftest-pass"
    env_id: str | None = None
    diff: tuple[PathChange, ...] = ()
    created_at: datetime = Field(default_factory=utcnow)
