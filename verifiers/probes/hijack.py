"""Probes that replace the tools a verifier calls with ones that always succeed."""

from __future__ import annotations

from typing import ClassVar

from envfactory.core.models import EnvironmentSpec

from ..tamper import FIXED_PATH
from .base import Probe, q, qs

HIJACKED = (
    "python",
    "python3",
    "pytest",
    "py.test",
    "bash",
    "node",
    "npm",
    "npx",
    "go",
    "cargo",
    "make",
    "diff",
    "cmp",
    "grep",
    "jq",
    "sqlite3",
    "awk",
    "uv",
    "uvx",
    "pip",
    "java",
    "ruby",
    "perl",
)
#: Tools the sandbox's own exec machinery resolves through the image's PATH (`timeout`,
#: `env`, `sh`): hijacked only in workspace-derived directories, so the probe never
#: disables the container it runs in.
HIJACKED_IN_WORKSPACE = ("sh", "dash", "timeout", "env", "test", "[")


def _bin_dirs(spec: EnvironmentSpec) -> tuple[list[str], list[str]]:
    """(PATH directories searched before the real tools and user bin directories,
    workspace directories a verifier may prepend to its PATH)."""
    system = [d for d in FIXED_PATH.split(":") if d.startswith("/usr/local")]
    system += ["/root/.local/bin", "/root/bin"]
    ws_dirs = []
    for ws in spec.workspace_paths:
        ws = ws.rstrip("/")
        ws_dirs += [ws, f"{ws}/bin", f"{ws}/.venv/bin", f"{ws}/venv/bin", f"{ws}/node_modules/.bin"]
    return system, ws_dirs


class PathHijack(Probe):
    """Puts ``exit 0`` wrappers named ``python3``, ``python``, ``pytest``, ``bash``, ``sh``,
    ``node``, ``timeout``, ``env``, ``diff``, ``cmp``, ``grep``, ``jq``, ``sqlite3``, ``uv``…
    (and ``python3.X`` for each version present) in the PATH directories searched before
    the real tools (``/usr/local/sbin``, ``/usr/local/bin``), in user bin directories and in
    the workspace's own ``bin`` / ``.venv/bin`` / ``node_modules/.bin``. Fools a verifier that
    resolves its interpreter or test runner through a PATH the solver can write to."""

    name = "path-hijack"
    harness_limits: ClassVar[dict[str, str]] = {
        "harbor": (
            "under harbor semantics the solver is root in the verifier's own container and "
            "can replace any system binary (/usr/bin/python3 as well as /usr/local/bin); no "
            "verifier can prevent that in Harbor's runtime, so harbor rows of path-hijack "
            "plant wrappers only in workspace directories"
        )
    }

    def script(self, spec: EnvironmentSpec) -> str:
        system, ws_dirs = _bin_dirs(spec)
        return _plant(system, ws_dirs)

    def script_under(self, spec: EnvironmentSpec, semantics: str) -> str:
        system, ws_dirs = _bin_dirs(spec)
        return _plant([] if semantics == "harbor" else system, ws_dirs)


def _plant(system: list[str], ws_dirs: list[str]) -> str:
    """Shell that puts always-pass wrappers in `system` and `ws_dirs` (see PathHijack).
    Three processes per directory (mkdir, rm, chmod), the writes by the shell itself: a
    process per file costs ~5 ms each on this engine's storage, and there are ~270 files."""
    return f"""
names="{" ".join(HIJACKED)}"
for py in /usr/bin/python3.* /usr/local/bin/python3.*; do
  b=${{py##*/}}; case "$b" in *-config|'python3.*') ;; *) names="$names $b";; esac
done
for d in {qs(system)} {qs(ws_dirs)}; do
  mkdir -p "$d" 2>/dev/null || continue
  more=; case " {" ".join(ws_dirs)} " in *" $d "*) more={q(" ".join(HIJACKED_IN_WORKSPACE))};; esac
  set --
  for n in $names $more; do set -- "$@" "$d/$n"; done
  rm -f "$@"
  for f in "$@"; do printf '#!/bin/sh\\necho "1 passed"\\nexit 0\\n' > "$f"; done
  chmod 0755 "$@" 2>/dev/null
done
true
"""
