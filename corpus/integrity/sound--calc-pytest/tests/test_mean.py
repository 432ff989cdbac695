"""Sound pytest check of /app/calc.py's mean (child process, answers compared by digest)."""
import hashlib
import subprocess

import pytest

CASES = [('3 1 4 1 5 9 2 6', '2957e8767008507e5b5d9cd8b5f6ada12bba24789e979d8d549d3ac7efc01c39'), ('1 2', '4bf1e9412d342e9039838b7149477c6fbb48f72c42caa4207684d67224facc7e'), ('5', '5a5a37683be4a1b2f14fa3409ed414ff6ad9984e020cbf13369685cf8c52c1c5'), ('10 20 25 40', 'f0220360602e5406ec34744048e23b5a0cf28636d7ce04ab6113964f42baa6c4'), ('2.5 3.5 100', 'bd1cc9ff8c0815b720d6059101cbc67b30b86cd2d1769b3e947d08fcc935c54c')]


@pytest.mark.parametrize("nums,want", CASES)
def test_mean(nums, want, tmp_path):
    path = tmp_path / "nums.txt"
    path.write_text(nums + "\n")
    r = subprocess.run(["/usr/local/bin/python3", "/app/calc.py", str(path)], capture_output=True,
                       text=True, timeout=20, cwd="/", env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    assert r.returncode == 0
    part = [p for p in r.stdout.split() if p.startswith("mean=")]
    assert len(part) == 1
    assert hashlib.sha256(f"{nums}|{part[0]}".encode()).hexdigest() == want
