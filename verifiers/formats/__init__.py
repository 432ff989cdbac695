"""Task formats: import Harbor and Terminal-Bench 1 task directories, export Harbor.

    load_task(path, artifacts) -> ImportedTask        # spec + verifier + notes
    export_harbor(spec, verifier, artifacts, out)      # the Harbor layout again
    context_tar(build, files) -> bytes                 # build context for the engine
    settle_workdir(spec, verifier, build.workdir)      # after a build: the image's WORKDIR
    materialize(entries, files, dest)                  # FileEntry list onto disk

Invariant: an imported verifier's reward is the exit status of its entry command, never a
reward file or an output line (docs/task-formats.md). Every layout problem is an
`InvalidTask` that names the missing or wrong file and how to fix it.
"""

from .caps import CLAMPED
from .export import export_harbor, render_steps
from .files import FileSource, context_tar, materialize
from .image_workdir import settle_workdir
from .loader import load_task
from .model import ONE_BLOCK_NOTE, BlobReader, BlobWriter, ImportedTask, TaskFormat
from .steps import split_steps

__all__ = [
    "ONE_BLOCK_NOTE",
    "BlobReader",
    "BlobWriter",
    "FileSource",
    "CLAMPED",
    "ImportedTask",
    "TaskFormat",
    "context_tar",
    "export_harbor",
    "load_task",
    "materialize",
    "render_steps",
    "settle_workdir",
    "split_steps",
]
