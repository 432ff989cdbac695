"""Sound check of /app/bin/report.js on the given orders and on hidden ones.

Before any solver code runs, this script deletes its own directory's files. The report
runs only in a child process (/usr/bin/node, absolute) as nobody with a clean environment
and a timeout; every process nobody still has afterwards is killed. Its standard output is
data: parsed here as RFC 4180 CSV with the standard library, compared row by row with
constants. The exit status is the verdict.
"""

import csv
import hashlib
import io
import os
import stat
import subprocess
import sys
import tempfile

NOBODY = 65534
UNCHANGED = {
    "/app/data/orders.json": "43a641a6cb6b6cabad5e93c2229356096cf009be3f70a7b63d36b0337dfcfcb1",
    "/app/node_modules/csv-lite/index.js": "5d6c38f5eefe35527d251b6069a1c605fbe2ff3120e1e6c012e7818a56f9cba8",
    "/app/node_modules/csv-lite/package.json": "79a208c825b985152a7cbc178708142e19b3306fa848ed7783c64fdbba6a2138",
}
HEADER = ["customer", "orders", "total"]
HIDDEN_A = """[
 {"id": 1, "customer": "Zeta \\"Z\\" Ltd", "amount": "10.05"},
 {"id": 2, "customer": "Alpha, North", "amount": "0.10"},
 {"id": 3, "customer": "Alpha, North", "amount": "0.20"},
 {"id": 4, "customer": "Zeta \\"Z\\" Ltd", "amount": "0.25"},
 {"id": 5, "customer": "Mira", "amount": "10.30"},
 {"id": 6, "customer": "Alpha, North", "amount": "9999.99"},
 {"id": 7, "customer": "Bo", "amount": "0.30"},
 {"id": 8, "customer": "mira", "amount": "10.30"},
 {"id": 9, "customer": "Line\\nBreak", "amount": "0.01"}
]"""
HIDDEN_B = """[
 {"id": 10, "customer": "Solo", "amount": "0.07"},
 {"id": 11, "customer": "Solo", "amount": "0.07"},
 {"id": 12, "customer": "Solo", "amount": "0.07"},
 {"id": 13, "customer": "Big", "amount": "45035996273704.96"},
 {"id": 14, "customer": "Big", "amount": "0.01"}
]"""
CASES = [
    ("given", None, [
        ["Birch & Co", "1", "250.50"],
        ["Nordlys AS", "3", "120.30"],
        ["Acme, Inc.", "2", "120.00"],
    ]),
    ("hidden A", HIDDEN_A, [
        ["Alpha, North", "3", "10000.29"],
        ["Mira", "1", "10.30"],
        ["Zeta \"Z\" Ltd", "2", "10.30"],
        ["mira", "1", "10.30"],
        ["Bo", "1", "0.30"],
        ["Line\nBreak", "1", "0.01"],
    ]),
    ("hidden B", HIDDEN_B, [
        ["Big", "2", "45035996273704.97"],
        ["Solo", "3", "0.21"],
    ]),
]


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def read_regular(path):
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            fail(f"{path} is not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def as_nobody(argv, cwd):
    try:
        res = subprocess.run(argv, cwd=cwd, env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8"},
                             user=NOBODY, group=NOBODY, extra_groups=[], capture_output=True, timeout=30)
        out = (res.returncode, res.stdout)
    except subprocess.TimeoutExpired:
        out = ("timeout", b"")
    for _ in range(2):  # whatever nobody still runs ends here
        subprocess.run(["/bin/kill", "-9", "-1"], user=NOBODY, group=NOBODY, extra_groups=[],
                       env={"PATH": "/usr/bin:/bin"}, capture_output=True, timeout=10)
    return out


def rows_of(stdout):
    text = stdout.decode("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    if any(row == [] for row in rows):
        fail("blank line in the report")
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name in os.listdir(here):
        os.unlink(os.path.join(here, name))
    for path, digest in UNCHANGED.items():
        if hashlib.sha256(read_regular(path)).hexdigest() != digest:
            fail(f"{path} was changed")
    tmp = tempfile.mkdtemp(prefix="orders-")
    os.chmod(tmp, 0o755)
    failed = 0
    for label, data, want in CASES:
        path = "/app/data/orders.json"
        if data is not None:
            path = os.path.join(tmp, label.replace(" ", "-") + ".json")
            with open(path, "x") as fh:
                fh.write(data)
            os.chmod(path, 0o644)
        code, out = as_nobody(["/usr/bin/node", "/app/bin/report.js", path], "/app")
        got = rows_of(out) if code == 0 else None
        if got != [HEADER, *want]:
            print(f"FAIL: {label}: exit {code}, rows {str(got)[:400]}")
            failed += 1
    sys.exit(1 if failed else 0)


try:
    main()
except (OSError, ValueError, UnicodeDecodeError, csv.Error, subprocess.SubprocessError) as exc:
    fail(f"{type(exc).__name__}: {exc}")
