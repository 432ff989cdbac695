"""Which files a verifier's tools execute, source or load by themselves from the solver's
space, by *type* of lookup (see `tools` for the payloads planted there).

A tool finds some of its code by itself: TeX (kpathsea) looks a class, package or input file
up in the current directory before its distribution (``./article.cls``), Perl walks ``-I``,
``PERL5LIB`` and ``.``, Node walks ``node_modules`` up the tree, make reads ``GNUmakefile``
before ``Makefile`` and its ``include``\\ s, a shell sources ``BASH_ENV``, ``ENV``, rc files
and ``. ./config.sh``, git reads ``.gitattributes``, its config and its hooks. `tool_loads`
names every such file the traced verification (`verifiers.surface`) executed, sourced or
loaded — or looked up and did not find — in a solver-writable place: the program that looked
(`traced.process_kind`) and the kind of file it looks for decide, never a task's names. A
lookup of data (a log, a font metric, a CSV) is no load.

Invariant: every load names its path and its tool (`Load.describe`), and the same-named file
the tool loaded instead from outside the solver's space when the trace shows one (`real`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from .traced import process_kind


class Lookup(Protocol):
    """One traced path lookup (`traced.Access`)."""

    @property
    def path(self) -> str: ...
    @property
    def op(self) -> str: ...
    @property
    def ok(self) -> bool: ...
    @property
    def exe(self) -> str: ...
    @property
    def cwd(self) -> str: ...


@dataclass(frozen=True)
class Load:
    """A file a verifier's tool executes, sources or loads (or looked up for that) in a
    solver-writable place: `language` is the payload's language, `what` the kind of file,
    `real` the same-named file the tool loaded from elsewhere ("" when none)."""

    path: str
    tool: str
    language: str
    what: str
    found: bool
    cwd: str = ""
    real: str = ""

    def describe(self) -> str:
        how = "loaded from there" if self.found else "looked up there first"
        return f"{self.path} ({self.tool}: {self.what}, {how})"


_TEX = {
    ".cls": "TeX class",
    ".sty": "TeX package",
    ".clo": "TeX class option file",
    ".tex": "TeX input file",
    ".ltx": "TeX input file",
    ".cfg": "TeX configuration file",
    ".def": "TeX definition file",
    ".fd": "TeX font definition",
}
_RC = frozenset(
    ".bashrc .bash_profile .bash_login .profile .kshrc .mkshrc .zshrc .zshenv .zprofile "
    ".envrc .env".split()
)
_SHELLISH = ("", ".sh", ".bash", ".env", ".rc", ".conf", ".cfg", ".inc")
_MAKEFILES = frozenset({"Makefile", "makefile", "GNUmakefile"})
_GIT = {".gitattributes": "git attributes", "attributes": "git attributes", "config": "git config"}


def language_of(exe: str) -> str:
    """The language a program loads its own code in: "tex", "python", "node", "shell",
    "perl", "ruby", "make", "git" or ""."""
    base = posixpath.basename(exe)
    if base == "git" or base.startswith("git-"):
        return "git"
    return process_kind(exe)


def classify(a: Lookup) -> Load | None:
    """The load a lookup is, by type (None: not code or configuration of its tool)."""
    if a.op in ("list", "write", "chdir"):
        return None
    lang, tool = language_of(a.exe), posixpath.basename(a.exe) or "?"
    base, ext = posixpath.basename(a.path), posixpath.splitext(a.path)[1]
    what = _what(lang, a, base, ext)
    if what is None and a.op == "exec":
        lang, what = "program", "program executed"
    if what is None:
        return None
    return Load(a.path, tool, lang, what, a.ok, a.cwd)


def _tex(a: Lookup, base: str, ext: str) -> str | None:
    return "kpathsea configuration" if base == "texmf.cnf" else _TEX.get(ext)


def _perl(a: Lookup, base: str, ext: str) -> str | None:
    return {".pm": "Perl module", ".pl": "Perl file"}.get(ext)


def _node(a: Lookup, base: str, ext: str) -> str | None:
    return "Node module" if ext in ("", ".js", ".cjs", ".mjs") and a.op != "exec" else None


def _make(a: Lookup, base: str, ext: str) -> str | None:
    # make opens nothing but makefiles for reading (`include`, `-f`, the default names)
    read = base in _MAKEFILES or ext == ".mk" or (a.op == "open" and a.ok)
    return "makefile" if read else None


def _ruby(a: Lookup, base: str, ext: str) -> str | None:
    return "Ruby file" if ext == ".rb" else None


def _python(a: Lookup, base: str, ext: str) -> str | None:
    return {".py": "Python module", ".pth": "Python path file"}.get(ext)


def _git(a: Lookup, base: str, ext: str) -> str | None:
    return "git hook" if "/.git/hooks/" in a.path else _GIT.get(base)


def _shell(a: Lookup, base: str, ext: str) -> str | None:
    if a.op == "exec":
        return None
    if base in _RC:
        return "shell rc file"
    return "sourced shell file" if ext in _SHELLISH else None


#: language → what a lookup of that language's program loads (None: data, no load)
_WHAT = {
    "tex": _tex,
    "perl": _perl,
    "node": _node,
    "make": _make,
    "ruby": _ruby,
    "python": _python,
    "git": _git,
    "shell": _shell,
}


def _what(lang: str, a: Lookup, base: str, ext: str) -> str | None:
    rule = _WHAT.get(lang)
    return None if rule is None else rule(a, base, ext)


def tool_loads(accesses: Iterable[Lookup], writable: Iterable[Lookup]) -> tuple[Load, ...]:
    """Every load among the solver-writable lookups, once per path (found wins), each with
    the same-named file its tool opened outside them (its `real` twin). A path that other
    lookups lie under is a directory (a shell opening its working directory), no load."""
    accesses = list(accesses)
    dirs = {d for a in accesses for d in _parents(a.path)}
    mine = {(a.path, a.op, a.ok) for a in writable}
    twins = {
        posixpath.basename(a.path): a.path
        for a in accesses
        if a.ok and a.op == "open" and (a.path, a.op, a.ok) not in mine
    }
    out: dict[str, Load] = {}
    for a in writable:
        load = classify(a)
        if load is None or a.path in dirs or (a.path in out and out[a.path].found):
            continue
        real = twins.get(_twin_name(load), "")
        out[a.path] = Load(load.path, load.tool, load.language, load.what, a.ok, a.cwd, real)
    return tuple(out[p] for p in sorted(out))


def _parents(path: str) -> Iterable[str]:
    while (up := posixpath.dirname(path)) != path:
        yield up
        path = up


def _twin_name(load: Load) -> str:
    """The file name the tool meant: kpathsea also tries ``article.cls.tex``."""
    base = posixpath.basename(load.path)
    if load.language == "tex" and base.count(".") > 1 and base.endswith(".tex"):
        return base[: -len(".tex")]
    return base
