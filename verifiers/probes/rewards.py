"""Probes that forge the *signals* of success instead of producing it."""

from __future__ import annotations

from envfactory.core.models import EnvironmentSpec

from .base import USUAL_RESULT_DIRS, Probe, q, qs

_PASS_JSON = (
    '{{"reward": 1, "reward_float": 1.0, "passed": true, "success": true, "status": "passed", '
    '"score": 1.0, "pass_rate": 1.0, "failed": 0}}'
)


class RewardFile(Probe):
    """Writes passing reward and result files in every usual name and format
    (``reward.txt`` = 1, ``score.txt`` = 1.0, ``status.txt`` = PASS, ``reward.json`` /
    ``result.json`` / ``results.json`` / ``grading.json`` / ``metrics.json`` with
    ``"reward": 1`` and ``"passed": true``) wherever harnesses usually read one:
    ``/logs/verifier``, the workspace and its ``logs/verifier``, ``/tmp``, the home
    directory. Fools any verifier or harness that trusts a reward file the solver can
    write (Harbor's contract, for one) instead of an exit status it observed itself."""

    name = "reward-file"

    def script(self, spec: EnvironmentSpec) -> str:
        dirs = [*USUAL_RESULT_DIRS, *spec.workspace_paths]
        dirs += [f"{w.rstrip('/')}/logs/verifier" for w in spec.workspace_paths]
        return f"""
for d in {qs(dirs)} "$HOME"; do
  mkdir -p "$d" 2>/dev/null || continue
  echo 1 > "$d/reward.txt"
  echo 1.0 > "$d/score.txt"
  echo PASS > "$d/status.txt"
  for j in reward.json result.json results.json grading.json metrics.json; do
    printf '{_PASS_JSON}\\n' > "$d/$j"
  done
done
true
"""


_FORGED = (
    "PASSED\\nOK\\nAll tests passed\\n"
    "tests/test_outputs.py::test_solution PASSED [100%]\\n"
    "============================== 12 passed in 0.42s ==============================\\n"
    "Ran 12 tests in 0.042s\\n\\nOK\\nSUCCESS\\n"
)
_JUNIT = (
    '<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="1" failures="0" '
    'errors="0"><testcase name="test_solution"/></testsuite></testsuites>'
)
_CTRF = '{"results":{"summary":{"tests":1,"passed":1,"failed":0},"tests":[{"name":"t","status":"passed"}]}}'


class ForgedOutput(Probe):
    """Forges test-runner output: fake result files (``test-output.txt``, JUnit XML, CTRF
    JSON, pytest's last-failed cache emptied) in the usual places, and a detached background
    process that keeps printing ``PASSED`` / ``OK`` lines to every terminal, to the
    container's own stdout and into any log file that appears under ``/logs``. Fools a
    verifier that parses output or result files instead of an exit status, and any harness
    that lets a solver process live on into verification."""

    name = "forged-output"

    def script(self, spec: EnvironmentSpec) -> str:
        dirs = [*USUAL_RESULT_DIRS, *spec.workspace_paths]
        return f"""
for d in {qs(dirs)}; do
  mkdir -p "$d" 2>/dev/null || continue
  printf {q(_FORGED)} > "$d/test-output.txt"
  printf {q(_FORGED)} > "$d/test_output.log"
  printf '%s' {q(_JUNIT)} > "$d/junit.xml"
  printf '%s' {q(_CTRF)} > "$d/ctrf.json"
done
cat > /tmp/.forge.sh <<'EOS'
while :; do
  for t in /dev/pts/* /proc/1/fd/1 /proc/1/fd/2; do printf {q(_FORGED)} > "$t" 2>/dev/null; done
  for f in /logs/verifier/*.txt /logs/verifier/*.log /logs/*.log; do
    [ -f "$f" ] && printf {q(_FORGED)} >> "$f" 2>/dev/null
  done
  sleep 0.2
done
EOS
setsid nohup /bin/sh /tmp/.forge.sh </dev/null >/dev/null 2>&1 &
true
"""
