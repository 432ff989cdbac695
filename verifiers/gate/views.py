"""What the verifier is shown for a produced state, per runtime.

Under envfactory's runtime a state is verified as captured, in the verification layer's
image when the verifier needs one (`verifiers.deps`), and a full-state recipe's tamper
evidence leaves out the paths the oracle itself changes. Under Harbor's runtime the
state's recipe is replayed in the verifier's own container, every process ended first
unless the state is the reference's own (oracle, partial) or the pristine one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from envfactory.core.models import PathChange, Semantics, StateKind, VerifyScope

from ..runner import KILLS_ALL, PreparedState, Replay
from ..states import ProducedState

#: what the report says whenever rows ran under Harbor's runtime
HARBOR_LEFT_PROCESSES = (
    "under harbor semantics a process the solver leaves running can rewrite the tests "
    "or the reward file during verification; no verifier can prevent that in Harbor's "
    "runtime (harbor probe rows end every process first); envfactory's runtime ends "
    "every solver process"
)

#: states Harbor's runtime verifies with the solver's processes kept
_KEEPS_PROCESSES = (StateKind.ORACLE, StateKind.PARTIAL, StateKind.PRISTINE)


@dataclass(frozen=True)
class Views:
    primary: Semantics
    image: str  # the pristine environment image
    verify_image: str | None = None  # the verification layer's image, when there is one

    def prepared(
        self,
        st: ProducedState,
        secondary: Semantics | None,
        expected: frozenset[str],
        pinned: frozenset[str] = frozenset(),
    ) -> PreparedState:
        """What to verify for `st` (`expected`: the paths the oracle changes; `pinned`: the
        files the verifier's traced run loaded from the state's toolchain)."""
        if secondary == "harbor" or self.primary == "harbor":
            if st.prepared.semantics == "harbor":
                return st.prepared
            return self.replayed(st.recipe, kill=st.kind not in _KEEPS_PROCESSES)
        prepared = st.prepared
        if prepared.scope == VerifyScope.FULL_STATE and (expected or pinned):
            kept = tuple(t for t in prepared.tamper if t.path not in expected)
            kept += _toolchain_changes(st, pinned - expected, kept)
            prepared = replace(prepared, tamper=kept, expected=expected)
        if self.verify_image:
            prepared = replace(prepared, image=self.verify_image)
        return prepared

    def replayed(self, recipe: tuple[Replay, ...], *, kill: bool = False) -> PreparedState:
        """A state Harbor's runtime verifies: its recipe replayed in the verifier's own
        container (every process ended first where `kill`)."""
        image = self.verify_image or self.image
        replay = (*recipe, KILLS_ALL) if kill and recipe else recipe
        return PreparedState(image, VerifyScope.FULL_STATE, replay=replay, semantics="harbor")


def _toolchain_changes(
    st: ProducedState, pinned: frozenset[str], known: tuple[PathChange, ...]
) -> tuple[PathChange, ...]:
    """The changes `st` made to the verifier's own tools (`pinned`, which the reference
    left alone): tamper evidence in full-state scope, where a solver can replace what
    the verifier loads and no verifier can defend itself (DESIGN.md, invariant 7)."""
    seen = {c.path for c in known}
    return tuple(c for c in st.diff if c.path in pinned and c.path not in seen)
