"""A probe written inline in a test: a name and a shell script."""

from __future__ import annotations

from envfactory.core.models import EnvironmentSpec
from verifiers.probes import Probe


class InlineProbe(Probe):
    """The script given, as a probe named `name`."""

    name = "inline"

    def __init__(self, name: str, script: str) -> None:
        self.name = name  # type: ignore[misc]
        self._script = script

    def script(self, spec: EnvironmentSpec) -> str:
        return self._script
