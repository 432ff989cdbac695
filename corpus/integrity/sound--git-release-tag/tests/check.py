"""Sound check of the 1.5.0 release in /app's git repository.

Only the repository's objects and refs are read, and from a private copy: loose objects and
pack data are copied without following any symlink, pack indexes are rebuilt from the pack
data (index-pack hashes every object), fsck then checks every object's hash and that the
refs' history is complete, and refs are parsed here (only refs/heads and refs/tags: no
replace refs, grafts, alternates or commit-graph of the solver's). git runs on the copy
with no system, global or solver config, hooks off, and never on a working tree.
The truth is constants. The exit status is the verdict.
"""

import ast
import os
import re
import stat
import subprocess
import sys
import tempfile
import tomllib

GIT_DIR = "/app/.git"
GIT = "/usr/bin/git"
HEX = re.compile(r"[0-9a-f]{40}")
LOOSE_DIR = re.compile(r"[0-9a-f]{2}")
LOOSE_FILE = re.compile(r"[0-9a-f]{38}")
PACK = re.compile(r"pack-[0-9a-f]{40,64}\.pack")

BASE = "51a10dd00cdb8da4d2b795c0ac37521542d91dc9"  # main before the release
KEPT_REFS = {
    "refs/heads/feature/csv-export": "967e830015e63dc0d07166904611f0f4473e32c1",
    "refs/tags/v1.4.2": "d5e6132fc416eb391755f0d087df0dc5a662f71a",
}
REFS = set(KEPT_REFS) | {"refs/heads/main", "refs/tags/v1.5.0"}
UNCHANGED = {
    "README.md": ("100644", "847cc7b04bcb829cc49dd2286b046f2064de5d2e"),
    "src/ledger/totals.py": ("100644", "14e9cf901b2859d1a7fc0689a8eaf5d5a83553b3"),
    "tests/test_totals.py": ("100644", "f88c6aec369f609270dbee0246d2eea5e82ad149"),
}
SUBJECT = "chore(release): 1.5.0"
PYPROJECT = {
    "project": {
        "name": "ledger",
        "version": "1.5.0",
        "description": "Small double-entry ledger helpers",
        "requires-python": ">=3.9",
        "license": {"text": "MIT"},
    },
    "build-system": {"requires": ["setuptools>=61"], "build-backend": "setuptools.build_meta"},
}
INIT_PY = '"""Small double-entry ledger helpers."""\n\n__version__ = "1.5.0"\n'
CHANGELOG = """# Changelog

All notable changes to this project are documented here.
This project follows Semantic Versioning.

## 1.5.0 (2024-06-03)

- `average()` rounds half to even, as the accountants expect.
- `average()` of no entries is 0 instead of an error.

## 1.4.2 (2024-04-18)

- Fix the sign of credit entries in `balance()`.

## 1.4.1 (2024-03-02)

- First public release.
"""


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def entries(path):
    """(name, lstat) of a real directory's entries; any symlink or odd file fails."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        fail(f"{path} is not a directory")
    out = []
    for name in sorted(os.listdir(path)):
        st = os.lstat(os.path.join(path, name))
        if stat.S_ISLNK(st.st_mode):
            fail(f"{path}/{name} is a symlink")
        out.append((name, st))
    return out


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


def write_new(path, data):
    with open(path, "xb") as fh:
        fh.write(data)


def solver_refs():
    """{refname: id} of refs/heads and refs/tags: packed-refs, overridden by loose refs."""
    refs = {}
    if os.path.lexists(f"{GIT_DIR}/packed-refs"):
        for line in read_regular(f"{GIT_DIR}/packed-refs").decode().splitlines():
            if line.startswith(("#", "^")) or not line:
                continue
            oid, _, name = line.partition(" ")
            if not HEX.fullmatch(oid):
                fail(f"packed-refs line {line!r}")
            refs[name] = oid

    def walk(rel):
        for name, st in entries(f"{GIT_DIR}/{rel}"):
            if stat.S_ISDIR(st.st_mode):
                walk(f"{rel}/{name}")
            elif stat.S_ISREG(st.st_mode):
                oid = read_regular(f"{GIT_DIR}/{rel}/{name}").decode().strip()
                if not HEX.fullmatch(oid):
                    fail(f"{rel}/{name} is not a plain ref: {oid[:60]!r}")
                refs[f"{rel}/{name}"] = oid
            else:
                fail(f"{rel}/{name} is not a file")

    for top in ("refs/heads", "refs/tags"):
        if os.path.lexists(f"{GIT_DIR}/{top}"):
            walk(top)
    return {k: v for k, v in refs.items() if k.startswith(("refs/heads/", "refs/tags/"))}


def private_copy(dest):
    """A bare repository of ours holding the solver's objects (hashes verified by fsck)."""
    git(dest, "init", "--bare", "-q", "--template=", dest, git_dir=False)
    packs = []
    for name, st in entries(f"{GIT_DIR}/objects"):
        if LOOSE_DIR.fullmatch(name) and stat.S_ISDIR(st.st_mode):
            os.makedirs(f"{dest}/objects/{name}", exist_ok=True)
            for obj, ost in entries(f"{GIT_DIR}/objects/{name}"):
                if LOOSE_FILE.fullmatch(obj) and stat.S_ISREG(ost.st_mode):
                    write_new(
                        f"{dest}/objects/{name}/{obj}",
                        read_regular(f"{GIT_DIR}/objects/{name}/{obj}"),
                    )
        elif name == "pack" and stat.S_ISDIR(st.st_mode):
            for pack, pst in entries(f"{GIT_DIR}/objects/pack"):
                if PACK.fullmatch(pack) and stat.S_ISREG(pst.st_mode):
                    packs.append(read_regular(f"{GIT_DIR}/objects/pack/{pack}"))
    for data in packs:  # index-pack recomputes every object id from the pack's data
        git(dest, "index-pack", "--stdin", "--strict", stdin=data)


def git(dest, *args, stdin=None, git_dir=True, check=True):
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": os.path.dirname(dest),
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_TERMINAL_PROMPT": "0",
    }
    if git_dir:
        env["GIT_DIR"] = dest
    res = subprocess.run(
        [GIT, "-c", "core.hooksPath=/dev/null", *args],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=os.path.dirname(dest),
        timeout=60,
    )
    if check and res.returncode != 0:
        fail(f"git {args[0]} exited {res.returncode}: {res.stderr.decode(errors='replace')[-300:]}")
    return res


def lines_of(text):
    return [line.rstrip() for line in text.rstrip("\n").split("\n")]


def main():
    for path in ("/app", GIT_DIR):
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            fail(f"{path} is not a directory")
    refs = solver_refs()
    if set(refs) != REFS:
        fail(f"branches and tags are {sorted(refs)}, want {sorted(REFS)}")
    for name, oid in KEPT_REFS.items():
        if refs[name] != oid:
            fail(f"{name} was moved")

    dest = os.path.join(tempfile.mkdtemp(prefix="release-check-"), "repo.git")
    private_copy(dest)
    for name, oid in sorted(refs.items()):
        git(dest, "update-ref", name, oid)
    git(dest, "fsck", "--strict", "--no-dangling", "--no-progress")

    tag = refs["refs/tags/v1.5.0"]
    if git(dest, "cat-file", "-t", tag).stdout.decode().strip() != "tag":
        fail("v1.5.0 is not an annotated tag")
    header = git(dest, "cat-file", "tag", tag).stdout.decode().split("\n\n", 1)[0]
    fields = dict(line.split(" ", 1) for line in header.splitlines() if " " in line)
    main_tip = refs["refs/heads/main"]
    if (fields.get("object"), fields.get("type"), fields.get("tag")) != (
        main_tip,
        "commit",
        "v1.5.0",
    ):
        fail(f"v1.5.0 tags {fields.get('type')} {fields.get('object')}, not main's tip {main_tip}")

    if main_tip == BASE or git(dest, "merge-base", "--is-ancestor", BASE, main_tip, check=False).returncode:
        fail("main is not the old main plus new commits")
    commit = git(dest, "cat-file", "commit", main_tip).stdout.decode()
    message = commit.split("\n\n", 1)[1] if "\n\n" in commit else ""
    if message.split("\n", 1)[0] != SUBJECT:
        fail(f"release commit subject is {message.splitlines()[:1]}")

    tree = {}
    for item in git(dest, "ls-tree", "-r", "-z", "--full-tree", main_tip).stdout.split(b"\0"):
        if item:
            meta, path = item.split(b"\t", 1)
            mode, kind, oid = meta.decode().split(" ")
            tree[path.decode()] = (mode, kind, oid)
    want_paths = set(UNCHANGED) | {"pyproject.toml", "src/ledger/__init__.py", "CHANGELOG.md"}
    if set(tree) != want_paths:
        fail(f"files at the release: {sorted(tree)}")
    for path, (mode, oid) in UNCHANGED.items():
        if tree[path] != (mode, "blob", oid):
            fail(f"{path} was changed")

    def blob(path):
        mode, kind, oid = tree[path]
        if (mode, kind) != ("100644", "blob"):
            fail(f"{path} is {mode} {kind}")
        return git(dest, "cat-file", "blob", oid).stdout.decode("utf-8")

    if tomllib.loads(blob("pyproject.toml")) != PYPROJECT:
        fail("pyproject.toml is not the 1.4.2 one with version 1.5.0")
    if ast.dump(ast.parse(blob("src/ledger/__init__.py"))) != ast.dump(ast.parse(INIT_PY)):
        fail("src/ledger/__init__.py is not the 1.4.2 one with __version__ 1.5.0")
    if lines_of(blob("CHANGELOG.md")) != lines_of(CHANGELOG):
        fail("CHANGELOG.md is not the old one with '## 1.5.0 (2024-06-03)'")
    print("PASS: v1.5.0 released")


try:
    main()
except (OSError, ValueError, SyntaxError, RecursionError, subprocess.SubprocessError) as exc:
    fail(f"{type(exc).__name__}: {exc}")
