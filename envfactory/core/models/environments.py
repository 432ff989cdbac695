"""Environment specs: the research agent's (or an importer's) versioned output."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field

from .base import ArtifactKey, Model, NonEmpty, utcnow

VerifyScope = Literal["workspace", "full-state"]


class FileEntry(Model):
    """A file by content address: used for build contexts and verifier files."""

    path: NonEmpty  # relative POSIX path
    key: ArtifactKey
    mode: int = 0o644


class BuildContext(Model):
    dockerfile: str = "Dockerfile"
    files: tuple[FileEntry, ...]


class Step(Model):
    """One ordered step of a reference or partial solution: a shell script."""

    title: str = ""
    script: NonEmpty


class PartialSolution(Model):
    name: NonEmpty
    steps: tuple[Step, ...]


class Limits(Model):
    cpus: float = Field(default=1.0, gt=0)
    memory_mb: int = Field(default=1024, ge=64)
    pids: int = Field(default=256, ge=16)
    exec_timeout_s: int = Field(default=120, ge=1)
    network: bool = False


class EnvStatus(StrEnum):
    DRAFT = "draft"
    BUILT = "built"
    UNPROVEN = "unproven"  # no judge could solve it
    GATED = "gated"
    REJECTED = "rejected"
    PUBLISHED = "published"


class EnvironmentSpec(Model):
    id: str
    version: int = Field(default=1, ge=1)
    name: NonEmpty
    seed_id: str | None = None
    instruction: NonEmpty  # what the solver sees
    success_criteria: str = ""
    hidden_state_notes: str = ""
    build: BuildContext
    workdir: str = "/workspace"
    workspace_paths: tuple[str, ...] = ("/workspace",)
    verify_scope: VerifyScope = "workspace"
    reference_solution: tuple[Step, ...]
    partial_solutions: tuple[PartialSolution, ...] = ()
    limits: Limits = Limits()
    image: str | None = None  # image id once built
    source: Literal["research", "harbor", "terminal-bench", "manual"] = "research"
    created_at: datetime = Field(default_factory=utcnow)


class BuildResult(Model):
    image: str  # image id
    tag: str
    context_hash: ArtifactKey
    log_key: ArtifactKey | None = None
    cached: bool = False
    substitutions: tuple[str, ...] = ()  # "python:3.12-slim -> envfactory/base-python:abc"
    duration_s: float = 0.0
    log_tail: str = ""  # last 64 KiB of the build log; the caller stores the full log (on_log)
