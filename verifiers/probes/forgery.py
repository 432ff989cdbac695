"""The code under test forges the test runner's verdict from inside the runner's process.

A verifier that imports the solver's modules into the process that runs the tests (pytest
or unittest collecting tests that `import` the workspace's code, a mined environment's
`check.py` before its guard) hands the solver's code the whole interpreter: whatever that
process later reports — test reports, a JUnit file, its exit status — the solver's code
can rewrite. `InProcessForgery` plants such a payload at the end of the workspace's own
Python modules (the code under test, never its tests) on the untouched state.
"""

from __future__ import annotations

from envfactory.core.models import EnvironmentSpec

from .base import Probe, premise_path, q, qs

#: how many of the workspace's modules get the payload (a large repository's are many)
MAX_MODULES = 2000

#: Appended to each module. It runs once per process, when the module is first imported,
#: and forges what the runners loaded there: pytest's `Function.runtest` (tests never run)
#: and `TestReport` (a failed report turned into a pass), unittest's `TestCase.run` (every
#: test a success), and at exit a rewritten JUnit file and status 0 (`os._exit`). It then
#: appends what it forged to the premise file, the evidence that it ran.
PAYLOAD = """

def _envfactory_probe_forge():
    import sys
    if getattr(sys, "_envfactory_probe_forged", False):
        return
    sys._envfactory_probe_forged = True
    done = []
    if "_pytest" in sys.modules:
        try:
            import _pytest.python
            import _pytest.reports

            _pytest.python.Function.runtest = lambda self: None
            init = _pytest.reports.TestReport.__init__

            def passed_init(self, *args, **kwargs):
                init(self, *args, **kwargs)
                if self.outcome == "failed":
                    self.outcome, self.longrepr = "passed", None

            _pytest.reports.TestReport.__init__ = passed_init
            done.append("pytest")
        except Exception:
            pass
    if "unittest" in sys.modules:
        import unittest

        def run(self, result=None):
            if result is not None:
                result.startTest(self)
                result.addSuccess(self)
                result.stopTest(self)
            return result

        unittest.TestCase.run = run
        unittest.TestCase.__call__ = run
        done.append("unittest")

    def at_exit():
        import os
        import re

        args = sys.argv
        for i, a in enumerate(args):
            path = None
            if a in ("--junitxml", "--junit-xml") and i + 1 < len(args):
                path = args[i + 1]
            elif a.startswith(("--junitxml=", "--junit-xml=")):
                path = a.split("=", 1)[1]
            if path and os.path.isfile(path):
                text = open(path, encoding="utf-8").read()
                text = re.sub(r"<(failure|error)\\b.*?(/>|</\\1>)", "", text, flags=re.S)
                text = re.sub(r'\\b(failures|errors)="\\d+"', r'\\1="0"', text)
                open(path, "w", encoding="utf-8").write(text)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(0)

    import atexit

    atexit.register(at_exit)
    done.append("exit")
    try:
        with open(PREMISE, "a") as f:
            f.write(" ".join(done) + " " + str(globals().get("__file__")) + "\\n")
    except OSError:
        pass


_envfactory_probe_forge()
"""


class InProcessForgery(Probe):
    """Applied to the untouched state: appends to every Python module of the workspace
    (the code under test; test files, ``conftest.py``, test directories, ``.git`` and
    installed packages left alone) a payload that forges the verdict of the test runner
    that imports it — pytest's ``Function.runtest`` replaced (no test body runs) and every
    failed ``TestReport`` turned into a pass, ``unittest.TestCase.run`` recording a success,
    and at exit any JUnit file on the command line stripped of its failures and the
    process ended with status 0. Fools a verifier that runs the tests in the same process
    as the solver's modules and trusts what that process reports.

    Premise, checked in the run: the payload was loaded by a process of the verification
    (it appends what it forged and the module's path to `premise_file` when it runs). When
    no verification loaded it, the verifier never imported the solver's code — it read
    files or ran programs that are not Python modules of the workspace — so a 1 proves
    nothing about in-process forgery and the row is not applicable. A verifier that loads
    it and still gives 0 kept its verdict out of the payload's reach."""

    name = "in-process-forgery"
    premise_file = premise_path(name)
    premise_unmet = "no process of the verification imported a Python module of the workspace"
    noop_only = True

    def script(self, spec: EnvironmentSpec) -> str:
        payload = PAYLOAD.replace("PREMISE", repr(self.premise_file))
        return f"""
cat > /tmp/.probe-forgery.py <<'EOS'
{payload}EOS
for ws in {qs(spec.workspace_paths)}; do
  [ -d "$ws" ] || continue
  find "$ws" -xdev \\( -name .git -o -name node_modules -o -name site-packages \\
      -o -name .venv -o -name venv -o -name tests -o -name test -o -name testing \\
      -o -name __pycache__ \\) -prune -o -type f -name '*.py' -print 2>/dev/null |
  grep -v -e '/test_[^/]*\\.py$' -e '_test\\.py$' -e '/tests\\.py$' -e '/conftest\\.py$' |
  head -n {MAX_MODULES} | while IFS= read -r f; do
    cat /tmp/.probe-forgery.py >> "$f"
  done
done
rm -f /tmp/.probe-forgery.py {q(str(self.premise_file))}
true
"""
