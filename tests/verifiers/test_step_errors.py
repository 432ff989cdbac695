"""The ERR trap a reference step runs under (`verifiers.step_errors`): it names each
command that failed inside a step that went on, and changes nothing the step does."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from envfactory.core.models import ExecResult
from verifiers.step_errors import MARK, failed_commands, read_marks, traced

STEP = """\
mkdir -p out
python3 -c 'from json import no_such_name' > out/total.txt
grep -q absent /dev/null || echo tolerated
captured=$(ls /no-such-dir 2>&1; echo end)
echo "captured: $captured"
if false; then :; fi
exec 2>err.log
cat /no-such-file
echo done
"""


def _bash(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True)


def test_each_failing_command_of_a_step_that_ran_through_is_named_with_its_status(
    tmp_path: Path,
) -> None:
    (tmp_path / "plain").mkdir()
    plain = _bash(STEP, tmp_path / "plain")
    (tmp_path / "traced").mkdir()
    res = _bash(traced(STEP), tmp_path / "traced")
    # the step does what it did untraced: same status, output, files
    assert (res.returncode, res.stdout) == (plain.returncode, plain.stdout)
    assert res.returncode == 0
    assert "captured: ls: cannot access" in res.stdout and MARK not in res.stdout
    for name in ("err.log", "out/total.txt"):
        assert (tmp_path / "traced" / name).read_text() == (tmp_path / "plain" / name).read_text()
    assert MARK not in (tmp_path / "traced" / "err.log").read_text()
    kept, failed = read_marks(res.stderr)
    # once the step sent its stderr to a file, no marker is written (not there either)
    assert failed == [(1, "python3 -c 'from json import no_such_name' > out/total.txt")]
    assert "ImportError" in kept and MARK not in kept
    found = failed_commands(
        ExecResult(exit_code=0, stdout=res.stdout, stderr=res.stderr), 2, "total"
    )
    assert [(f.step, f.title, f.exit_code) for f in found] == [(2, "total", 1)]
    assert "ImportError" in found[0].output and MARK not in found[0].output


def test_a_service_the_step_leaves_running_does_not_hold_its_output_open(tmp_path: Path) -> None:
    """Regression: a descriptor of the trap's own, inherited by a background loop, kept the
    step's stderr pipe open until that loop ended."""
    script = traced(
        "while sleep 1; do :; done >/dev/null 2>&1 &\necho $! > loop.pid\nfalse\necho ok"
    )
    try:
        res = subprocess.run(
            ["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=20
        )
    finally:
        os.kill(int((tmp_path / "loop.pid").read_text()), signal.SIGKILL)
    assert res.stdout == "ok\n" and read_marks(res.stderr)[1] == [(1, "false")]


def test_a_step_with_no_failing_command_reports_none(tmp_path: Path) -> None:
    res = _bash(traced("true\nfalse || true\necho ok"), tmp_path)
    assert read_marks(res.stderr) == ("", [])
