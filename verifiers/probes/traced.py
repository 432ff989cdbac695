"""Probes built from a traced verification: plant a same-typed file wherever the verifier
looked one up in a place the solver can write (see `verifiers.surface`).

The rules are by *type* of lookup, never by task: a Python process that lists a
solver-writable directory (a ``sys.path`` entry: the working directory for ``-c`` / ``-m``,
the script's directory, ``PYTHONPATH``) gets a same-named module there for every top-level
module that process imported from elsewhere (``json.py`` beside ``/app``), plus
``sitecustomize`` and, in a site directory, a ``.pth``; a Node lookup gets a module that
calls ``process.exit(0)``; a file a shell opened or looked for (``source ./config.sh``) gets ``exit 0``; a
program looked up or executed gets an ``exit 0`` script; pytest's ``conftest.py`` and
configuration files get a conftest that passes everything and configs that only collect;
Perl, Ruby and make lookups get their own "exit successfully" file. A lookup of unknown
type gets nothing (it is still in the surface's report).

Invariants: every planted file ends its process with status 0 *before* the verifier's
check can run, so a verifier that loads any of them from the solver's state accepts a
state that solved nothing; a path another planted path lies under is never planted (it is
a directory on the way); the probe script stays a single exec argument (< 128 KiB) by
sharing each content once in a shell variable.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from envfactory.core.models import EnvironmentSpec

from .base import Probe, q
from .pytest_attacks import CONFTEST, PY_EXIT


@dataclass(frozen=True)
class Access:
    """One path lookup of a traced process: `op` is "open", "stat", "exec", "list" (a
    directory opened for reading its entries), "write" or "chdir"; `exe` is the program the
    process was running."""

    path: str
    op: str
    ok: bool
    errno: str = ""
    exe: str = ""


#: content, mode
Plant = tuple[str, int]

__all__ = ["PY_EXIT", "Access", "Plant", "TracedOverwrite", "TracedShadow", "plants"]

PTH_EXIT = "import posix; posix._exit(0)\n"
EXEC_EXIT = "#!/bin/sh\necho '1 passed'\nexit 0\n"
JS_EXIT = "console.log('1 passed'); process.exit(0);\n"
PERL_EXIT = 'print "1 passed\\n"; CORE::exit(0);\n1;\n'
RUBY_EXIT = "puts '1 passed'; exit!(0)\n"
MAKE_EXIT = ".DEFAULT:\n\t@echo '1 passed'\n"
_LOOSE = "addopts = -p no:cacheprovider --co -q\n"  # collect only: exit 0, nothing checked
PYTEST_CONFIGS = {
    "pytest.ini": "[pytest]\n" + _LOOSE,
    ".pytest.ini": "[pytest]\n" + _LOOSE,
    "tox.ini": "[pytest]\n" + _LOOSE,
    "setup.cfg": "[tool:pytest]\n" + _LOOSE,
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider --co -q"\n',
}
_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"}
_MAKEFILES = {"Makefile", "makefile", "GNUmakefile"}
_SHELLISH = ("", ".sh", ".bash", ".env", ".rc", ".conf", ".cfg", ".inc")
_PY_ROOT = re.compile(
    r"^.*?/python3(?:\.\d+)?(?:/(?:lib-dynload|site-packages|dist-packages))?/([^/]+)(?:/([^/]+))?"
)
_MAX_PLANTS = 4000


def process_kind(exe: str) -> str:
    """ "python", "node", "shell", "perl", "ruby", "make" or "" from a program path."""
    base = posixpath.basename(exe)
    if base.startswith(("python", "pytest", "py.test", "pip")):
        return "python"
    if base in ("node", "nodejs", "npm", "npx"):
        return "node"
    if base in _SHELLS:
        return "shell"
    for kind in ("perl", "ruby", "make"):
        if base == kind or base.startswith(kind):
            return kind
    return ""


def imported_modules(accesses: Iterable[Access]) -> set[str]:
    """Top-level modules Python processes found under an interpreter's own directories."""
    names: set[str] = set()
    for a in accesses:
        if not a.ok or process_kind(a.exe) != "python":
            continue
        m = _PY_ROOT.match(a.path)
        if m is None:
            continue
        first, second = m.group(1), m.group(2)
        if first == "__pycache__":
            first = (second or "").split(".", 1)[0]
        name = re.sub(r"(\.cpython-[^/]*|\.abi3)?\.(py|so|pyc)$", "", first)
        if name.isidentifier() and name != "__pycache__":
            names.add(name)
    return names


def content_for(a: Access) -> Plant | None:
    """What to plant at a looked-up path, by type (None: a lookup of unknown type)."""
    base, ext = posixpath.basename(a.path), posixpath.splitext(a.path)[1]
    kind = process_kind(a.exe)
    if base == "conftest.py":
        return CONFTEST, 0o644
    if base in PYTEST_CONFIGS:
        return PYTEST_CONFIGS[base], 0o644
    if ext == ".pth":
        return PTH_EXIT, 0o644
    if a.op == "exec":
        return EXEC_EXIT, 0o755
    if kind == "python" and ext == ".py":
        return PY_EXIT, 0o644
    if kind == "node" and ext in ("", ".js", ".cjs", ".mjs"):
        return JS_EXIT, 0o644
    if kind == "perl" and ext in (".pm", ".pl"):
        return PERL_EXIT, 0o644
    if kind == "ruby" and ext == ".rb":
        return RUBY_EXIT, 0o644
    if kind == "make" and (base in _MAKEFILES or ext == ".mk"):
        return MAKE_EXIT, 0o644
    if kind == "shell" and (a.op == "open" or (a.op == "stat" and not a.ok and ext in _SHELLISH)):
        # Sourced (`. ./config.sh`), tested before sourcing (`[ -f x ] && . x`) or searched
        # for through PATH: a shebang script that exits 0 serves all three.
        return EXEC_EXIT, 0o755
    return None


def _python_dir_plants(dirs: Iterable[str], modules: set[str]) -> dict[str, Plant]:
    out: dict[str, Plant] = {}
    for d in dirs:
        for name in sorted(modules | {"sitecustomize", "usercustomize"}):
            out[posixpath.join(d, name + ".py")] = (PY_EXIT, 0o644)
        if d.rstrip("/").endswith(("site-packages", "dist-packages")):
            out[posixpath.join(d, "000-envfactory-probe.pth")] = (PTH_EXIT, 0o644)
    return out


def plants(
    accesses: Iterable[Access], writable: Iterable[Access]
) -> tuple[dict[str, Plant], dict[str, Plant]]:
    """(shadow, overwrite): files to plant where a lookup found nothing, and replacements
    for code or configuration a lookup found in a solver-writable place."""
    accesses, writable = list(accesses), list(writable)
    found = {a.path for a in accesses if a.ok}
    py_dirs = {a.path for a in writable if a.op == "list" and process_kind(a.exe) == "python"}
    shadow = {
        p: c
        for p, c in _python_dir_plants(py_dirs, imported_modules(accesses)).items()
        if p not in found
    }
    overwrite: dict[str, Plant] = {}
    for a in writable:
        if a.op in ("list", "write", "chdir"):
            continue
        plant = content_for(a)
        if plant is None or (a.ok and a.op == "stat" and a.path in found and not _is_config(a)):
            continue  # a successful stat alone is not a load; its open is recorded anyway
        (overwrite if a.path in found else shadow).setdefault(a.path, plant)
    return _leaves(shadow), _leaves(overwrite)


def _is_config(a: Access) -> bool:
    base = posixpath.basename(a.path)
    return base == "conftest.py" or base in PYTEST_CONFIGS


def _leaves(files: dict[str, Plant]) -> dict[str, Plant]:
    """Drop paths that are directories on the way to other planted paths."""
    dirs = {posixpath.dirname(p) for p in files}
    ancestors = set()
    for d in dirs:
        while d not in ancestors and d != "/":
            ancestors.add(d)
            d = posixpath.dirname(d)
    kept = {p: c for p, c in sorted(files.items()) if p not in ancestors}
    return dict(list(kept.items())[:_MAX_PLANTS])


def planting_script(files: Mapping[str, Plant]) -> str:
    """POSIX shell writing every file (parents created, directories in the way skipped)."""
    contents = sorted({c for c, _ in files.values()})
    var = {c: f"c{i}" for i, c in enumerate(contents)}
    lines = [f"{var[c]}={q(c)}" for c in contents]
    lines.append(
        'put() { mkdir -p "$(dirname "$1")" 2>/dev/null; [ -d "$1" ] && return 0; '
        'rm -f "$1"; printf %s "$2" > "$1" && chmod "$3" "$1"; }'
    )
    for path, (content, mode) in sorted(files.items()):
        lines.append(f'put {q(path)} "${var[content]}" {mode:o}')
    lines.append("true")
    return "\n".join(lines) + "\n"


class _Planting(Probe):
    def __init__(self, files: Mapping[str, Plant]) -> None:
        self.files = dict(files)

    def script(self, spec: EnvironmentSpec) -> str:
        return planting_script(self.files)


class TracedShadow(_Planting):
    """Search-path shadowing, discovered: at every solver-writable path the verifier's
    processes looked up and did not find on the oracle's state (a ``sys.path`` directory
    listed before the standard library, ``node_modules`` and ``./lib/x.js`` lookups,
    ``source ./config.sh``, ``conftest.py`` / ``pytest.ini`` in ancestors, commands searched
    for through ``PATH``), plants a same-named file of that type that ends its process with
    status 0. Fools any verifier that resolves code or configuration from the solver's
    state before its own."""

    name = "traced-shadow"


class TracedOverwrite(_Planting):
    """Replaces the code and configuration the verifier's processes loaded from
    solver-writable places on the oracle's state (the solver's modules it imports in
    process, shell files it sources, programs it executes, pytest configuration it picks
    up) with same-named files that end the process with status 0 at load. Fools a verifier
    that trusts an exit status of a process that ran the solver's code in-process."""

    name = "traced-overwrite"
