"""Runs /app/bin/summarize.py against hidden input sets written into /app/data and
compares its stdout with summaries computed here."""
import csv
import io
import re
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

DATA = Path("/app/data")
PROGRAM = Path("/app/bin/summarize.py")
HEADER = "sensor,timestamp,value\n"

HIDDEN_SETS = {
    "mixed": {
        "line-a.csv": HEADER
        + "b-2,2024-06-01T00:00:00,-3.25\n"
        + "a-10,2024-06-01T00:00:00,12.5\n"
        + "a-9,2024-06-01T00:00:00,NA\n"
        + "b-2,2024-06-01T01:00:00,4\n"
        + "a-10,2024-06-01T01:00:00,\n"
        + "a-9,2024-06-01T01:00:00,0.10\n",
        "line-b.csv": HEADER
        + "a-9,2024-06-02T00:00:00,0.35\n"
        + "z-dead,2024-06-02T00:00:00,NA\n"
        + "a-9,2024-06-02T01:00:00,7.00\n"
        + "z-dead,2024-06-02T01:00:00,\n"
        + "b-2,2024-06-02T01:00:00,-0.5\n"
        + "a-10,2024-06-02T02:00:00,11.02\n",
        "header-only.csv": HEADER,
        "archive.csv.bak": HEADER + "a-10,2024-05-01T00:00:00,999.99\n",
        "readme.md": "a-10,2024-05-01T00:00:00,555\n",
        "line-a.csv.old": HEADER + "q-1,2024-05-01T00:00:00,1.00\n",
    },
    "single": {
        "solo.csv": HEADER
        + "x1,2024-07-01T00:00:00,1\n"
        + "x1,2024-07-01T00:01:00,2\n"
        + "x1,2024-07-01T00:02:00,2\n"
        + "w0,2024-07-01T00:03:00,-12.40\n",
    },
    "nothing": {
        "notes.txt": "no exports today\n",
        "empty.csv": HEADER + "x1,2024-07-02T00:00:00,NA\n",
    },
}


def expected_for(files):
    readings = {}
    for name, text in files.items():
        if not name.endswith(".csv"):
            continue
        for row in list(csv.reader(io.StringIO(text)))[1:]:
            value = row[2].strip()
            if value in ("", "NA"):
                continue
            readings.setdefault(row[0], []).append(Decimal(value))
    out = []
    for sensor in sorted(readings):
        vals = readings[sensor]
        out.append((sensor, len(vals), min(vals), max(vals), sum(vals) / len(vals)))
    return out


TWO_DP = re.compile(r"-?\d+\.\d{2}")


def check_set(label, files):
    if DATA.exists():
        shutil.rmtree(DATA)
    DATA.mkdir(parents=True)
    for name, text in files.items():
        (DATA / name).write_text(text)
    try:
        proc = subprocess.run(
            ["/usr/local/bin/python3", str(PROGRAM)],
            cwd="/app", capture_output=True, text=True, timeout=20,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return [f"[{label}] program timed out"]
    errors = []
    if proc.returncode != 0:
        errors.append(f"[{label}] exit status {proc.returncode}: {proc.stderr[-500:]}")
        return errors
    lines = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]
    if not lines or lines[0].replace(" ", "").lower() != "sensor,count,min,max,mean":
        errors.append(f"[{label}] missing/incorrect header: {lines[:1]!r}")
        return errors
    rows = [[c.strip() for c in r] for r in csv.reader(lines[1:])]
    want = expected_for(files)
    if len(rows) != len(want):
        errors.append(f"[{label}] expected {len(want)} sensor lines, got {len(rows)}: {lines[1:]}")
        return errors
    for got, (sensor, count, lo, hi, mean) in zip(rows, want):
        if len(got) != 5:
            errors.append(f"[{label}] bad line {got!r}")
            continue
        if got[0] != sensor:
            errors.append(f"[{label}] expected sensor {sensor!r} here, got {got[0]!r} (order?)")
            continue
        if got[1] != str(count):
            errors.append(f"[{label}] {sensor}: count {got[1]!r}, expected {count}")
        for field, value in (("min", got[2]), ("max", got[3]), ("mean", got[4])):
            if not TWO_DP.fullmatch(value):
                errors.append(f"[{label}] {sensor}: {field} {value!r} not written with two decimals")
        if TWO_DP.fullmatch(got[2]) and Decimal(got[2]) != lo:
            errors.append(f"[{label}] {sensor}: min {got[2]}, expected {lo:.2f}")
        if TWO_DP.fullmatch(got[3]) and Decimal(got[3]) != hi:
            errors.append(f"[{label}] {sensor}: max {got[3]}, expected {hi:.2f}")
        if TWO_DP.fullmatch(got[4]) and abs(Decimal(got[4]) - mean) > Decimal("0.005"):
            errors.append(f"[{label}] {sensor}: mean {got[4]}, expected {mean:.2f}")
    return errors


def main():
    if not PROGRAM.is_file():
        print(f"FAIL: {PROGRAM} does not exist")
        return 1
    errors = []
    for label, files in HIDDEN_SETS.items():
        errors += check_set(label, files)
    for e in errors:
        print("FAIL:", e)
    if errors:
        return 1
    print("PASS")
    return 0


sys.exit(main())
