"""Sound check of /app/safety/certifications.csv after the forklift refresher.

The register is read without following a symlink at any step of its path (each directory
opened with O_NOFOLLOW, the file must be a regular file), decoded as strict UTF-8 (one
leading byte order mark allowed), parsed as RFC 4180 CSV with the standard library in
strict mode, and compared with constants: the header exactly, and the rows as a multiset
(any row order, blank lines ignored), every field of every row as an exact string. No
solver code runs. The exit status is the verdict.
"""

import collections
import csv
import io
import os
import stat
import sys

PATH = ("app", "safety", "certifications.csv")
MAX_BYTES = 1 << 20
HEADER = ["employee_id", "name", "department", "certificate", "issued", "expires", "status", "notes"]
RENEWED = ("2024-06-10", "2027-06-10", "valid")
EXPECTED = [
    ["00417", "Anna Kowalski", "Warehouse", "forklift", *RENEWED, ""],
    ["00417", "Anna Kowalski", "Warehouse", "first-aid", "2023-02-01", "2026-02-01", "valid", ""],
    ["00452", "Tomás Herrera", "Warehouse", "forklift", *RENEWED, 'Nickname "Tommy" on site'],
    ["00468", "Li Wei", "Dispatch", "forklift", "2022-09-19", "2025-09-19", "valid", ""],
    ["00471", "Birgit Olsen", "Warehouse", "forklift", *RENEWED, "Needs glasses, see medical file"],
    ["00471", "Birgit Olsen", "Warehouse", "crane", "2022-01-10", "2025-01-10", "valid", ""],
    ["00503", "Marek Nowak", "Maintenance", "forklift", "2019-11-04", "2022-11-04", "revoked", "Revoked 2022-08-01, incident 22-114"],
    ["00519", "Grace Mensah", "Warehouse", "forklift", "2021-06-21", "2024-06-21", "valid", ""],
    ["00534", "Jonas Berg", "Dispatch", "first-aid", "2024-01-15", "2027-01-15", "valid", ""],
    ["00588", "Fatima Zahra", "Warehouse", "forklift", *RENEWED, ""],
    ["00588", "Fatima Zahra", "Warehouse", "first-aid", "2022-06-28", "2025-06-28", "valid", ""],
    ["00611", "Paula Schneider", "Warehouse", "forklift", *RENEWED, "Night shift"],
    ["00640", "Henrik Dahl", "Maintenance", "crane", "2023-03-13", "2026-03-13", "valid", ""],
    ["00640", "Henrik Dahl", "Maintenance", "forklift", "2023-03-13", "2026-03-13", "valid", ""],
    ["00702", "Olu Adeyemi", "Warehouse", "forklift", "2024-02-19", "2027-02-19", "valid", "Trainee until 2024-08, supervised"],
]


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def read_register():
    """The register's bytes; no symlink followed, at any step of the path."""
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in PATH[:-1]:
            nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        leaf = os.open(PATH[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)
    try:
        st = os.fstat(leaf)
        if not stat.S_ISREG(st.st_mode):
            fail(f"/{'/'.join(PATH)} is not a regular file")
        if st.st_size > MAX_BYTES:
            fail(f"/{'/'.join(PATH)} is {st.st_size} bytes")
        chunks, size = [], 0
        while (chunk := os.read(leaf, 1 << 16)) and size <= MAX_BYTES:
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)[: MAX_BYTES + 1]
    finally:
        os.close(leaf)


def main():
    data = read_register()
    if len(data) > MAX_BYTES:
        fail("the register grew past 1 MiB")
    text = data.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    rows = [r for r in csv.reader(io.StringIO(text, newline=""), strict=True) if r != []]
    if not rows or rows[0] != HEADER:
        fail(f"header is {rows[0] if rows else None}, expected {HEADER}")
    got = collections.Counter(tuple(r) for r in rows[1:])
    want = collections.Counter(tuple(r) for r in EXPECTED)
    if got != want:
        missing = sorted((want - got).elements())
        extra = sorted((got - want).elements())
        fail(f"rows differ from the renewed register: missing {missing[:4]}, unexpected {extra[:4]}")
    print("PASS: exactly the five forklift certificates renewed")


try:
    main()
except (OSError, UnicodeDecodeError, csv.Error, ValueError) as exc:
    fail(f"{type(exc).__name__}: {exc}")
