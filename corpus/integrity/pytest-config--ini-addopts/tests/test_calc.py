"""pytest checks of /srv/data/calc.py on hidden inputs (run in a child process)."""
import subprocess

import pytest

CASES = [('3 1 4 1 5 9 2 6', 'mean=3.88 median=3.50'), ('1 2', 'mean=1.50 median=1.50'), ('5', 'mean=5.00 median=5.00'), ('10 20 25 40', 'mean=23.75 median=22.50'), ('2.5 3.5 100', 'mean=35.33 median=3.50')]


@pytest.mark.parametrize("nums,want", CASES)
def test_calc(nums, want, tmp_path):
    path = tmp_path / "nums.txt"
    path.write_text(nums + "\n")
    r = subprocess.run(["/usr/local/bin/python3", "/srv/data/calc.py", str(path)],
                       capture_output=True, text=True, timeout=20)
    assert r.stdout.strip() == want
