"""A deliberately naive runner — the harness design the real runner exists to avoid.

It verifies in the solver's *live* container (solver processes still running), copies
the verifier to the well-known `/tests`, waits a moment (as harnesses do while installing
test dependencies) and runs the entry with the image's PATH and the solver's files all
around. Used only by tests, to show that each probe really fools something.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from envfactory.core.models import Verifier
from sandboxes.protocol import Sandbox
from verifiers import archives


def naive_verify(
    box: Sandbox, verifier: Verifier, files: Callable[[str], bytes], *, settle_s: float = 1.0
) -> int:
    box.exec(["/bin/mkdir", "-p", "/tests"], user="root")  # not through a (hijackable) shell
    box.put_archive(
        "/tests", archives.tar_of({f.path: (files(f.key), f.mode) for f in verifier.files})
    )
    time.sleep(settle_s)
    res = box.exec(f"cd /tests && {verifier.entry}", timeout=verifier.timeout_s, user="root")
    return int(res.exit_code == 0)
