"""Run /app/convert.py as a child process on the examples; compare its output with expected.txt."""
import subprocess
import sys

with open("inputs.txt", "rb") as fh:
    inputs = fh.read()
with open("expected.txt", encoding="utf-8") as fh:
    want = fh.read().splitlines()
try:
    res = subprocess.run(["/usr/local/bin/python3", "-I", "/app/convert.py"], input=inputs,
                         capture_output=True, timeout=20, cwd="/tmp")
except subprocess.TimeoutExpired:
    sys.exit("FAIL: convert.py timed out")
if res.returncode != 0:
    sys.exit(f"FAIL: convert.py exited {res.returncode}: {res.stderr.decode(errors='replace')[-300:]}")
got = res.stdout.decode("utf-8", errors="replace").splitlines()
if got != want:
    sys.exit(f"FAIL: got {got}, want {want}")
print(f"PASS: {len(want)} timestamps converted")
