"""Whether a probe can judge a verifier at all: the traced verification of the oracle
(`verifiers.surface`) shows which of the solver's files the verifier read.

A probe built from the oracle's outputs changes some files (`Probe.touched`). When no
process of the verifier read any of them — never opened for reading, executed or looked
at (``stat``: a size check reads no byte and still sees a cut file), or first truncated
or created anew (``O_TRUNC``, ``O_CREAT|O_EXCL``, as ``git reset --hard`` rewrites a
working tree) and read only after — the verifier's verdict on the probe's state cannot
depend on the change: the row is *not applicable* for this task, listed as such and never
a rejection (`not_applicable`).

Sound by keeping every row in doubt:

- no trace (no strace on the host, the tracer wrote nothing, a probe that does not know
  its files before it runs, a task with services beside it — their processes read files
  outside the traced tree): the row stays;
- a file's directory, or one above it, was listed (a program may have read it under a
  name the trace does not show, a copy of the whole tree);
- anything was read under a ``.git`` directory beside the file or above it (the probe's
  change was committed where the reference committed: the object store holds it too);
- anything was read through ``/proc/<pid>/cwd`` or ``/proc/<pid>/root`` (a path the
  trace cannot tie to the file's own name);
- ``stat`` by git itself does not count as reading: git compares a working tree's file
  status with its index and opens a file when it needs its content, and that open counts.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .base import Probe
from .traced import Access

_PROC_PATH = re.compile(r"^/proc/[^/]+/(?:cwd|root)(?:/|$)")


@dataclass(frozen=True)
class ReadLog:
    """What one traced verification did with files: each path's accesses in trace order,
    the directories listed, and whether some access defeats the analysis."""

    accesses: tuple[Access, ...]

    @property
    def listed(self) -> frozenset[str]:
        return frozenset(a.path for a in self.accesses if a.op == "list")

    @property
    def through_proc(self) -> bool:
        return any(_PROC_PATH.match(a.path) for a in self.accesses)

    def first_use(self, path: str) -> str | None:
        """ "read" or "reset" (the first access that reads the file or resets its content),
        or None when no process did either."""
        for a in self.accesses:
            if a.path != path:
                continue
            if a.op == "exec" or (a.op == "stat" and not _is_git(a.exe)):
                return "read"
            if a.op in ("open", "write") and a.ok:
                if a.mode == "reset":
                    return "reset"
                if a.mode in ("read", ""):
                    return "read"
        return None

    def git_read_near(self, path: str) -> bool:
        """Whether anything under a ``.git`` beside `path` or above it was accessed."""
        dirs = _ancestors(path)
        return any(
            a.path == f"{d}/.git" or a.path.startswith(f"{d}/.git/")
            for a in self.accesses
            for d in dirs
        )


def _is_git(exe: str) -> bool:
    base = posixpath.basename(exe)
    return base == "git" or base.startswith("git-") or "/git-core/" in exe


def _ancestors(path: str) -> list[str]:
    out, d = [], posixpath.dirname(path)
    while d and d != "/":
        out.append(d)
        d = posixpath.dirname(d)
    return out


#: places whose files are the verification's own, never the state's toolchain
_NOT_PINNED = ("/proc/", "/sys/", "/dev/", "/tmp/", "/run/", "/var/tmp/")


def pinned_paths(log: ReadLog, outside: Sequence[str]) -> frozenset[str]:
    """The verifier's toolchain as the traced verification of the oracle resolved it:
    the files it executed, or opened and read before anything wrote them, and the paths
    it looked up and did not find (a module search path's earlier entries), outside the
    roots `outside` (the workspace, the verifier's and the reward's directories) and the
    verification's scratch places. A state that changed one of them, or created one,
    changed what the verifier's own tools load: in full-state scope that is tamper
    evidence, not the task's weakness (`gate.views.Views.prepared`)."""
    roots = tuple(r.rstrip("/") + "/" for r in outside if r)
    out: set[str] = set()
    for a in log.accesses:
        if a.op not in ("open", "exec", "stat") or not a.path.startswith("/"):
            continue
        if a.path.startswith(_NOT_PINNED) or (a.path + "/").startswith(roots):
            continue
        if not a.ok and a.errno in ("ENOENT", "ENOTDIR"):
            out.add(a.path)  # looked up, absent: must stay absent
        elif a.ok and a.op != "stat" and log.first_use(a.path) == "read":
            out.add(a.path)
    return frozenset(out)


def read_log(accesses: Iterable[Access]) -> ReadLog:
    return ReadLog(tuple(accesses))


@dataclass(frozen=True)
class Traced:
    """What the traced verification of the oracle gives the gates: the probes planted
    where the verifier looked, and what it read (None: not traced)."""

    probes: tuple[Probe, ...] = ()
    reads: ReadLog | None = None


def not_applicable(touched: Sequence[str] | None, log: ReadLog | None) -> str | None:
    """Why a probe changing `touched` cannot judge the verifier whose traced run is `log`
    (module docstring); None when it can, or when in doubt."""
    reset = _unused(touched, log)
    if reset is None or not touched:
        return None
    if reset:
        return (
            "the verifier overwrote what it changed before reading it "
            f"({', '.join(reset[:3])}) on the reference's state"
        )
    return f"the verifier never read what it changed ({', '.join(touched[:3])}) on the reference's state"


def never_read(touched: Sequence[str] | None, log: ReadLog | None) -> bool:
    """Whether the traced run surely neither read nor reset any file of `touched`."""
    return _unused(touched, log) == []


def _unused(touched: Sequence[str] | None, log: ReadLog | None) -> list[str] | None:
    """None when the run read a file of `touched` (or may have: the module's doubts);
    else the files it reset before reading them (empty: it never touched any)."""
    if log is None or not touched or log.through_proc:
        return None
    listed = log.listed
    reset = []
    for path in touched:
        if any(d in listed for d in _ancestors(path)) or log.git_read_near(path):
            return None
        use = log.first_use(path)
        if use == "read":
            return None
        if use == "reset":
            reset.append(path)
    return reset


#: configuration, CI and packaging files: what a repository's tooling reads (linters,
#: packagers, CI services, documentation builders), by where they live and how they end
_CONFIG_DIRS = frozenset({".github", ".gitlab", ".circleci", ".buildkite", ".devcontainer"})
_CONFIG_SUFFIXES = (".yml", ".yaml", ".toml", ".ini", ".cfg", ".conf", ".in", ".lock")
_CONFIG_NAMES = frozenset(
    {
        ".gitignore", ".gitattributes", ".dockerignore", ".editorconfig", ".mailmap",
        "CODEOWNERS", "Dockerfile", "Jenkinsfile", "Procfile", "Containerfile",
    }
)  # fmt: skip
#: documentation: prose a repository's readers read
_DOC_SUFFIXES = (".md", ".rst", ".adoc")


def config_file(path: str) -> bool:
    """Whether `path` is a configuration, CI, packaging or documentation file by its
    place and name. Alone this grades nothing: `unread_config` also asks the trace."""
    parts = path.split("/")
    name = parts[-1]
    return (
        any(p in _CONFIG_DIRS for p in parts)
        or name in _CONFIG_NAMES
        or name.lower().endswith(_CONFIG_SUFFIXES + _DOC_SUFFIXES)
    )


def config_only(changed: Sequence[str], named: Sequence[str]) -> bool:
    """Whether every path of `changed` (at least one) is a configuration file
    (`config_file`) that the instruction does not name."""
    return bool(changed) and all(config_file(p) and p not in named for p in changed)


def unread_config(changed: Sequence[str], named: Sequence[str], log: ReadLog | None) -> list[str]:
    """`changed` when every path of it is a configuration file (`config_file`) that the
    instruction does not name and that no process of the traced run read; else []. A
    state that differs from the reference's only there is one the verifier cannot tell
    from the reference's: those files are ungraded, like documentation, and a row on it
    cannot judge the verifier.

    Listing a directory above such a file does not count as reading it here, unlike
    for `not_applicable`: a test runner walks the whole tree to collect its tests, and
    whatever then reads a file opens it by a path the trace resolves. The other doubts
    stay: no trace, a read through ``/proc/<pid>/cwd``, anything read under a ``.git``
    beside or above it."""
    if log is None or log.through_proc or not config_only(changed, named):
        return []
    if any(log.git_read_near(p) or log.first_use(p) == "read" for p in changed):
        return []
    return list(changed)
