"""Environment specs: the research agent's (or an importer's) versioned output."""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field

from .base import ArtifactKey, Model, NonEmpty, utcnow

#: How much root may do in a sandbox (docs/verifiers.md, "Capability profiles"):
#: ``root-work`` keeps what ordinary root work needs (package installs, users and groups,
#: file ownership, ``su``); ``locked`` drops every capability.
CapabilityProfile = Literal["root-work", "locked"]
#: The harness semantics a task is gated under (DESIGN.md, invariant 5):
#: ``envfactory``: a fresh container from the saved state, verifier copied in late, no
#: solver process alive; ``harbor``: the verifier runs in the solver's own container
#: (Harbor / Terminal-Bench), where ``/logs/verifier`` and everything else the solver
#: could write is as the solver left it.
Semantics = Literal["envfactory", "harbor"]


class VerifyScope(StrEnum):
    """How much of a saved state a verification sees (verifiers/runner.py, invariant 5)."""

    #: a fresh container from the pristine image, with only the workspace paths copied in
    WORKSPACE = "workspace"
    #: the saved filesystem itself; any tamper evidence makes the reward 0
    FULL_STATE = "full-state"


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


#: the fewest CPUs a sandbox may ask for (Docker's NanoCpus: below it a task only crawls)
MIN_CPUS = 0.01


def _cpus_not_bool(value: object) -> object:
    if isinstance(value, bool):  # TOML's `cpus = true` would read as 1.0
        raise ValueError(f"must be a number of CPUs (at least {MIN_CPUS}), not true/false")
    return value


def _cpus_at_least(value: float) -> float:
    if not value >= MIN_CPUS:
        raise ValueError(f"must be at least {MIN_CPUS} (a hundredth of a CPU), got {value}")
    return value


#: a number of CPUs: a finite number >= MIN_CPUS, never a boolean
Cpus = Annotated[
    float,
    BeforeValidator(_cpus_not_bool),
    Field(allow_inf_nan=False),
    AfterValidator(_cpus_at_least),
]


class Limits(Model):
    cpus: Cpus = 1.0
    memory_mb: int = Field(default=1024, ge=64)
    pids: int = Field(default=256, ge=16)
    #: what the sandbox may write (its writable layer and volumes), MiB; past it the
    #: sandbox is stopped and the exec reports `disk_exceeded` (docs/verifiers.md, "Disk")
    disk_mb: int = Field(default=4096, ge=16)
    exec_timeout_s: int = Field(default=120, ge=1)
    network: bool = False
    capabilities: CapabilityProfile = "root-work"


class LimitCaps(Model):
    """The operator's ceilings on what an imported task may ask for: a value above one is
    clamped to it at import, with a warning naming the field and both values (a
    stranger's suite must not switch the limits off or pin a gate slot indefinitely)."""

    cpus: float = Field(default=4.0, gt=0, description="CPUs a task's sandbox may ask for")
    memory_mb: int = Field(default=8192, ge=64, description="memory (MiB) a task may ask for")
    disk_mb: int = Field(default=20480, ge=16, description="disk quota (MiB) a task may ask for")
    pids: int = Field(default=4096, ge=16, description="processes a task may ask for")
    exec_timeout_s: int = Field(
        default=3600, ge=1, description="seconds one agent command of a task may run"
    )
    verifier_timeout_s: int = Field(
        default=3600, ge=1, description="seconds a task's verifier may run"
    )


class TaskFileLimits(Model):
    """How much an imported task directory may hold: every file counts its full size
    (a sparse file is stored whole, whatever it takes on the source disk). A task over
    a limit is refused, naming the file, before any of it is stored."""

    max_files: int = Field(default=20_000, ge=1, description="files one task may hold")
    max_file_bytes: int = Field(
        default=256 * 2**20, ge=1, description="the largest file a task may hold, in bytes"
    )
    max_total_bytes: int = Field(
        default=2**30, ge=1, description="a task's files together, at most, in bytes"
    )


class ServiceSpec(Model):
    """A container next to the main one (a database, a cache, a web service).

    Every sandbox of the environment (an episode, a verification, a gate state) gets fresh
    copies of its services on a private internal network of its own, where the main
    container reaches each one by ``name``; they are removed with the sandbox."""

    name: str = Field(pattern=r"^[a-z][a-z0-9-]{0,30}$")  # its hostname on the network
    build: BuildContext  # its image: a Dockerfile (FROM debian / python: the local base)
    command: tuple[str, ...] = ()  # empty: the image's CMD
    env: dict[str, str] = Field(default_factory=dict)
    #: a shell command run inside the service until it exits 0 (e.g. ``pg_isready``);
    #: empty: started is ready
    ready: str = ""
    ready_timeout_s: int = Field(default=60, ge=1, le=900)
    memory_mb: int = Field(default=512, ge=64)
    image: str | None = None  # image id once built


class EnvStatus(StrEnum):
    IMPORTED = "imported"  # read from an existing task suite, not gated yet
    DRAFT = "draft"
    BUILT = "built"
    UNPROVEN = "unproven"  # no judge could solve it (or fewer than the band's minimum)
    TOO_EASY = "too_easy"  # more judges solved it than the band allows; a reviewer agreed
    GATED = "gated"
    REJECTED = "rejected"
    PUBLISHED = "published"


class TaskOrigin(Model):
    """Where an imported task came from (provenance of `envfactory task import`)."""

    suite: str | None = None
    path: str  # the task directory as the user named it
    repository: str | None = None  # the git remote, when the task sits in a checkout
    commit: str | None = None
    files_key: ArtifactKey | None = None  # JSON {relative path: sha256} of every file read
    #: an environment imported from a pack: who first signed it (a key fingerprint), or
    #: "unsigned"; carried into every later export's provenance (`ProvenanceChain.signer`)
    signer: str | None = None


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
    #: the fields the built image decides (an imported task that names no `[envfactory]
    #: workdir` / `workspace_paths`): after every build they are set from the image's
    #: `Config.WorkingDir`, which the base image may have set (`formats.settle_workdir`);
    #: until then they hold what the Dockerfile's own lines say
    image_decides: tuple[Literal["workdir", "workspace_paths"], ...] = ()
    verify_scope: VerifyScope = VerifyScope.WORKSPACE
    #: workspace files the task does not grade (a mined fix's documentation and type
    #: stubs: no test reads them): the probes built from the oracle's outputs leave them be
    ungraded_paths: tuple[str, ...] = ()
    reference_solution: tuple[Step, ...]
    partial_solutions: tuple[PartialSolution, ...] = ()
    limits: Limits = Limits()
    #: containers started next to the main one in every sandbox of this environment
    services: tuple[ServiceSpec, ...] = ()
    image: str | None = None  # image id once built
    source: Literal["research", "harbor", "terminal-bench", "manual"] = "research"
    #: every harness this task is gated for (imported Harbor / TB tasks: both)
    semantics: tuple[Semantics, ...] = ("envfactory",)
    origin: TaskOrigin | None = None
    created_at: datetime = Field(default_factory=utcnow)


def gated_spec_hash(spec: EnvironmentSpec) -> str:
    """The sha256 of what a gate run judges of `spec`: everything but its built image, its
    origin and its creation time (which a build or an import changes, not the task)."""
    blob = spec.model_dump_json(exclude={"image", "origin", "created_at"}).encode()
    return hashlib.sha256(blob).hexdigest()


class BuildResult(Model):
    image: str  # image id
    tag: str
    context_hash: ArtifactKey
    log_key: ArtifactKey | None = None
    cached: bool = False
    substitutions: tuple[str, ...] = ()  # "python:3.12-slim -> envfactory/base-python:abc"
    #: one line per substitution whose stand-in is not the release the FROM names
    #: ("ubuntu:24.04 -> envfactory/base:abc: Ubuntu 24.04 (noble) is built as Debian 13 …")
    warnings: tuple[str, ...] = ()
    duration_s: float = 0.0
    #: the image's `Config.WorkingDir` ("/" when neither it nor its bases set one)
    workdir: str = "/"
    #: the end of the build log, at most 64 KiB, opened by a note of how many bytes and lines
    #: before it were dropped (`sandboxes.log_tail`); the whole log streams to `on_log`
    log_tail: str = ""
    log_bytes: int = Field(default=0, ge=0)  # what the build printed in all
    log_lines: int = Field(default=0, ge=0)
