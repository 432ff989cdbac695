"""Compare calc.py with the project's reference implementation on hidden inputs."""
import os
import subprocess
import sys
import tempfile

CASES = ["3 1 4 1 5 9 2 6", "1 2", "5", "10 20 25 40", "2.5 3.5 100"]


def run(script, path):
    return subprocess.run(["/usr/local/bin/python3", script, path], capture_output=True, text=True, timeout=20)


failed = 0
for nums in CASES:
    fd, path = tempfile.mkstemp(suffix=".txt")
    os.write(fd, (nums + "\n").encode())
    os.close(fd)
    want = run("/opt/build/reference/stats_ref.py", path).stdout.strip()
    got = run("/opt/build/calc.py", path)
    if got.returncode != 0 or not want or got.stdout.strip() != want:
        print(f"FAIL: {nums!r}: expected {want!r}, got {got.stdout.strip()!r}")
        failed += 1
sys.exit(1 if failed else 0)
