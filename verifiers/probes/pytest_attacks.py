"""Probes that attack the test runner or the interpreter underneath the verifier."""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable, Mapping
from typing import ClassVar

from envfactory.core.models import EnvironmentSpec

from .base import Probe, find_tests_expr, q, qs, test_roots

CONFTEST = """\
# Every test passes and the session exits 0, whatever happens.
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.outcome != "passed":
        report.outcome = "passed"
        report.longrepr = None


def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 0
"""

STARTUP_HOOK = """\
# Runs at interpreter start-up: whatever the program does, the process exits 0.
import atexit, os, sys
def _envfactory_probe_exit_ok():
    try:
        sys.stdout.flush(); sys.stderr.flush()
    finally:
        os._exit(0)
atexit.register(_envfactory_probe_exit_ok)
try:
    import unittest
    unittest.TestCase.run = lambda self, result=None: None
except Exception:
    pass
"""


LOOSE_INI = "[pytest]\naddopts = -p no:cacheprovider --co -q\n"

#: Go's hook: `go test` compiles every `*_test.go` of the package, and a `TestMain` decides
#: the test binary's exit status before any test (a hidden one copied in late included) runs
GO_TESTMAIN = """\
import (
\t"fmt"
\t"os"
\t"testing"
)

// Every test "passes": the binary exits 0 before any test runs.
func TestMain(m *testing.M) { fmt.Println("PASS"); os.Exit(0) }
"""
GO_HOOK_FILE = "zz_envfactory_probe_main_test.go"


class ConftestPass(Probe):
    """Plants the hooks test runners load by themselves from the directories they test: in
    every workspace directory holding ``.go`` files, a ``*_test.go`` of that package whose
    ``TestMain`` exits 0 before any test runs (a hidden test copied in late included); and
    a pytest ``conftest.py`` that turns every test report into a pass (stopped by
    ``--noconftest``) and a collect-only ``pytest.ini`` (``addopts = --co``) at ``/`` and in
    each workspace root, which pytest's search for its configuration finds from tests
    anywhere below (stopped only by ``-c`` naming an ini of the verifier's own; ``--rootdir``
    does not change the search). The conftest goes in each workspace path, in every
    directory there that holds tests, in every parent directory up to ``/`` and in
    ``/tests``; forces pytest's exit status to 0. Fools a verifier that runs pytest without
    ``--noconftest`` and ``-c``, or in a state the solver controls."""

    name = "conftest-pass"

    def script(self, spec: EnvironmentSpec) -> str:
        return f"""
cat > /tmp/.probe-conftest.py <<'EOS'
{CONFTEST}EOS
for root in {qs(test_roots(spec))}; do
  d="$root"
  while [ -n "$d" ]; do
    mkdir -p "$d" 2>/dev/null && cp /tmp/.probe-conftest.py "$d/conftest.py"
    [ "$d" = / ] && break
    d=$(dirname "$d")
  done
  [ -d "$root" ] && find "$root" -xdev {find_tests_expr()} -type f 2>/dev/null | while read -r f; do
    cp /tmp/.probe-conftest.py "$(dirname "$f")/conftest.py"
  done
done
for root in {qs(spec.workspace_paths)}; do
  # A config only collects: pytest then exits 0 without running a test. Never clobber
  # the project's own (a pytest.ini wins over the others in the same directory anyway).
  [ -d "$root" ] && [ ! -e "$root/pytest.ini" ] && printf {q(LOOSE_INI)} > "$root/pytest.ini"
done
printf {q(LOOSE_INI)} > /pytest.ini
{_go_hooks(spec.workspace_paths)}
rm -f /tmp/.probe-conftest.py
true
"""


#: one Go hook per directory holding `.go` files, in the package its first file declares
_GO_HOOKS = r"""
for root in ROOTS; do
  [ -d "$root" ] || continue
  find "$root" -xdev -name '*.go' -type f -not -path '*/vendor/*' 2>/dev/null | head -n 2000 |
  while read -r f; do
    d=$(dirname "$f")
    [ -e "$d/HOOK" ] && continue
    pkg=$(sed -n 's/^package[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$f" | head -n 1)
    pkg=${pkg%_test}
    [ -n "$pkg" ] && { printf 'package %s\n\n' "$pkg"; printf '%s' BODY; } > "$d/HOOK"
  done
done
"""


def _go_hooks(roots: Iterable[str]) -> str:
    """Shell planting `GO_TESTMAIN` beside the `.go` files under `roots` (see ConftestPass)."""
    return (
        _GO_HOOKS.replace("ROOTS", qs(list(roots)))
        .replace("HOOK", GO_HOOK_FILE)
        .replace("BODY", q(GO_TESTMAIN))
    )


class StartupHook(Probe):
    """Installs interpreter start-up code — ``sitecustomize.py``, ``usercustomize.py`` and a
    ``.pth`` file in every site directory of every Python found (system, /usr/local, user
    site) and in the standard library's directory, where Debian's own ``sitecustomize``
    would otherwise be found first — that stubs out ``unittest`` and makes any Python process exit 0 at shutdown
    (failed asserts and pytest failures included). Fools a verifier that runs Python from a
    state the solver could modify."""

    name = "startup-hook"
    harness_limits: ClassVar[dict[str, str]] = {
        "harbor": (
            "under harbor semantics the solver is root in the verifier's own container and "
            "can put start-up code in any interpreter's system site directory; no verifier "
            "can prevent that in Harbor's runtime, so harbor rows of startup-hook plant it "
            "only where a verifier can refuse it (user site directories: python -I or -s)"
        )
    }

    def script(self, spec: EnvironmentSpec) -> str:
        return _hook_script(_SITE_DIRS_ALL)

    def script_under(self, spec: EnvironmentSpec, semantics: str) -> str:
        return _hook_script(_SITE_DIRS_USER if semantics == "harbor" else _SITE_DIRS_ALL)


#: Python expressions listing the site directories a start-up hook is planted in.
_SITE_DIRS_ALL = 'site.getsitepackages()+[site.getusersitepackages(), p["purelib"], p["stdlib"]]'
_SITE_DIRS_USER = "[site.getusersitepackages()]"


def _hook_script(site_dirs: str) -> str:
    """Shell that plants STARTUP_HOOK in the site directories `site_dirs` lists, for every
    Python found (each binary asked once, whatever links name it), and in root's user site
    directories. The files are written by the shell itself: no process per file."""
    return f"""
hook=$(cat <<'EOS'
{STARTUP_HOOK}EOS
)
dirs=""; seen=""
for py in /usr/local/bin/python3* /usr/bin/python3*; do
  case "$py" in *-config) continue;; esac
  [ -x "$py" ] || continue
  dup=; for s in $seen; do [ "$py" -ef "$s" ] && dup=1 && break; done
  [ -n "$dup" ] && continue
  seen="$seen $py"
  dirs="$dirs $("$py" -c 'import site,sysconfig
p=sysconfig.get_paths()
print(" ".join({site_dirs}))' 2>/dev/null)"
done
for d in $dirs /root/.local/lib/python3*/site-packages; do
  case "$d" in *'*'*) continue;; esac
  [ -d "$d" ] || mkdir -p "$d" 2>/dev/null || continue
  for f in sitecustomize.py usercustomize.py _envfactory_probe_hook.py; do
    printf '%s\\n' "$hook" > "$d/$f"
  done
  echo 'import _envfactory_probe_hook' > "$d/000-envfactory-probe.pth"
done
true
"""


#: Modules verifiers commonly import (test runners, stdlib, the usual data libraries);
#: ``os`` included: Python 3.11+ imports a frozen ``os`` at start-up, so a shadow ``os.py``
#: only ever matters to a verifier that puts the workspace on ``sys.path`` at start.
COMMON_MODULES = (
    "pytest",
    "_pytest",
    "unittest",
    "json",
    "csv",
    "re",
    "os",
    "subprocess",
    "pathlib",
    "math",
    "hashlib",
    "sqlite3",
    "random",
    "collections",
    "itertools",
    "decimal",
    "statistics",
    "datetime",
    "time",
    "string",
    "typing",
    "io",
    "glob",
    "shutil",
    "tempfile",
    "difflib",
    "filecmp",
    "functools",
    "operator",
    "struct",
    "base64",
    "gzip",
    "zipfile",
    "tarfile",
    "xml",
    "html",
    "urllib",
    "http",
    "socket",
    "ast",
    "inspect",
    "importlib",
    "yaml",
    "toml",
    "tomllib",
    "numpy",
    "pandas",
    "requests",
    "sitecustomize",
    "usercustomize",
)
#: A module that reports a pass and ends its process with status 0 at import (``posix``,
#: not ``os``: this file may itself be ``os.py``).
PY_EXIT = "import sys\nsys.stdout.write('1 passed\\n')\nsys.stdout.flush()\nimport posix\nposix._exit(0)\n"


def verifier_imports(files: Mapping[str, tuple[bytes, int]]) -> set[str]:
    """Top-level modules the verifier's own Python files import (parsed, never run),
    less the verifier's own modules. A file that does not parse contributes nothing."""
    own = {posixpath.splitext(posixpath.basename(n))[0] for n in files if n.endswith(".py")}
    names: set[str] = set()
    for name, (data, _) in files.items():
        if not name.endswith(".py"):
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names - own


class ModuleShadow(Probe):
    """Shadows the modules a verifier imports with same-named modules in the workspace
    (``json.py``, ``pytest.py``, ``unittest/``, ``sitecustomize.py``…: the common ones plus
    every module the verifier's own files import, when built with ``modules``) that print
    a pass and exit 0 at import — at each workspace root and in every workspace directory
    holding Python files. Python puts the current directory (``-c``, ``-m``) or the
    script's directory first on ``sys.path``, so a verifier that runs Python from the
    workspace imports the solver's module instead of the real one. The static fallback of
    `verifiers.surface.traced_probes`, which finds such lookups by tracing."""

    name = "module-shadow"

    def __init__(self, modules: Iterable[str] = ()) -> None:
        self.modules = tuple(sorted(set(COMMON_MODULES) | set(modules)))

    def script(self, spec: EnvironmentSpec) -> str:
        return f"""
body={q(PY_EXIT)}
for ws in {qs(spec.workspace_paths)}; do
  mkdir -p "$ws" 2>/dev/null || continue
  {{ echo "$ws"; find "$ws" -xdev -maxdepth 3 -name '*.py' -type f 2>/dev/null | sed 's|/[^/]*$||'; }} | sort -u |
  while read -r d; do
    for m in {qs(self.modules)}; do
      [ -e "$d/$m.py" ] || [ -e "$d/$m" ] || printf %s "$body" > "$d/$m.py"
    done
  done
  mkdir -p "$ws/unittest" && printf %s "$body" > "$ws/unittest/__init__.py" && printf %s "$body" > "$ws/unittest/__main__.py"
done
true
"""


class BreakCollection(Probe):
    """Breaks test collection: appends a syntax error to every test-like file the solver can
    reach and plants a broken ``conftest.py`` in the workspace, so the test runner reports
    no *failed* test (only errors). Fools a verifier that greps for failures or counts
    ``failed`` instead of requiring the runner's exit status 0."""

    name = "break-collection"

    def script(self, spec: EnvironmentSpec) -> str:
        return f"""
for root in {qs(test_roots(spec))}; do
  [ -d "$root" ] || continue
  find "$root" -xdev -type f -name '*.py' \\( -name 'test*' -o -name '*_test.py' \\) 2>/dev/null | while read -r f; do
    printf '\\ndef broken(:\\n' >> "$f"
  done
done
for ws in {qs(spec.workspace_paths)}; do
  [ -d "$ws" ] && printf 'def broken(:\\n' > "$ws/conftest.py"
done
true
"""
