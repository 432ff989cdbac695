"""Environments from a repository's real history: fix commits mined into gated tasks.

    snap = clone_repository(source, artifacts)              # intake.py: bundle in the store
    miner = RepoMiner(engine, artifacts, store, work_dir)   # miner.py
    for sha in select_commits(open_snapshot(snap, artifacts, cache), ["A..B"], [], 50):
        result = miner.mine_candidate(CandidateInput(snapshot=snap, commit=sha))
    hunk_findings(result, report)   # "the tests do not exercise hunk N of file F"
    yield_table(results)            # commits scanned → … → published, drops by reason

Model-free by default: the instruction is the commit message through a template; with a
research model configured, the model writes it from the message, never the diff
(wording.py). A mined
task is a Harbor task directory (taskdir.py) imported like any other, so the whole gate
battery applies; the gates and publishing are the pipeline's own (workflows.repo_mining).
"""

from envfactory.core.models.repos import YieldTable

from .findings import hunk_findings
from .history import check_revisions, select_commits
from .intake import clone_repository, normalize_source, open_snapshot, repo_suite
from .miner import RepoMiner
from .yields import yield_table

__all__ = [
    "RepoMiner",
    "YieldTable",
    "check_revisions",
    "clone_repository",
    "select_commits",
    "hunk_findings",
    "normalize_source",
    "open_snapshot",
    "repo_suite",
    "yield_table",
]
