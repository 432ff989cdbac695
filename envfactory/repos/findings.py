"""Under-tested hunks: a partial state (some of the fix's hunks) that the verifier rewards
means the tests never notice the hunks it lacks.

The rows are matched by identity (`RowId.partial(name)`), never by their spelling.
"""

from __future__ import annotations

from envfactory.core.models import GateReport
from envfactory.core.models.repos import CandidateResult
from envfactory.core.models.rows import RowId


def hunk_findings(result: CandidateResult, report: GateReport) -> tuple[str, ...]:
    """One line per hunk missing from a partial state that some run rewarded (unless the
    trace showed that state differs only in configuration nobody read: not applicable)."""
    rewarded = {
        c.row for c in report.checks if any(r == 1 for r in c.observed) and not c.not_applicable
    }
    refs = {h.number: h for h in result.hunks}
    missing: set[int] = set()
    for state in result.partials:
        if RowId.partial(state.name) in rewarded:
            missing.update(state.missing)
    return tuple(
        f"the tests do not exercise hunk {refs[n].index_in_file} of {refs[n].file}"
        for n in sorted(missing)
    )
