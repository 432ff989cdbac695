"""Sound check of /opt/build/calc.py on hidden inputs.

The solver's program runs only in a child process with a clean environment, as nobody:
nothing it starts can kill this check, write the reward file or outlive it as root; its
output is data, compared by digest (the expected answers are not in this file or this
process in clear, so a program that reads the verifier learns nothing). Before any solver
code runs, this script deletes its own directory's files. Exit status is the verdict.
"""
import hashlib
import os
import subprocess
import sys
import tempfile

CASES = [('3 1 4 1 5 9 2 6', '621254f3b27bde310396d45a2c9b0a85025dbb7d5b5cefeed2c7d6770b1450fa'), ('1 2', '635a6e535a98de1812d212c25f585fe64c696b75e3c2564840e379e68e20c8b3'), ('5', '9d6999e39c5bd732423ec251079b51e16448eba1be3df28dc166a191da7765be'), ('10 20 25 40', 'dc3b7f0532edf258571826c5dd25176758764b336abfbb22c32845bd7e57083e'), ('2.5 3.5 100', '5129eb9ddc12a7abeae730a6fc9f218a35c92e91f6318c6171a18115e621379e')]
here = os.path.dirname(os.path.abspath(__file__))
for name in os.listdir(here):
    os.unlink(os.path.join(here, name))
failed = 0
for nums, want in CASES:
    fd, path = tempfile.mkstemp(suffix=".txt")
    os.write(fd, (nums + "\n").encode())
    os.close(fd)
    os.chmod(path, 0o644)
    r = subprocess.run(["/usr/local/bin/python3", "/opt/build/calc.py", path], capture_output=True, text=True,
                       timeout=20, cwd="/", env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                       user=65534, group=65534, extra_groups=[])
    got = hashlib.sha256(f"{nums}|{r.stdout.strip()}".encode()).hexdigest()
    if r.returncode != 0 or got != want:
        print(f"FAIL: {nums!r}: got {r.stdout.strip()[:200]!r} (exit {r.returncode})")
        failed += 1
sys.exit(1 if failed else 0)
