"""What one gate run is given: the task, its verifier, its images, and the knobs.

`GateInput.backend` is the seam tests use: None runs on Docker through `engine`; an
in-memory backend (tests/verifiers/fake_backend.py) exercises the scheduler alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from envfactory.core.models import EnvironmentSpec, StateRef, Verifier
from sandboxes.protocol import SandboxEngine

from ..probes import PROBES, Probe
from ..probes.applicability import Traced
from ..runner import PreparedState
from .backend import GateBackend
from .executor import Progress

#: (the oracle state as verified, verifier files) → probes planted where the verifier looks,
#: and what it read there (rows whose files it never read are not applicable)
TracedProbes = Callable[[PreparedState, dict[str, tuple[bytes, int]]], Traced]


@dataclass(frozen=True)
class GateInput:
    engine: SandboxEngine
    spec: EnvironmentSpec
    verifier: Verifier
    files: Callable[[str], bytes]  # artifact key → bytes (the artifact store's `get`)
    image: str  # the built, pristine environment image
    repeats: int = 3
    regressions: tuple[StateRef, ...] = ()
    probes: tuple[Probe, ...] = PROBES
    concurrency: int = 2  # settings.sandbox.pool_size at the edge
    progress: Progress | None = None
    #: the image verification containers start from (the task image plus what the
    #: verifier needs offline, `verifiers.deps`); None: the pristine image itself
    verify_image: str | None = None
    #: what the verification layer could not provide (named in an unrunnable verdict)
    missing: tuple[str, ...] = ()
    provided: tuple[str, ...] = ()
    traced_probes: TracedProbes | None = None
    #: False: every row runs `repeats` times (the benchmark's baseline for flakiness)
    adaptive_repeats: bool = True
    #: check the reference with each step but the last left out (`verifiers.omissions`)
    omissions: bool = True
    #: probes built from what the oracle wrote (its outputs cut, JSON fields dropped, the
    #: reference run on minimal inputs)
    derived_probes: bool = True
    #: skip the secondary (harbor) rows that can no longer change a verdict; False: every
    #: row runs (a test that looks at each one)
    settle_early: bool = True
    #: produces and verifies the states; None: Docker through `engine`
    backend: GateBackend | None = None
