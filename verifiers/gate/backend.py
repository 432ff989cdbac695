"""The gate's one seam to the engine: produce a state, verify a prepared state.

`DockerBackend` is the real one (states in sandboxes, `verifiers.states`; verifications
in fresh containers, `verifiers.runner`). The scheduler sees only `GateBackend`, so its
policy (early verdicts, skips, sharing, repeat escalation) is tested against an
in-memory backend in milliseconds (tests/verifiers/fake_backend.py); the real-Docker
gate tests test this file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from envfactory.core.errors import SandboxBroken
from envfactory.core.models import (
    EnvironmentSpec,
    Purpose,
    Semantics,
    StateKind,
    StateRef,
    Step,
    Verifier,
)
from envfactory.core.models.rows import RowId
from sandboxes.protocol import Sandbox, SandboxEngine

from ..probes import Probe
from ..runner import PreparedState, VerifyResult, verify_prepared
from ..states import (
    ProducedState,
    pristine_state,
    produce_chain,
    produce_probe,
    produce_probe_batch,
    read_state,
    regression_state,
)

Remove = Callable[[Sandbox], None]


class GateBackend(Protocol):
    """Produces the gate's states and verifies them. Engine failures raise
    (`SandboxBroken` for one sandbox that could not run); a failed step or a reward 0 is
    data on the returned value."""

    def pristine(self) -> ProducedState: ...

    def chain(
        self,
        steps: Sequence[Step],
        rows: Sequence[RowId | None],
        kinds: Sequence[StateKind],
        *,
        stop_on_failure: bool = False,
    ) -> list[ProducedState]:
        """Apply `steps` in one sandbox, capturing after step i when `rows[i]` is set;
        `ReferenceStepFailed` at the first failing step with `stop_on_failure`."""
        ...

    def regression(self, ref: StateRef) -> ProducedState: ...

    def probe(self, base: ProducedState, probe: Probe, semantics: Semantics) -> ProducedState:
        """`base` re-created in a fresh sandbox with `probe` applied on top."""
        ...

    def probe_batch(self, base: ProducedState, probes: Sequence[Probe]) -> Iterator[ProducedState]:
        """Every probe on `base` in one sandbox (workspace scope)."""
        ...

    def read(self, base: ProducedState, script: str) -> str | None:
        """What `script` prints in `base` re-created in a fresh sandbox (None: it failed)."""
        ...

    def verify(self, prepared: PreparedState, remove: Remove) -> VerifyResult:
        """One verification of `prepared` in a fresh container, handed to `remove` after."""
        ...

    def standby(self, image: str) -> AbstractContextManager[None]:
        """Containers started ahead of demand for the rows verified by exec."""
        ...


@dataclass(frozen=True)
class DockerBackend:
    engine: SandboxEngine
    image: str  # the pristine environment image
    spec: EnvironmentSpec
    verifier: Verifier
    verifier_files: dict[str, tuple[bytes, int]]

    def pristine(self) -> ProducedState:
        return pristine_state(self.engine, self.image, self.spec)

    def chain(
        self,
        steps: Sequence[Step],
        rows: Sequence[RowId | None],
        kinds: Sequence[StateKind],
        *,
        stop_on_failure: bool = False,
    ) -> list[ProducedState]:
        return produce_chain(
            self.engine,
            self.image,
            self.spec,
            steps,
            rows=rows,
            kinds=kinds,
            stop_on_failure=stop_on_failure,
        )

    def regression(self, ref: StateRef) -> ProducedState:
        return regression_state(self.engine, self.image, self.spec, ref)

    def probe(self, base: ProducedState, probe: Probe, semantics: Semantics) -> ProducedState:
        return produce_probe(self.engine, self.image, self.spec, base, probe, semantics)

    def probe_batch(self, base: ProducedState, probes: Sequence[Probe]) -> Iterator[ProducedState]:
        return produce_probe_batch(self.engine, self.image, self.spec, base, probes)

    def read(self, base: ProducedState, script: str) -> str | None:
        return read_state(self.engine, self.image, self.spec, base, script)

    def verify(self, prepared: PreparedState, remove: Remove) -> VerifyResult:
        return verify_prepared(
            self.engine,
            prepared,
            spec=self.spec,
            verifier=self.verifier,
            verifier_files=self.verifier_files,
            remove=remove,
        )

    @contextlib.contextmanager
    def standby(self, image: str) -> Iterator[None]:
        with self.engine.standby(
            image, limits=self.spec.limits, purpose=Purpose.VERIFY, network=False
        ):
            yield


def verify_with_retry(
    backend: GateBackend, prepared: PreparedState, remove: Remove, name: str
) -> VerifyResult:
    """One verification; a sandbox that could not run it gets one more, fresh one.

    Never a reward 0 for a broken sandbox: a 0 would pass the no-op and probe rows,
    which expect 0. A sandbox broken twice is the engine's failure, raised with the
    check's name, so the gate run fails loudly and its activity is retried."""
    try:
        return backend.verify(prepared, remove)
    except SandboxBroken as first:
        try:
            return backend.verify(prepared, remove)
        except SandboxBroken as exc:
            raise SandboxBroken(
                f"verifying {name}: twice, {exc.message}",
                reason=exc.reason,
                detail=exc.detail,
                hint=exc.hint,
            ) from first
