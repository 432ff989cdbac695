"""`Dropped`: a commit stops at a stage for a reason: a result, raised only inside this
package and turned into a `CandidateResult` by the miner."""

from __future__ import annotations

from envfactory.core.models.repos import CandidateStage, DropKind


class Dropped(Exception):
    def __init__(self, stage: CandidateStage, kind: DropKind, reason: str) -> None:
        super().__init__(reason)
        self.stage = stage
        self.kind = kind
        self.reason = reason
