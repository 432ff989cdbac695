"""Run /opt/build/calc.py on hidden inputs in a child process and compare its answers."""
import os
import subprocess
import sys
import tempfile

CASES = [('3 1 4 1 5 9 2 6', 'mean=3.88 median=3.50'), ('1 2', 'mean=1.50 median=1.50'), ('5', 'mean=5.00 median=5.00'), ('10 20 25 40', 'mean=23.75 median=22.50'), ('2.5 3.5 100', 'mean=35.33 median=3.50')]
failed = 0
for nums, want in CASES:
    fd, path = tempfile.mkstemp(suffix=".txt")
    os.write(fd, (nums + "\n").encode())
    os.close(fd)
    os.chmod(path, 0o644)
    r = subprocess.run(["/usr/local/bin/python3", "/opt/build/calc.py", path], capture_output=True, text=True, timeout=20)
    got = r.stdout.strip()
    if r.returncode != 0 or got != want:
        print(f"FAIL: {nums!r}: expected {want!r}, got {got!r}")
        failed += 1
    else:
        print(f"ok: {nums!r}")
print("ALL CHECKS PASSED" if not failed else f"{failed} case(s) FAILED")
sys.exit(1 if failed else 0)
