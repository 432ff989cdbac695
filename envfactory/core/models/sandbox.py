"""What the sandbox layer hands back: exec results, path changes and saved states."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field

from .base import Model, utcnow


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
