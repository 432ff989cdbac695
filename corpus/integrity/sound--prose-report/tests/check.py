"""Sound check of /app/out/cost-report.md, a free-text report.

The expected figures and the task's own numbers are constants here (never recomputed from
the workspace); the report is read only as a regular file reached without a symlink, as
strict UTF-8. Every criterion is checked: the account id and the price list version are
cited, each expected amount stands in the sentence that names it, and no number appears that
is neither an expected amount nor one the task gave. The inputs must be byte-identical to the
shipped ones. Exit status is the verdict.
"""
import hashlib
import os
import re
import stat
import sys

W = "/app"
REPORT = f"{W}/out/cost-report.md"
TOTAL, TOP_SERVICE, TOP_COST = "387.91", "compute", "195.12"
OTHER_SERVICES = ("gpu", "storage", "egress")
# every number of the instruction and the data files: a report may cite these
GIVEN = {"0.05", "0.12", "0.48", "01", "03", "150.75", "2.4", "2.75", "2026", "24", "310.5",
         "41.2", "720", "8.8", "80417", "96"}
DATA_SHA256 = {
    "data/account.txt": "3910ce0fc4a64d7991bc8cf1a1a4aefa624f1861eafaad3e5464158e84da18aa",
    "data/pricelist.txt": "2f50b7fd798a78cfa1e8c1c5bcb77527e974f4f6fa7b3e6a956f1b163c422740",
    "data/usage.csv": "1babbb6349f8e0dbdc7d0a4a2cb060e23f9798a37d9cdd862da6d310829c6fc9",
}
NUMBER = re.compile(r"\d+(?:\.\d+)*")
AMOUNT = re.compile(r"(\d+(?:\.\d+)*)\s*USD\b")


def read_regular(path, limit=1 << 20):
    """Bytes of a regular file reached without any symlink on the way, at most `limit`."""
    if os.path.realpath(path) != path:
        sys.exit(f"FAIL: {path} goes through a symlink")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            sys.exit(f"FAIL: {path} is not a regular file")
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        sys.exit(f"FAIL: {path} is larger than {limit} bytes")
    return data


def first_amount_after(sentence, word):
    """The first `<amount> USD` after `word` in the sentence, or None."""
    m = AMOUNT.search(sentence, sentence.lower().index(word))
    return m.group(1) if m else None


def has_word(sentence, word):
    return re.search(rf"\b{word}\b", sentence, re.IGNORECASE) is not None


try:
    data = {rel: read_regular(f"{W}/{rel}") for rel in DATA_SHA256}
    text = read_regular(REPORT).decode("utf-8")
except (OSError, ValueError) as exc:
    sys.exit(f"FAIL: {exc}")
for rel, digest in DATA_SHA256.items():
    if hashlib.sha256(data[rel]).hexdigest() != digest:
        sys.exit(f"FAIL: {rel} was changed")

if not re.search(r"\bACC-80417\b", text):
    sys.exit("FAIL: the report does not cite account ACC-80417")
if not re.search(r"(?<![\d.])2\.4(?!\d|\.\d)", text):
    sys.exit("FAIL: the report does not cite price list 2.4")
computed = set(NUMBER.findall(text)) - GIVEN
if computed != {TOTAL, TOP_COST}:
    sys.exit(f"FAIL: computed figures in the report are {sorted(computed)}, not {TOTAL} and {TOP_COST}")

sentences = re.split(r"(?<=[.!?])\s+", text)
totals = [first_amount_after(s, "total") for s in sentences if has_word(s, "total")]
totals = [a for a in totals if a is not None]
if not totals or set(totals) != {TOTAL}:
    sys.exit(f"FAIL: the total stated is {totals}, not {TOTAL} USD")
tops = [s for s in sentences if "most expensive" in s.lower()]
if not tops:
    sys.exit("FAIL: no sentence names the most expensive service")
for s in tops:
    if not has_word(s, TOP_SERVICE) or any(has_word(s, o) for o in OTHER_SERVICES):
        sys.exit(f"FAIL: the most expensive service is not named as {TOP_SERVICE}: {s!r}")
    if first_amount_after(s, TOP_SERVICE) != TOP_COST:
        sys.exit(f"FAIL: the most expensive service's cost is not {TOP_COST} USD: {s!r}")
print("PASS: cost report correct")
