"""The yield table of a mining run: how many commits reached each stage, each drop's
reason, and the seconds per published environment: CPU seconds of the mining process and
the git commands it ran (the containers' own CPU is not in it), and wall-clock seconds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import get_args

from envfactory.core.models.repos import CandidateResult, CandidateStage, YieldTable

STAGES: tuple[CandidateStage, ...] = get_args(CandidateStage)


def yield_table(results: Sequence[CandidateResult], wall_s: float = 0.0) -> YieldTable:
    reached: dict[str, int] = {}
    for i, stage in enumerate(STAGES):
        reached[stage] = sum(1 for r in results if STAGES.index(r.stage) >= i)
    published = reached["published"]
    cpu = sum(r.cpu_s for r in results)
    reasons = Counter(r.reason_kind or "error" for r in results if r.outcome != "published")
    tokens = sum(r.tokens for r in results)
    written = Counter(r.instruction_source for r in results if r.env_id)
    return YieldTable(
        scanned=len(results),
        reached=reached,
        reasons=dict(reasons.most_common()),
        published=published,
        cpu_s=round(cpu, 2),
        cpu_s_per_published=round(cpu / published, 2) if published else None,
        wall_s=round(wall_s, 2),
        wall_s_per_published=round(wall_s / published, 2) if published else None,
        tokens=tokens,
        tokens_per_published=round(tokens / published, 1) if published else None,
        instructions={str(k): n for k, n in written.items()},
    )
