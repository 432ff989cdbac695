"""What an importer hands back, and the two artifact-store seams the formats need.

`ImportedTask` pairs the `EnvironmentSpec` and `Verifier` read from a task directory with
facts the gate report should repeat (notes such as "one-block solution: no prefix
states") and, for the deliberately broken example tasks, the gate check that is
expected to reject them. The store seams are structural (`typing.Protocol`) so the
formats work with `envfactory.store.artifacts.ArtifactStore` or any object with the same
two methods.
"""

from __future__ import annotations

from typing import Literal, Protocol

from envfactory.core.models import CheckKind, EnvironmentSpec, Model, Verifier

TaskFormat = Literal["harbor", "terminal-bench"]

#: The note an importer attaches when the reference solution is a single step.
ONE_BLOCK_NOTE = "one-block solution: no prefix states"


class BlobWriter(Protocol):
    """Stores bytes and returns their sha256 key (`ArtifactStore.put_bytes`)."""

    def put_bytes(self, data: bytes) -> str: ...


class BlobReader(Protocol):
    """Returns the bytes stored under a key (`ArtifactStore.get`)."""

    def get(self, key: str) -> bytes: ...


class ImportedTask(Model):
    """A task directory read into our models; files live in the artifact store."""

    spec: EnvironmentSpec
    verifier: Verifier
    format: TaskFormat
    #: Facts the gate report should repeat, e.g. `ONE_BLOCK_NOTE` or ignored files.
    notes: tuple[str, ...] = ()
    #: For tasks that are broken on purpose: the check that must reject them. Either a
    #: check name ("probe:conftest-pass") or a bare kind ("no-op", "unsolved").
    expected_failure: str | None = None
    expected_failure_kind: CheckKind | None = None

    @property
    def prefix_states(self) -> int:
        """How many proper prefixes of the reference solution the unsolved gate can run."""
        return max(0, len(self.spec.reference_solution) - 1)
