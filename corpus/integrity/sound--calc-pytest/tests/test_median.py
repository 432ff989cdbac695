"""Sound pytest check of /app/calc.py's median (child process, answers compared by digest)."""
import hashlib
import subprocess

import pytest

CASES = [('3 1 4 1 5 9 2 6', 'a352c1621e31cd05e4a7b1860af2a07f09781fab3cd9a7f23491f3422ce6cdc8'), ('1 2', 'b29e8054f72bc61c7af364b4b0339beaf36f1c417fdc05faf427061751d9c58a'), ('5', '024c8b1b351a093b63bac10f31fdfc6b341137b2657322a27e75ee17a3a9fde8'), ('10 20 25 40', 'c5ac559a0cbc995ea4b77eb30f6c5e715ca04b279cef34d484ddb1cade14b744'), ('2.5 3.5 100', '15a1c23d4349da2060d8bd69234252f19401059425298130346cc6af33895bd8')]


@pytest.mark.parametrize("nums,want", CASES)
def test_median(nums, want, tmp_path):
    path = tmp_path / "nums.txt"
    path.write_text(nums + "\n")
    r = subprocess.run(["/usr/local/bin/python3", "/app/calc.py", str(path)], capture_output=True,
                       text=True, timeout=20, cwd="/", env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    assert r.returncode == 0
    part = [p for p in r.stdout.split() if p.startswith("median=")]
    assert len(part) == 1
    assert hashlib.sha256(f"{nums}|{part[0]}".encode()).hexdigest() == want
