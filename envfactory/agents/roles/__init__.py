"""The roles, each an input model (what it may see), a prompt and a finish tool."""

from .common import RoleRuntime
from .judge import JudgeFinish, JudgeInput, SolverResult, run_judge
from .red_team import RedTeamFinish, RedTeamInput, RedTeamResult, run_red_team
from .research import ResearchFinish, ResearchInput, ResearchResult, run_research
from .shortcut_analyst import (
    AnalystReport,
    AnalystResult,
    ReportedFinding,
    ShortcutAnalystInput,
    report_from_trajectory,
    run_shortcut_analyst,
)
from .verifier_writer import (
    VerifierFileText,
    VerifierFinish,
    VerifierWriterInput,
    VerifierWriterResult,
    run_verifier_writer,
)

__all__ = [
    "AnalystReport",
    "AnalystResult",
    "ReportedFinding",
    "ShortcutAnalystInput",
    "report_from_trajectory",
    "run_shortcut_analyst",
    "JudgeFinish",
    "JudgeInput",
    "RedTeamFinish",
    "RedTeamInput",
    "RedTeamResult",
    "ResearchFinish",
    "ResearchInput",
    "ResearchResult",
    "RoleRuntime",
    "SolverResult",
    "VerifierFileText",
    "VerifierFinish",
    "VerifierWriterInput",
    "VerifierWriterResult",
    "run_judge",
    "run_red_team",
    "run_research",
    "run_verifier_writer",
]
