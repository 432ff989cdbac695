"""Sound check of the fee-fix backport to release/2.4 in /app's git repository.

Only the repository's objects and refs are read, and from a private copy: loose objects and
pack data are copied without following any symlink, pack indexes are rebuilt from the pack
data (index-pack hashes every object), fsck then checks every object's hash and that the
refs' history is complete, and refs are parsed here (only refs/heads and refs/tags: no
replace refs, grafts, alternates or commit-graph of the solver's). git runs on the copy
with no system, global or solver config, hooks off, and never on a working tree.
The truth is constants (tree ids: every file's exact bytes). The exit status is the verdict.
"""

import os
import re
import stat
import subprocess
import sys
import tempfile

GIT_DIR = "/app/.git"
GIT = "/usr/bin/git"
HEX = re.compile(r"[0-9a-f]{40}")
LOOSE_DIR = re.compile(r"[0-9a-f]{2}")
LOOSE_FILE = re.compile(r"[0-9a-f]{38}")
PACK = re.compile(r"pack-[0-9a-f]{40,64}\.pack")
PICKED = re.compile(r"^\(cherry picked from commit ([0-9a-f]{40})\)$", re.MULTILINE)

BASE = "bf6ca78905f371a4821cb349db985348973d4310"  # release/2.4 before the backport
ROUND_FIX = "6e2a95be349a84a43c3c96fa3df956dad4f0648b"
ZERO_FIX = "5cd4817b5da2f3246edfde8ff29f544a8e473332"
KEPT_REFS = {
    "refs/heads/main": ZERO_FIX,
    "refs/tags/v2.4.0": "e2b111c45fb21d9ee10a8232bcf9eb532f91f1b5",
}
REFS = set(KEPT_REFS) | {"refs/heads/release/2.4"}
# The release's tree after each fix: release/2.4 + the round fix; + the zero fix too.
TREE_AFTER = {
    (ROUND_FIX,): "16b47e3f6eb86a205dba0ebb2b71e4032150daa3",
    (ROUND_FIX, ZERO_FIX): "31b7469363003bc49e448df6bef4120feafcda14",
}


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


def new_commits(dest, tip):
    """The commits of release/2.4 after BASE, oldest first; every one with a single parent."""
    chain = []
    oid = tip
    while oid != BASE:
        body = git(dest, "cat-file", "commit", oid).stdout.decode("utf-8")
        header, _, message = body.partition("\n\n")
        parents = [line[7:] for line in header.splitlines() if line.startswith("parent ")]
        tree = header.splitlines()[0].removeprefix("tree ")
        if len(parents) != 1:
            fail(f"{oid} has {len(parents)} parents: the backport is linear on release/2.4")
        chain.append((oid, tree, message))
        if len(chain) > 2:
            fail("more than two new commits on release/2.4")
        oid = parents[0]
    return chain[::-1]


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

    dest = os.path.join(tempfile.mkdtemp(prefix="backport-check-"), "repo.git")
    private_copy(dest)
    for name, oid in sorted(refs.items()):
        git(dest, "update-ref", name, oid)
    git(dest, "fsck", "--strict", "--no-dangling", "--no-progress")

    tip = refs["refs/heads/release/2.4"]
    if tip == BASE or git(dest, "merge-base", "--is-ancestor", BASE, tip, check=False).returncode:
        fail("release/2.4 is not the old release/2.4 plus new commits")
    picked = []
    for oid, tree, message in new_commits(dest, tip):
        refs_here = tuple(PICKED.findall(message))
        if not refs_here:
            fail(f"{oid} names no commit it was cherry-picked from")
        picked.extend(refs_here)
        if tree != TREE_AFTER.get(tuple(picked)):
            fail(f"{oid} (backporting {picked}) has tree {tree}, not the release with those fixes")
    if picked != [ROUND_FIX, ZERO_FIX]:
        fail(f"the backport names {picked}, want the round fix then the zero fix")
    print("PASS: both fee fixes backported to release/2.4")


try:
    main()
except (OSError, ValueError, UnicodeDecodeError, RecursionError, subprocess.SubprocessError) as exc:
    fail(f"{type(exc).__name__}: {exc}")
