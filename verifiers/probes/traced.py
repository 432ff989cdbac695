"""Probes built from a traced verification: plant a same-typed file wherever the verifier
looked one up in a place the solver can write (see `verifiers.surface`).

The rules are by *type* of lookup, never by task: a Python process that lists a
solver-writable directory (a ``sys.path`` entry: the working directory for ``-c`` / ``-m``,
the script's directory, ``PYTHONPATH``) gets a same-named module there for every top-level
module that process imported from elsewhere (``json.py`` beside ``/app``), plus
``sitecustomize`` and, in a site directory, a ``.pth``; a Node lookup gets a module that
calls ``process.exit(0)``; a file a shell opened or looked for (``source ./config.sh``)
and a program looked up or executed get a script that writes 1 to Harbor's reward file and
exits 0; pytest's ``conftest.py`` and
configuration files get a conftest that passes everything and configs that only collect;
Perl, Ruby, make and TeX (kpathsea: ``./article.cls`` before the distribution's) lookups
get their own "exit successfully" file. A lookup of unknown
type gets nothing (it is still in the surface's report).

Two more rules are about data, not code. An output the verifier read (a solver-writable
file it opened for reading) becomes a symlink to the file of the verifier's own directory
read nearest to it in the trace, named as a solver could name it without knowing a random
directory (`links`, `TracedLink`); a file the verifier wrote in a solver-writable place
gets, beforehand, the content it wrote there on the oracle's state (`replays`,
`TracedReplay`). Both are bounded (16 links; 16 text files, 64 KiB in all).

Invariants: every planted code file ends its process with status 0 *before* the verifier's
check can run, so a verifier that loads any of them from the solver's state accepts a
state that solved nothing; a path another planted path lies under is never planted (it is
a directory on the way); the probe script stays a single exec argument (< 128 KiB) by
sharing each content once in a shell variable.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from envfactory.core.models import EnvironmentSpec

from .base import Described, Probe, q
from .pytest_attacks import CONFTEST, PY_EXIT


@dataclass(frozen=True)
class Access:
    """One path lookup of a traced process: `op` is "open", "stat", "exec", "list" (a
    directory opened for reading its entries), "write" or "chdir"; `exe` is the program the
    process was running, `cwd` its working directory at the call and `pid` its id; `mode`
    how an open treats the content (below)."""

    path: str
    op: str
    ok: bool
    errno: str = ""
    exe: str = ""
    cwd: str = ""
    pid: int = 0
    #: for an open: "read" (it can read the content: O_RDONLY, O_RDWR), "reset" (it
    #: starts the content anew: O_TRUNC, O_CREAT|O_EXCL) or "append" (O_WRONLY alone)
    mode: str = ""


#: content, mode
Plant = tuple[str, int]

__all__ = [
    "PY_EXIT",
    "Access",
    "Plant",
    "TracedLink",
    "TracedOverwrite",
    "TracedReplay",
    "TracedShadow",
    "links",
    "plants",
    "replays",
]

PTH_EXIT = "import posix; posix._exit(0)\n"
#: A program or sourced shell file that claims the reward (Harbor's reward file: sourced,
#: it runs in the verifier's own shell, whose `exit 0` would otherwise end it before it
#: wrote a reward) and ends with status 0.
EXEC_EXIT = (
    "#!/bin/sh\necho '1 passed'\n"
    "(mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt) 2>/dev/null\nexit 0\n"
)
JS_EXIT = "console.log('1 passed'); process.exit(0);\n"
PERL_EXIT = 'print "1 passed\\n"; CORE::exit(0);\n1;\n'
RUBY_EXIT = "puts '1 passed'; exit!(0)\n"
#: make's "exit successfully": every recipe line runs under /bin/true (an `override`, so a
#: later plain `SHELL :=` in the including makefile does not undo it), and a goal with no
#: rule "passes" too
MAKE_EXIT = "override SHELL := /bin/true\n.DEFAULT:\n\t@echo '1 passed'\n"
#: TeX's "exit successfully": the job ends here with status 0 ("No pages of output.")
TEX_EXIT = "\\immediate\\write16{1 passed}\\csname @@end\\endcsname\\end\n"
TEX_ENGINES = frozenset(
    "tex etex pdftex pdflatex latex xetex xelatex luatex lualatex luahbtex dvilualatex "
    "uptex uplatex euptex ptex platex".split()
)
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
#: what a program of each kind runs when it loads a planted file as its own code
_EXIT_BY_KIND = {
    "python": PY_EXIT,
    "node": JS_EXIT,
    "perl": PERL_EXIT,
    "ruby": RUBY_EXIT,
    "make": MAKE_EXIT,
    "tex": TEX_EXIT,
}
_SHELLISH = ("", ".sh", ".bash", ".env", ".rc", ".conf", ".cfg", ".inc")
_PY_ROOT = re.compile(
    r"^.*?/python3(?:\.\d+)?(?:/(?:lib-dynload|site-packages|dist-packages))?/([^/]+)(?:/([^/]+))?"
)
_MAX_PLANTS = 4000


def process_kind(exe: str) -> str:
    """ "python", "node", "shell", "perl", "ruby", "make", "tex" or "" from a program path."""
    base = posixpath.basename(exe)
    if base in TEX_ENGINES:
        return "tex"
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
    if base == "conftest.py":
        return CONFTEST, 0o644
    if base in PYTEST_CONFIGS:
        return PYTEST_CONFIGS[base], 0o644
    if ext == ".pth":
        return PTH_EXIT, 0o644
    if a.op == "exec":
        return EXEC_EXIT, 0o755
    return _for_interpreter(a, base, ext)


def _for_interpreter(a: Access, base: str, ext: str) -> Plant | None:
    """A file the looking-up program would load as its own code."""
    kind = process_kind(a.exe)
    loads = {
        "python": ext == ".py",
        "node": ext in ("", ".js", ".cjs", ".mjs"),
        "perl": ext in (".pm", ".pl"),
        "ruby": ext == ".rb",
        "make": base in _MAKEFILES or ext == ".mk",
        "tex": ext in (".cls", ".sty", ".clo", ".tex", ".ltx", ".cfg", ".def", ".fd"),
    }
    if loads.get(kind, False):
        return _EXIT_BY_KIND[kind], 0o644
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
    return leaves_only(shadow), leaves_only(overwrite)


def _is_config(a: Access) -> bool:
    base = posixpath.basename(a.path)
    return base == "conftest.py" or base in PYTEST_CONFIGS


def leaves_only(files: dict[str, Plant]) -> dict[str, Plant]:
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


class PlantingProbe(Probe):
    """A probe that plants `files` (path → payload) from a traced run; `loads` are the
    tool loads among them (`tools.tool_loads`), named in its detail."""

    def __init__(self, files: Mapping[str, Plant], loads: Sequence[Described] = ()) -> None:
        self.files = dict(files)
        self.loads = tuple(loads)  # the tools' loads among them (`tools.tool_loads`)

    @property
    def detail(self) -> str:
        return "; ".join(load.describe() for load in self.loads if load.path in self.files)

    def script(self, spec: EnvironmentSpec) -> str:
        return planting_script(self.files)


class TracedShadow(PlantingProbe):
    """Search-path shadowing, discovered: at every solver-writable path the verifier's
    processes looked up and did not find on the oracle's state (a ``sys.path`` directory
    listed before the standard library, ``node_modules`` and ``./lib/x.js`` lookups,
    ``source ./config.sh``, ``conftest.py`` / ``pytest.ini`` in ancestors, commands searched
    for through ``PATH``), plants a same-named file of that type that ends its process with
    status 0. Fools any verifier that resolves code or configuration from the solver's
    state before its own."""

    name = "traced-shadow"


class TracedOverwrite(PlantingProbe):
    """Replaces the code and configuration the verifier's processes loaded from
    solver-writable places on the oracle's state (the solver's modules it imports in
    process, shell files it sources, programs it executes, pytest configuration it picks
    up) with same-named files that end the process with status 0 at load. Fools a verifier
    that trusts an exit status of a process that ran the solver's code in-process."""

    name = "traced-overwrite"


# ------------------------------------------------- data the verifier reads and writes

_MAX_LINKS = 16
_MAX_REPLAYS = 16
_REPLAY_MAX_BYTES = 16 * 1024
_REPLAY_TOTAL_BYTES = 64 * 1024  # the planting script is one exec argument (< 128 KiB)
_NOT_DATA = (".pyc", ".so", ".pth")


def _under(path: str, d: str) -> bool:
    return path.startswith(d.rstrip("/") + "/")


def links(
    accesses: Iterable[Access], writable: Iterable[Access], *, verifier_dir: str, fixed: bool
) -> dict[str, str]:
    """{output: link target}: every solver-writable file the verifier opened for reading
    (and had not written first) made a symlink to the file of the verifier's own directory
    read nearest to it in the trace (the same process first), named as a solver could name
    it: ``/proc/self/cwd/<relative>`` from the reading process's working directory, else the
    absolute path when `verifier_dir` is `fixed` (a mount path, not a random directory)."""
    accesses = list(accesses)
    mine = set(writable)
    executed = {a.path for a in accesses if a.op == "exec"}
    targets = [
        (i, a)
        for i, a in enumerate(accesses)
        if a.op == "open" and a.ok and _under(a.path, verifier_dir) and a.path not in executed
    ]
    written: set[str] = set()
    out: dict[str, str] = {}
    for i, a in enumerate(accesses):
        if a not in mine or not targets:
            continue
        if a.op == "write" and a.ok:
            written.add(a.path)
        if (
            a.op != "open"
            or not a.ok
            or a.path in written
            or a.path in out
            or a.path.endswith(_NOT_DATA)
            or "/__pycache__/" in a.path
        ):
            continue
        _, near = min(targets, key=lambda t: (t[1].pid != a.pid, abs(t[0] - i)))
        rel = posixpath.relpath(near.path, a.cwd or "/")
        if a.cwd and rel != ".." and not rel.startswith("../"):
            out[a.path] = "/proc/self/cwd/" + rel
        elif fixed:
            out[a.path] = near.path
        if len(out) >= _MAX_LINKS:
            break
    return out


def replays(written: Mapping[str, bytes]) -> dict[str, Plant]:
    """The files the verifier wrote in solver-writable places on the oracle's state, as
    plants with the content it wrote there: text only (a shell variable holds no NUL), each
    at most 16 KiB, 64 KiB and 16 files in all."""
    out: dict[str, Plant] = {}
    total = 0
    for path, data in sorted(written.items()):
        if (
            len(data) > _REPLAY_MAX_BYTES
            or b"\0" in data
            or total + len(data) > _REPLAY_TOTAL_BYTES
        ):
            continue
        try:
            text = data.decode()
        except UnicodeDecodeError:
            continue
        out[path], total = (text, 0o644), total + len(data)
        if len(out) >= _MAX_REPLAYS:
            break
    return leaves_only(out)


class TracedLink(Probe):
    """Outputs linked to the verifier's own data: every solver-writable file the verifier
    read on the oracle's state becomes a symlink to the file of the verifier's directory it
    read nearest to it (its expected answer), named ``/proc/self/cwd/expected.txt`` (the
    reading process's working directory is the verifier's) or by a fixed mount path
    (``/tests/expected.txt``). Fools a verifier that compares an output it follows
    symlinks to with an expected file a solver can name.

    Privileged: the link's target is the verifier's own file, named from the verifier's
    trace; a solver never sees the verifier, so it would have to guess that name."""

    name = "traced-link"
    privileged = "the verifier's own file names, read from its trace"

    def __init__(self, targets: Mapping[str, str]) -> None:
        self.targets = dict(targets)

    def script(self, spec: EnvironmentSpec) -> str:
        lines = [
            f'mkdir -p "$(dirname {q(path)})" && rm -f {q(path)} && ln -s {q(target)} {q(path)}'
            for path, target in sorted(self.targets.items())
        ]
        return "\n".join([*lines, "true"]) + "\n"


class TracedReplay(PlantingProbe):
    """Replayed writes: every file the verifier itself wrote in a solver-writable place on
    the oracle's state (a junit report, a results file, a marker) is left there beforehand
    with the content the verifier wrote. Fools a verifier that trusts a file it was supposed
    to write itself: when its checker crashes on an unsolved state, the stale file decides.

    Privileged: the planted content is what the verifier wrote, read from its trace."""

    name = "traced-replay"
    privileged = "what the verifier itself wrote on the oracle's state, read from its trace"
