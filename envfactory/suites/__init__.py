"""Existing task suites (Harbor / Terminal-Bench directories) as stored environments.

    report = import_tasks([Path("examples/tasks")], store, artifacts, suite=None)
    report.imported   # ImportedEntry per stored (or already stored) task
    report.failed     # ImportFailure per task that could not be read: nothing of it stored
    task_summaries(store, suite="tasks")  /  task_page(store, after=…, limit=50)  /  task_detail(store, env_id)

Invariants: a task is stored whole (spec + verifier in one transaction, status
`imported`) or not at all; importing an unchanged task again is a no-op (its env id is
the content id of what it holds, never of where it came from); every stored task records
its origin: suite, path, git remote and commit of the checkout holding it, and the sha256
of every file of the task directory (an artifact, `origin.files_key`).
"""

from .discover import find_tasks, suite_name
from .intake import ImportedEntry, ImportFailure, ImportReport, import_tasks
from .origin import file_hashes, git_origin
from .views import (
    TaskDetail,
    TaskSummary,
    resolve_env_ids,
    task_detail,
    task_page,
    task_summaries,
)

__all__ = [
    "ImportFailure",
    "ImportReport",
    "ImportedEntry",
    "TaskDetail",
    "TaskSummary",
    "file_hashes",
    "find_tasks",
    "git_origin",
    "import_tasks",
    "resolve_env_ids",
    "suite_name",
    "task_detail",
    "task_page",
    "task_summaries",
]
