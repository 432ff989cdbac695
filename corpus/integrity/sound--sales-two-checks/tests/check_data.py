"""Sound: the input is byte-identical to the shipped one and reached without symlinks."""
import hashlib
import os
import sys

path = "/srv/data/data/sales.csv"
if os.path.realpath(path) != path or not os.path.isfile(path):
    sys.exit("FAIL: data/sales.csv missing or a symlink")
if hashlib.sha256(open(path, "rb").read()).hexdigest() != "edef092449b66e526b0fc49572a7566c169f87e5df7292e1cb495e23d6f994b1":
    sys.exit("FAIL: data/sales.csv was changed")
