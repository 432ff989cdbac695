"""Checks /app/dist/site-2.3.1.tar.gz and /app/dist/SHA256SUMS. The archive is read with
tarfile as data (never extracted); its members are compared with files in expected/."""
import hashlib
import os
import re
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ARCHIVE = "/app/dist/site-2.3.1.tar.gz"
SUMS = "/app/dist/SHA256SUMS"
EXPECTED = {
    "site-2.3.1/index.html": "expected/index.html",
    "site-2.3.1/about.html": "expected/about.html",
    "site-2.3.1/css/style.css": "expected/style.css",
    "site-2.3.1/img/logo.svg": "expected/logo.svg",
}
SOURCES = {
    "/app/VERSION": "ad8650bc9057d9dfd809961b69dbad640c288d809fa44437d44d83d3b118c821",
    "/app/site.conf": "1fbda09bb112fed7aee05b016c3bc2109eda2527d72049948e493189947b902d",
    "/app/site/about.html.in": "d551fd3ecf21db5e500da08bf5927a0bb6aca2b6ed89adf8ef59a4cf66649661",
    "/app/site/css/style.css": "834d2b3b2efb0f1d9e68f65fda77e159bd3d6ee6ca0f529c7280902d0335db0d",
    "/app/site/drafts/holiday.html.in": "195bcd71ad6597cc5770693820598d546862ce5077ba2ab033f179b9986bc7fa",
    "/app/site/img/logo.svg": "4fd95be47b293ee832a0fbc39f9a93addb470cae4ff080d96af09440556b4ddb",
    "/app/site/index.html.in": "c8a854066e810942f478d3a287f0ec7a95cf3b040480c7d84146a22fc4e4f786",
}

failures = []


def sha256(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def norm(name):
    while name.startswith("./"):
        name = name[2:]
    name = name.rstrip("/")
    return "" if name == "." else name


def check_archive():
    if not os.path.isfile(ARCHIVE):
        failures.append(f"{ARCHIVE} does not exist")
        return
    try:
        tar = tarfile.open(ARCHIVE, mode="r:gz")
    except (tarfile.TarError, OSError, EOFError) as exc:
        failures.append(f"{ARCHIVE} is not a gzip-compressed tar archive: {exc}")
        return
    with tar:
        files = {}
        for member in tar.getmembers():
            name = norm(member.name)
            if member.isdir():
                if name and name != "site-2.3.1" and not name.startswith("site-2.3.1/"):
                    failures.append(f"directory outside site-2.3.1/: {member.name!r}")
                continue
            if not member.isfile():
                failures.append(f"{member.name!r} is not a regular file (links are not allowed)")
                continue
            if name in files:
                failures.append(f"{member.name!r} appears twice")
                continue
            files[name] = tar.extractfile(member).read()
    if set(files) != set(EXPECTED):
        failures.append(
            f"archive files {sorted(files)}; expected exactly {sorted(EXPECTED)}")
    for name, rel in EXPECTED.items():
        if name not in files:
            continue
        with open(os.path.join(HERE, rel), "rb") as fh:
            want = fh.read()
        if files[name] != want:
            failures.append(f"{name}: content differs from the expected release file")


def check_sums():
    if not os.path.isfile(SUMS):
        failures.append(f"{SUMS} does not exist")
        return
    if not os.path.isfile(ARCHIVE):
        return
    actual = sha256(ARCHIVE)
    line_re = re.compile(r"^([0-9a-fA-F]{64}) [ *](.+)$")
    found = False
    with open(SUMS, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = line_re.match(line.rstrip("\r\n"))
            if m and m.group(2) == "site-2.3.1.tar.gz":
                found = True
                if m.group(1).lower() != actual:
                    failures.append(f"SHA256SUMS says {m.group(1)}, the archive hashes to {actual}")
    if not found:
        failures.append("SHA256SUMS has no sha256sum-format line for site-2.3.1.tar.gz")


def check_sources():
    for path, digest in SOURCES.items():
        if not os.path.isfile(path):
            failures.append(f"{path} is missing")
        elif sha256(path) != digest:
            failures.append(f"{path} was modified")
    present = set()
    for root, _dirs, names in os.walk("/app/site"):
        present.update(os.path.join(root, n) for n in names)
    extra = present - set(SOURCES)
    if extra:
        failures.append(f"files were added under /app/site: {sorted(extra)}")


check_archive()
check_sums()
check_sources()
for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print("PASS")
