"""States made another way than the plan's chain: the reference on minimal inputs (an
input attack done right for its own data), the reference with the settings the verifier
reads changed (the same, for the question asked), the reference with one step left out, and
the states of a secondary runtime (replayed in the verifier's own container).

Each function produces its state through the backend and says whether it is a row: the
recomputed state only when its outputs differ from the oracle's, the omission only when
it differs from the oracle in a file that decides the task (`verifiers.omissions`);
otherwise the note says why there is no row. The scheduler turns a state into a row.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from envfactory.core.models import CheckKind, EnvironmentSpec, Reward, Semantics, StateKind, Step
from envfactory.core.models.rows import RowId

from ..omissions import decisive_changes, incidental_note
from ..probes import Probe
from ..probes.inputs import RECOMPUTED, changed_outputs, recomputed_note, recomputed_steps
from ..probes.trusted import TRUSTED, TrustedInputsChanged, trusted_steps
from ..states import ProducedState, probe_replay
from .backend import GateBackend
from .plan import secondary_rows
from .views import Views


def recomputed(
    backend: GateBackend, spec: EnvironmentSpec, oracle: ProducedState, noop: ProducedState
) -> tuple[ProducedState | None, str]:
    """The reference solution run on minimal inputs (`probes.inputs.recomputed_steps`):
    the state when its outputs differ from the oracle's, and the note saying what changed."""
    steps = recomputed_steps(spec)
    rows: list[RowId | None] = [None] * (len(steps) - 1) + [RECOMPUTED]
    (st,) = backend.chain(steps, rows, [StateKind.PROBE] * len(steps))
    changed = changed_outputs(
        st.prepared.workspace, oracle.prepared.workspace, noop.prepared.workspace
    )
    return (st if changed else None), recomputed_note(changed)


def trusted(
    backend: GateBackend,
    spec: EnvironmentSpec,
    probe: TrustedInputsChanged,
    oracle: ProducedState,
    noop: ProducedState,
) -> tuple[ProducedState | None, str]:
    """The reference solution run with the settings the verifier reads changed
    (`probes.trusted`): the state when its outputs differ from the oracle's, and the note."""
    steps = trusted_steps(probe, spec)
    rows: list[RowId | None] = [None] * (len(steps) - 1) + [TRUSTED]
    (st,) = backend.chain(steps, rows, [StateKind.PROBE] * len(steps))
    changed = changed_outputs(
        st.prepared.workspace, oracle.prepared.workspace, noop.prepared.workspace
    )
    inputs = ", ".join(sorted(probe.files))
    if not changed:
        return (
            None,
            f"{TRUSTED} not checked: with {inputs} changed the reference wrote the oracle's outputs",
        )
    return (
        st,
        f"{TRUSTED} checked: with {inputs} changed the reference wrote other bytes to {', '.join(changed[:5])}",
    )


def omission(
    backend: GateBackend,
    spec: EnvironmentSpec,
    row: RowId,
    steps: Sequence[Step],
    oracle: ProducedState,
    noop: ProducedState,
) -> tuple[ProducedState | None, str]:
    """The reference with one step left out: the state when it differs from the oracle in a
    file that decides the task, else None and the note that the step is incidental."""
    rows: list[RowId | None] = [None] * (len(steps) - 1) + [row]
    (st,) = backend.chain(steps, rows, [StateKind.PARTIAL] * len(steps))
    decisive = decisive_changes(
        st.prepared.workspace,
        oracle.prepared.workspace,
        noop.prepared.workspace,
        spec.instruction,
        spec.workdir,
    )
    return (st, "") if decisive else (None, incidental_note(row))


def secondary_states(
    semantics: Semantics,
    battery: Sequence[Probe],
    spec: EnvironmentSpec,
    views: Views,
    oracle: ProducedState,
) -> Iterator[tuple[ProducedState, CheckKind, Reward, Probe | None]]:
    """The oracle, the no-op and each probe on the no-op as `semantics` verifies them
    (state, kind, expected reward, probe): a probe's attack is replayed in the verifier's
    own container, every process ended first."""
    by = {p.name: p for p in battery}
    for row, kind in secondary_rows(semantics, battery):
        if kind == CheckKind.ORACLE:
            yield oracle, kind, 1, None
            continue
        probe = by[row.probe] if row.probe else None
        recipe = (probe_replay(probe, spec, semantics),) if probe else ()
        state_kind = StateKind.PROBE if probe else StateKind.PRISTINE
        prepared = views.replayed(recipe, kill=probe is not None)
        yield ProducedState(row.state, state_kind, prepared, recipe), kind, 0, probe
