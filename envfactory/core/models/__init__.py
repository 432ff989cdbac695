"""Every value that crosses a process, a table or a file: frozen pydantic models."""

from .base import ArtifactKey, Model, new_id, utcnow
from .environments import (
    BuildContext,
    BuildResult,
    EnvironmentSpec,
    EnvStatus,
    FileEntry,
    Limits,
    PartialSolution,
    Step,
    VerifyScope,
)
from .packs import (
    PACK_SCHEMA_VERSION,
    PackEnvironment,
    PackManifest,
    PackMember,
    ProvenanceChain,
)
from .review import (
    Decision,
    Evidence,
    FindingSource,
    ReviewAudit,
    ReviewItem,
    ReviewState,
    ShortcutFinding,
)
from .sandbox import ExecResult, PathChange, StateKind, StateRef
from .seeds import Attachment, Constraints, TaskSeed
from .trajectories import AgentRole, ToolCall, Trajectory, TrajectoryStep, Usage
from .verifiers import CheckKind, GateCheck, GateReport, GateVerdict, Provenance, Verifier

__all__ = [
    "PACK_SCHEMA_VERSION",
    "AgentRole",
    "ArtifactKey",
    "Attachment",
    "BuildContext",
    "BuildResult",
    "CheckKind",
    "Constraints",
    "Decision",
    "EnvStatus",
    "EnvironmentSpec",
    "Evidence",
    "ExecResult",
    "FileEntry",
    "FindingSource",
    "GateCheck",
    "GateReport",
    "GateVerdict",
    "Limits",
    "Model",
    "PackEnvironment",
    "PackManifest",
    "PackMember",
    "PartialSolution",
    "PathChange",
    "Provenance",
    "ProvenanceChain",
    "ReviewAudit",
    "ReviewItem",
    "ReviewState",
    "ShortcutFinding",
    "StateKind",
    "StateRef",
    "Step",
    "TaskSeed",
    "ToolCall",
    "Trajectory",
    "TrajectoryStep",
    "Usage",
    "Verifier",
    "VerifyScope",
    "new_id",
    "utcnow",
]
