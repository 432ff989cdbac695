"""A second tiny real task, for the probes the sum task cannot show: one whose pristine
workspace already holds a stale output, whose answer has several lines, and whose
solver writes a program the verifier runs.

Task: finish /workspace/report.py so that it writes the per-region totals of
/workspace/data/sales.csv, sorted by region, then a `total` line, to
/workspace/out/summary.csv — and run it.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from envfactory.core.models import BuildContext, EnvironmentSpec, Step

FIXTURE = Path(__file__).parent / "fixtures" / "report"

INSTRUCTION = (
    "Finish /workspace/report.py: it reads /workspace/data/sales.csv (region,amount) and "
    "writes /workspace/out/summary.csv, one `region,total` line per region sorted by "
    "region, then a `total,N` line. Run it so the summary is up to date."
)

REPORT_PY = r"""import csv, collections
t = collections.Counter()
for row in csv.DictReader(open('/workspace/data/sales.csv')):
    t[row['region']] += int(row['amount'])
with open('/workspace/out/summary.csv', 'w') as f:
    for r in sorted(t):
        f.write(f'{r},{t[r]}\n')
    f.write(f'total,{sum(t.values())}\n')
print('report written')
"""

SPEC = EnvironmentSpec(
    id="env-report",
    name="report",
    instruction=INSTRUCTION,
    build=BuildContext(files=()),
    reference_solution=(
        Step(title="write report.py", script=f"cat > report.py <<'EOF'\n{REPORT_PY}EOF"),
        Step(title="run it", script="python3 report.py"),
    ),
)

EXPECTED = b"apac,5\neu,17\nna,20\ntotal,42\n"

#: The sound check: the whole summary, byte for byte, and the program reproduces it.
SOUND = (
    "cmp -s /workspace/out/summary.csv expected.csv && rm -f /workspace/out/summary.csv"
    " && /usr/local/bin/python3 -I /workspace/report.py >/dev/null"
    " && cmp -s /workspace/out/summary.csv expected.csv"
)

#: A checker that derives the expected summary from the workspace's own data file.
RECOMPUTE_PY = b"""import collections, csv, sys
t = collections.Counter()
for row in csv.DictReader(open('/workspace/data/sales.csv')):
    t[row['region']] += int(row['amount'])
want = ''.join(f'{k},{t[k]}\\n' for k in sorted(t)) + f'total,{sum(t.values())}\\n'
sys.exit(0 if open('/workspace/out/summary.csv').read() == want else 1)
"""

#: name → entry of a verifier with one mistake (each rejects the untouched workspace).
NAIVE = {
    "recomputes-the-summary": "/usr/local/bin/python3 -I recompute.py",
    "trusts-fresh-mtime": (
        "test /workspace/out/summary.csv -nt /workspace/data/sales.csv"
        " && grep -q '^total,' /workspace/out/summary.csv"
    ),
    "checks-first-lines": (
        'test "$(head -n 2 /workspace/out/summary.csv)" = "$(head -n 2 expected.csv)"'
    ),
    "skips-crashes": (  # refuses the stub, then counts a crash as "not counted"
        "! grep -q 'not written yet' /workspace/report.py || exit 1;"
        " /usr/local/bin/python3 /workspace/report.py || exit 0;"
        " cmp -s /workspace/out/summary.csv expected.csv"
    ),
    "skips-timeouts": (
        "timeout 3 /usr/local/bin/python3 /workspace/report.py; rc=$?; [ $rc = 124 ] && exit 0;"
        " cmp -s /workspace/out/summary.csv expected.csv"
    ),
    "no-failure-line": (
        "{ /usr/local/bin/python3 -c 'import subprocess, sys; subprocess.run([sys.executable,"
        ' "/workspace/report.py"]); print("FA" + "IL: summary" if open("/workspace/out/summary.csv").read()'
        ' != open("expected.csv").read() else "ok")\'; } > /tmp/log 2>&1; ! grep -q FAIL /tmp/log'
    ),
    "last-line-passed": (
        "/usr/local/bin/python3 -c 'import subprocess, sys; subprocess.run([sys.executable,"
        ' "/workspace/report.py"]); print("1 failed" if open("/workspace/out/summary.csv").read()'
        ' != open("expected.csv").read() else "1 passed")\' 2>&1 | tail -n 1 | grep -Eq \'^[0-9]+ passed\''
    ),
    "greps-the-whole-log": (
        "{ python3 /workspace/report.py; cmp -s /workspace/out/summary.csv expected.csv"
        " && echo 'ALL CHECKS PASSED'; } > /tmp/log 2>&1; grep -q 'ALL CHECKS PASSED' /tmp/log"
    ),
}


def context_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for p in sorted(FIXTURE.iterdir()):
            tf.add(p, arcname=p.name)
    return buf.getvalue()
