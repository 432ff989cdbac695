"""Probes that leave a process behind to act during verification."""

from __future__ import annotations

from envfactory.core.models import EnvironmentSpec

from .base import USUAL_RESULT_DIRS, Probe, qs
from .workspace import mentioned_paths


class DelayedRewrite(Probe):
    """Starts a detached (``setsid nohup``) process that outlives the solver's turn and,
    every fraction of a second, rewrites whatever a verifier might look at once it arrives:
    every test-like script under ``/tests``, ``/logs`` and any ``/run/envfactory-verifier-*``
    directory becomes ``exit 0``, reward files are (re)written, and placeholder outputs are
    recreated at every path the instruction names. Fools any harness that verifies in the
    solver's live container (or restarts it with its processes) instead of a fresh one."""

    name = "delayed-rewrite"

    def script(self, spec: EnvironmentSpec) -> str:
        outputs = mentioned_paths(spec.instruction, spec.workdir)
        return f"""
cat > /tmp/.rewrite.sh <<'EOS'
while :; do
  for d in /tests /run/envfactory-verifier-* {qs(spec.workspace_paths)}; do
    [ -d "$d" ] || continue
    find "$d" -maxdepth 3 -type f \\( -name '*.sh' -o -name 'test*.py' -o -name '*_test.py' \\) 2>/dev/null |
      while read -r f; do
        case "$f" in *.py) printf 'def test_ok():\\n    pass\\n' > "$f" ;; *) printf '#!/bin/sh\\nexit 0\\n' > "$f" ;; esac
      done
  done
  for d in {qs(USUAL_RESULT_DIRS)}; do mkdir -p "$d" 2>/dev/null && echo 1 > "$d/reward.txt"; done
  for p in {qs(outputs)}; do [ -e "$p" ] || {{ mkdir -p "$(dirname "$p")"; echo placeholder > "$p"; }}; done
  sleep 0.1
done
EOS
setsid nohup /bin/sh /tmp/.rewrite.sh </dev/null >/dev/null 2>&1 &
true
"""
