"""The shortcut probe library: one probe per attack class (see `base.Probe`).

`PROBES` is the default set the gates apply to the no-op state and to every unsolved
state; `probes_for(verifier_files)` is that set tailored to one verifier's files (the
static module shadowing also covers what the verifier imports); `by_name` looks one up.
Probes discovered by tracing the verifier on the oracle's state (`probes.traced`: shadowed
and overwritten code, outputs linked to the verifier's own files, replayed writes;
`probes.tools`: the tools' own files with diagnostics silenced or the reference replayed)
are built by `verifiers.surface.traced_probes` (`ToolReplay` by the gates, from those loads
and the oracle's files). Add a probe by subclassing `Probe` in the module of its
family and listing it here — with a test that it fools a naive verifier and that a sound
one rejects it (tests/verifiers/test_probes.py).

Probes built per gate run from what the oracle wrote (`TruncatedOutputs`, `FieldsDropped`,
`perturbed_numbers`, `CandidateFlood`; in SQLite outputs, `rows.row_probes`; in
PostgreSQL clusters, `cluster_rows.cluster_probes`; record order
and multiplicity, `records.record_probes`; the reference's changes to a table file made
to other records, `other_records.other_records_probes`) are not in `PROBES`: the gates build them.
`GATE_BUILT` lists every such class, traced ones included, so that the probe table of
docs/verifiers.md (`scripts/gen_docs.py`) shows them beside `PROBES`.
"""

from __future__ import annotations

from collections.abc import Mapping

from .alternatives import (
    FinalNewline,
    GarbageCollected,
    QuotedCsv,
    ReserialisedJson,
    ReserialisedYaml,
    VacuumedSqlite,
)
from .answer_keys import AnswerInReach
from .base import Probe
from .cluster_rows import (
    ClusterColumnsReverted,
    ClusterOtherRecords,
    ClusterPermutedCells,
    ClusterPlaceholderCells,
    ClusterScaledCells,
    ClusterSupersetRows,
    ClusterTruncatedRows,
    ClusterZeroedCells,
)
from .forgery import InProcessForgery
from .git import GitHookReplay, HollowCommits, UncommittedResult
from .hijack import PathHijack
from .inputs import EmptiedInputs, MinimalInputs
from .numbers import (
    NUMBER_PROBES,
    CandidateFlood,
    ScaledNumbers,
    ZeroedNumbers,
    perturbed_numbers,
)
from .other_records import OtherRecordsInFile
from .processes import DelayedRewrite
from .pytest_attacks import (
    BreakCollection,
    ConftestPass,
    ModuleShadow,
    StartupHook,
    verifier_imports,
)
from .records import RecordDuplicated, RecordsReordered
from .rewards import ForgedOutput, RewardFile
from .rows import (
    ColumnsReverted,
    OtherRecordsChanged,
    PermutedCells,
    PlaceholderCells,
    ScaledCells,
    SupersetRows,
    TruncatedRows,
    ZeroedCells,
)
from .superset import SupersetLines, superset_lines
from .tools import ToolReplay, TracedSilenced
from .traced import TracedLink, TracedOverwrite, TracedReplay, TracedShadow
from .trusted import TrustedInputsChanged
from .undone import UndoneFile
from .visible import VisibleExamplesOnly
from .workspace import (
    CrashingPrograms,
    DeleteTests,
    EmptyTests,
    FieldsDropped,
    ForgedPassLines,
    GitReset,
    HangingPrograms,
    KillerPrograms,
    PlaceholderOutputs,
    RefreshedMtimes,
    RewardWritingPrograms,
    TruncatedByProducts,
    TruncatedOutputs,
    TruncatedProse,
    mentioned_paths,
)

PROBES: tuple[Probe, ...] = (
    RewardFile(),
    ForgedOutput(),
    ConftestPass(),
    StartupHook(),
    ModuleShadow(),
    InProcessForgery(),
    PathHijack(),
    DeleteTests(),
    EmptyTests(),
    PlaceholderOutputs(),
    BreakCollection(),
    GitReset(),
    DelayedRewrite(),
    EmptiedInputs(),
    MinimalInputs(),
    RefreshedMtimes(),
    ForgedPassLines(),
    HangingPrograms(),
    CrashingPrograms(),
    KillerPrograms(),
    RewardWritingPrograms(),
)

#: The probe classes the gates build per run, from the oracle's outputs or the verifier's
#: traced run on the oracle (`verifiers.surface.traced_probes`); never in `PROBES`.
#: the correct alternatives the gates check on the oracle state (expected 1: `alternatives`)
ALTERNATIVES: tuple[type[Probe], ...] = (
    ReserialisedJson,
    ReserialisedYaml,
    QuotedCsv,
    FinalNewline,
    GarbageCollected,
    VacuumedSqlite,
)

GATE_BUILT: tuple[type[Probe], ...] = (
    TruncatedOutputs,
    TruncatedProse,
    TruncatedByProducts,
    FieldsDropped,
    *NUMBER_PROBES,
    SupersetLines,
    TruncatedRows,
    ZeroedCells,
    ScaledCells,
    PlaceholderCells,
    ColumnsReverted,
    PermutedCells,
    SupersetRows,
    OtherRecordsChanged,
    OtherRecordsInFile,
    ClusterTruncatedRows,
    ClusterZeroedCells,
    ClusterScaledCells,
    ClusterPlaceholderCells,
    ClusterColumnsReverted,
    ClusterPermutedCells,
    ClusterSupersetRows,
    ClusterOtherRecords,
    RecordsReordered,
    RecordDuplicated,
    UncommittedResult,
    HollowCommits,
    UndoneFile,
    CandidateFlood,
    GitHookReplay,
    VisibleExamplesOnly,
    AnswerInReach,
    TrustedInputsChanged,
    TracedShadow,
    TracedOverwrite,
    TracedSilenced,
    ToolReplay,
    TracedLink,
    TracedReplay,
)


def probes_for(verifier_files: Mapping[str, tuple[bytes, int]]) -> tuple[Probe, ...]:
    """The default set with `ModuleShadow` also shadowing every module the verifier's own
    Python files import (`verifier_imports`); what the gates should apply to a verifier
    whose files they hold (`runner.verifier_tar(verifier, files)`)."""
    shadow = ModuleShadow(verifier_imports(verifier_files))
    return tuple(shadow if p.name == shadow.name else p for p in PROBES)


def by_name(name: str) -> Probe:
    for p in PROBES:
        if p.name == name:
            return p
    raise KeyError(f"no probe named {name!r}; known: {', '.join(p.name for p in PROBES)}")


__all__ = [
    "ALTERNATIVES",
    "GATE_BUILT",
    "GitHookReplay",
    "HollowCommits",
    "InProcessForgery",
    "UncommittedResult",
    "VisibleExamplesOnly",
    "PROBES",
    "CandidateFlood",
    "Probe",
    "ScaledNumbers",
    "ZeroedNumbers",
    "FieldsDropped",
    "TruncatedByProducts",
    "TruncatedOutputs",
    "TruncatedProse",
    "by_name",
    "mentioned_paths",
    "perturbed_numbers",
    "superset_lines",
    "SupersetLines",
    "probes_for",
    "verifier_imports",
]
