"""The project's own tests of calc.py."""
import os
import subprocess
import tempfile
import unittest

CASES = [('3 1 4 1 5 9 2 6', 'mean=3.88 median=3.50'), ('1 2', 'mean=1.50 median=1.50'), ('5', 'mean=5.00 median=5.00'), ('10 20 25 40', 'mean=23.75 median=22.50'), ('2.5 3.5 100', 'mean=35.33 median=3.50')]


class CalcTest(unittest.TestCase):
    def test_cases(self):
        for nums, want in CASES:
            with self.subTest(nums=nums):
                fd, path = tempfile.mkstemp()
                os.write(fd, (nums + "\n").encode())
                os.close(fd)
                r = subprocess.run(["/usr/local/bin/python3", "/app/calc.py", path],
                                   capture_output=True, text=True, timeout=20)
                self.assertEqual(r.stdout.strip(), want)
