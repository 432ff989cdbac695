"""Probes that replace the tools a verifier calls with ones that always succeed."""

from __future__ import annotations

from envfactory.core.models import EnvironmentSpec

from ..tamper import FIXED_PATH
from .base import Probe, qs

HIJACKED = ("python", "python3", "pytest", "py.test", "bash", "node", "npm", "go", "cargo", "make")


def _bin_dirs(spec: EnvironmentSpec) -> list[str]:
    """PATH directories that come before the real tools, and ones a verifier may prepend."""
    dirs = [d for d in FIXED_PATH.split(":") if d.startswith("/usr/local")]
    dirs += ["/root/.local/bin", "/root/bin"]
    for ws in spec.workspace_paths:
        ws = ws.rstrip("/")
        dirs += [ws, f"{ws}/bin", f"{ws}/.venv/bin", f"{ws}/venv/bin", f"{ws}/node_modules/.bin"]
    return dirs


class PathHijack(Probe):
    """Puts ``exit 0`` wrappers named ``python3``, ``python``, ``pytest``, ``bash``, ``node``…
    (and ``python3.X`` for each version present) in the PATH directories searched before
    the real tools (``/usr/local/sbin``, ``/usr/local/bin``), in user bin directories and in
    the workspace's own ``bin`` / ``.venv/bin`` / ``node_modules/.bin``. Fools a verifier that
    resolves its interpreter or test runner through a PATH the solver can write to."""

    name = "path-hijack"

    def script(self, spec: EnvironmentSpec) -> str:
        return f"""
names="{" ".join(HIJACKED)}"
for py in /usr/bin/python3.* /usr/local/bin/python3.*; do
  b=$(basename "$py"); case "$b" in *-config|'python3.*') ;; *) names="$names $b";; esac
done
for d in {qs(_bin_dirs(spec))}; do
  mkdir -p "$d" 2>/dev/null || continue
  for n in $names; do
    rm -f "$d/$n"
    printf '#!/bin/sh\\necho "1 passed"\\nexit 0\\n' > "$d/$n" && chmod 0755 "$d/$n"
  done
done
true
"""
