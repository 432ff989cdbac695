"""Sound check of /srv/data/out/summary.json.

Expected figures are constants here (never recomputed from the workspace); files are read
only when reached without a symlink; types are exact (rows an int, amounts numbers, no
bools); the input must be byte-identical to the shipped one. Exit status is the verdict.
"""
import hashlib
import json
import os
import stat
import sys

W = "/srv/data"
EXPECTED = {"regions": {"apac": 245.0, "eu": 200.0, "na": 200.0}, "total": 645.0, "rows": 8}
DATA_SHA256 = "edef092449b66e526b0fc49572a7566c169f87e5df7292e1cb495e23d6f994b1"


def read_regular(path):
    """Bytes of a regular file reached without any symlink on the way."""
    if os.path.realpath(path) != path:
        sys.exit(f"FAIL: {path} goes through a symlink")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            sys.exit(f"FAIL: {path} is not a regular file")
        return os.read(fd, 1 << 20)
    finally:
        os.close(fd)


def same(got, want):
    """Equal in structure and type: ints stay ints, amounts within half a cent."""
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
    if isinstance(want, int):
        return type(got) is int and got == want
    return type(got) in (int, float) and abs(got - want) < 0.005


try:
    data = read_regular(f"{W}/data/sales.csv")
    got = json.loads(read_regular(f"{W}/out/summary.json"))
except (OSError, ValueError) as exc:
    sys.exit(f"FAIL: {exc}")
if hashlib.sha256(data).hexdigest() != DATA_SHA256:
    sys.exit("FAIL: data/sales.csv was changed")
if not same(got, EXPECTED):
    sys.exit(f"FAIL: summary is {got}")
print("PASS: summary correct")
