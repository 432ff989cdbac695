"""The shortcut probe library: one probe per attack class (see `base.Probe`).

`PROBES` is the default set the gates apply to the no-op state and to every unsolved
state; `by_name` looks one up. Add a probe by subclassing `Probe` in the module of its
family and listing it here — with a test that it fools a naive verifier and that a sound
one rejects it (tests/verifiers/test_probes.py).
"""

from __future__ import annotations

from .base import Probe
from .hijack import PathHijack
from .processes import DelayedRewrite
from .pytest_attacks import BreakCollection, ConftestPass, ModuleShadow, StartupHook
from .rewards import ForgedOutput, RewardFile
from .workspace import DeleteTests, EmptyTests, GitReset, PlaceholderOutputs, mentioned_paths

PROBES: tuple[Probe, ...] = (
    RewardFile(),
    ForgedOutput(),
    ConftestPass(),
    StartupHook(),
    ModuleShadow(),
    PathHijack(),
    DeleteTests(),
    EmptyTests(),
    PlaceholderOutputs(),
    BreakCollection(),
    GitReset(),
    DelayedRewrite(),
)


def by_name(name: str) -> Probe:
    for p in PROBES:
        if p.name == name:
            return p
    raise KeyError(f"no probe named {name!r}; known: {', '.join(p.name for p in PROBES)}")


__all__ = ["PROBES", "Probe", "by_name", "mentioned_paths"]
