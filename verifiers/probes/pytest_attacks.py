"""Probes that attack the test runner or the interpreter underneath the verifier."""

from __future__ import annotations

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


class ConftestPass(Probe):
    """Plants a ``conftest.py`` that turns every test report into a pass and forces
    pytest's exit status to 0 — in each workspace path, in every directory there that holds
    tests, in every parent directory up to ``/`` and in ``/tests`` — plus a ``pytest.ini`` at
    ``/`` so tests anywhere below get ``/`` as their rootdir. Fools a verifier that runs
    pytest without ``--noconftest`` / its own rootdir, or in a state the solver controls."""

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
printf '[pytest]\\n' > /pytest.ini
rm -f /tmp/.probe-conftest.py
true
"""


class StartupHook(Probe):
    """Installs interpreter start-up code — ``sitecustomize.py``, ``usercustomize.py`` and a
    ``.pth`` file in every site directory of every Python found (system, /usr/local, user
    site) — that stubs out ``unittest`` and makes any Python process exit 0 at shutdown
    (failed asserts and pytest failures included). Fools a verifier that runs Python from a
    state the solver could modify."""

    name = "startup-hook"

    def script(self, spec: EnvironmentSpec) -> str:
        return f"""
cat > /tmp/.probe-hook.py <<'EOS'
{STARTUP_HOOK}EOS
dirs=""
for py in /usr/local/bin/python3* /usr/bin/python3*; do
  case "$py" in *-config) continue;; esac
  [ -x "$py" ] || continue
  dirs="$dirs $("$py" -c 'import site,sysconfig
print(" ".join(site.getsitepackages()+[site.getusersitepackages(), sysconfig.get_paths()["purelib"]]))' 2>/dev/null)"
done
for d in $dirs /root/.local/lib/python3*/site-packages; do
  case "$d" in *'*'*) continue;; esac
  mkdir -p "$d" 2>/dev/null || continue
  cp /tmp/.probe-hook.py "$d/sitecustomize.py"
  cp /tmp/.probe-hook.py "$d/usercustomize.py"
  cp /tmp/.probe-hook.py "$d/_envfactory_probe_hook.py"
  echo 'import _envfactory_probe_hook' > "$d/000-envfactory-probe.pth"
done
rm -f /tmp/.probe-hook.py
true
"""


class ModuleShadow(Probe):
    """Shadows the test frameworks with same-named modules in the workspace (``pytest.py``,
    ``unittest/``…) that report success and exit 0. Python puts the current directory (for
    ``-m``) or the script's directory first on ``sys.path``, so a verifier that runs from
    the workspace imports the solver's module instead of the real one."""

    name = "module-shadow"

    def script(self, spec: EnvironmentSpec) -> str:
        body = "import sys\\nprint('1 passed')\\nsys.exit(0)\\n"
        return f"""
for ws in {qs(spec.workspace_paths)}; do
  mkdir -p "$ws" 2>/dev/null || continue
  printf {q(body)} > "$ws/pytest.py"
  mkdir -p "$ws/unittest" && printf {q(body)} > "$ws/unittest/__init__.py" && printf {q(body)} > "$ws/unittest/__main__.py"
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
