"""What a Python project declares about its own environment, read statically at the parent:
the extras and requirement files its tests need, and the Python versions it supports.

    files = ProjectFiles(paths, read)         # the parent's tree, read through git
    python_installs(files)                    # requirement files, test extras, editable
    python_ladder(files, AVAILABLE)           # the Pythons to try, in order, each with why

Nothing of the project is run on the host: pyproject.toml and setup.cfg are parsed as
data, setup.py as a syntax tree (only literal `extras_require` / `python_requires` are
read), tox.ini and CI workflows by pattern. A file that does not parse is skipped (the
build will say what is wrong with it).
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase

#: extras that hold what a project's tests import, in the order they are installed
TEST_EXTRAS = ("test", "tests", "testing", "dev")
#: requirement files installed before the project itself (glob patterns, repository root)
REQUIREMENT_FILES = (
    "requirements.txt",
    "requirements[-_]test*.txt",
    "requirements[-_]dev*.txt",
    "test[-_]requirements.txt",
    "tests[-_]requirements.txt",
    "dev[-_]requirements.txt",
    "requirements/test*.txt",
    "requirements/dev*.txt",
)


@dataclass(frozen=True)
class ProjectFiles:
    """A commit's tree: its paths, and a reader of one file's bytes."""

    paths: frozenset[str]
    read: Callable[[str], bytes]

    def text(self, path: str) -> str | None:
        if path not in self.paths:
            return None
        try:
            return self.read(path).decode()
        except (UnicodeDecodeError, OSError):
            return None


@dataclass(frozen=True)
class PythonInstalls:
    """What the image installs: requirement files, then the project with its test extras."""

    requirements: tuple[str, ...] = ()
    editable: bool = False
    extras: tuple[str, ...] = ()
    #: one line per install and where it was declared ("extra test (pyproject.toml)")
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class PythonChoice:
    version: str  # "3.11"
    why: str  # "named by classifiers, tox.ini envlist"


def python_installs(files: ProjectFiles) -> PythonInstalls:
    reqs = tuple(p for pat in REQUIREMENT_FILES for p in sorted(files.paths) if fnmatchcase(p, pat))
    reqs = tuple(dict.fromkeys(reqs))
    editable = "pyproject.toml" in files.paths or "setup.py" in files.paths
    declared = declared_extras(files) if editable else {}
    extras = tuple(e for e in TEST_EXTRAS if e in declared)
    notes = tuple(f"requirements {r}" for r in reqs) + (
        ("the project (pip install -e .)",) if editable else ()
    )
    notes += tuple(f"extra {e} ({declared[e]})" for e in extras)
    return PythonInstalls(reqs, editable, extras, notes)


def declared_extras(files: ProjectFiles) -> dict[str, str]:
    """Extra name (normalised as pip does) → the file that declares it."""
    out: dict[str, str] = {}
    for path, names in (
        ("pyproject.toml", _pyproject_extras(files.text("pyproject.toml"))),
        ("setup.cfg", _setup_cfg_extras(files.text("setup.cfg"))),
        ("setup.py", _setup_py_keys(files.text("setup.py"), "extras_require")),
    ):
        for name in names:
            out.setdefault(_normalise(name), path)
    return out


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject(text: str | None) -> dict[str, object]:
    try:
        return tomllib.loads(text) if text else {}
    except tomllib.TOMLDecodeError:
        return {}


def _pyproject_extras(text: str | None) -> list[str]:
    project = _pyproject(text).get("project")
    extras = project.get("optional-dependencies") if isinstance(project, dict) else None
    return [str(k) for k in extras] if isinstance(extras, dict) else []


def _setup_cfg(text: str | None) -> configparser.ConfigParser | None:
    if not text:
        return None
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string(text)
    except configparser.Error:
        return None
    return cfg


def _setup_cfg_extras(text: str | None) -> list[str]:
    cfg = _setup_cfg(text)
    if cfg is None or not cfg.has_section("options.extras_require"):
        return []
    return list(cfg["options.extras_require"])


def _setup_py_keys(text: str | None, keyword: str) -> list[str]:
    """The keys of `setup(keyword=...)` when it is a dict literal, `dict(...)`, or a
    module-level name bound to one; a string literal's value for a string keyword."""
    tree = _parse(text)
    if tree is None:
        return []
    bound = {
        t.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and dotted_tail(node.func) == "setup":
            for kw in node.keywords:
                if kw.arg == keyword:
                    value = (
                        bound.get(kw.value.id, kw.value)
                        if isinstance(kw.value, ast.Name)
                        else kw.value
                    )
                    return _literal_keys(value)
    return []


def _parse(text: str | None) -> ast.Module | None:
    try:
        return ast.parse(text) if text else None
    except (SyntaxError, ValueError):
        return None


def dotted_tail(node: ast.expr) -> str:
    """`name` of `name` or of `a.b.name`; '' for any other expression."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _literal_keys(value: ast.expr) -> list[str]:
    if isinstance(value, ast.Dict):
        return [
            k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ]
    if isinstance(value, ast.Call) and dotted_tail(value.func) == "dict":
        return [kw.arg for kw in value.keywords if kw.arg]
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return [value.value]
    return []


# -- the Python ladder ---------------------------------------------------------------------

_CLASSIFIER = re.compile(r"Programming Language :: Python :: (3\.\d+)\s*$")
_TOX_ENV = re.compile(r"\bpy3(\d{1,2})\b")
_CI_VERSION = re.compile(r"""['"]?\b(3\.\d{1,2})\b['"]?""")
_CI_KEY = re.compile(r"^\s*-?\s*python(?:-version|_version)?\s*:\s*(.+)$", re.M)


def python_ladder(files: ProjectFiles, available: tuple[str, ...]) -> list[PythonChoice]:
    """The Pythons to build with, first choice first: those `requires-python` allows,
    the versions the project names (classifiers, tox envlist, CI matrix) before the
    others, newest named first; the others by nearness to the newest named. With nothing
    declared, `available` in its own order. A `requires-python` that allows none of
    `available` is set aside (said in `why`): the build is tried anyway."""
    spec, spec_from = requires_python(files)
    named = named_versions(files)
    allowed = [v for v in available if spec is None or _allows(spec, v)]
    note = f"{spec_from} {spec}" if spec else ""
    if not allowed:
        allowed, note = list(available), f"{spec_from} {spec} allows none of {', '.join(available)}"
    newest = max((_tuple(v) for v in named), default=None)
    if newest is None:
        order = allowed
    else:
        order = sorted(
            allowed,
            key=lambda v: (
                v not in named,
                -_tuple(v)[1] if v in named else abs(_tuple(v)[1] - newest[1]),
            ),
        )
    choices = []
    for v in order:
        why = [f"named by {', '.join(named[v])}"] if v in named else []
        why += [note] if note else []
        choices.append(PythonChoice(v, "; ".join(why) or "nothing declared: the default order"))
    return choices


def requires_python(files: ProjectFiles) -> tuple[str | None, str]:
    project = _pyproject(files.text("pyproject.toml")).get("project")
    if isinstance(project, dict) and isinstance(project.get("requires-python"), str):
        return str(project["requires-python"]), "requires-python"
    cfg = _setup_cfg(files.text("setup.cfg"))
    if cfg is not None and cfg.has_option("options", "python_requires"):
        return cfg.get("options", "python_requires").strip(), "python_requires (setup.cfg)"
    found = _setup_py_keys(files.text("setup.py"), "python_requires")
    return (found[0], "python_requires (setup.py)") if found else (None, "")


def named_versions(files: ProjectFiles) -> dict[str, list[str]]:
    """Version "3.X" → where the project names it."""
    out: dict[str, list[str]] = {}

    def add(version: str, where: str) -> None:
        if where not in out.setdefault(version, []):
            out[version].append(where)

    project = _pyproject(files.text("pyproject.toml")).get("project")
    classifiers = project.get("classifiers", []) if isinstance(project, dict) else []
    cfg = _setup_cfg(files.text("setup.cfg"))
    if cfg is not None and cfg.has_option("metadata", "classifiers"):
        classifiers = [*classifiers, *cfg.get("metadata", "classifiers").splitlines()]
    for c in classifiers if isinstance(classifiers, list) else []:
        if m := _CLASSIFIER.match(str(c).strip()):
            add(m.group(1), "classifiers")
    for m in _TOX_ENV.finditer(_tox_envlist(files.text("tox.ini"))):
        add(f"3.{m.group(1)}", "tox envlist")
    for path in sorted(p for p in files.paths if fnmatchcase(p, ".github/workflows/*.y*ml")):
        for line in _CI_KEY.findall(files.text(path) or ""):
            for v in _CI_VERSION.findall(line):
                add(v, "CI matrix")
    return out


def _tox_envlist(text: str | None) -> str:
    cfg = _setup_cfg(text)
    if cfg is None or not cfg.has_option("tox", "envlist"):
        return ""
    return cfg.get("tox", "envlist")


def _tuple(version: str) -> tuple[int, int]:
    parts = (version.split(".") + ["0"])[:2]
    return int(parts[0]), int(parts[1])


def _allows(spec: str, version: str) -> bool:
    """Whether "3.X" (taken as 3.X.0 and as its latest patch) meets every clause of a
    PEP 440 specifier; clauses that are not understood are ignored."""
    v = _tuple(version)
    for clause in spec.split(","):
        m = re.match(r"\s*(~=|==|!=|>=|<=|>|<)\s*([0-9]+(?:\.[0-9]+)*)(\.\*)?\s*$", clause)
        if not m:
            continue
        op, target, star = m.group(1), tuple(int(x) for x in m.group(2).split(".")), m.group(3)
        t2 = (target + (0,))[:2]
        ok = {
            ">=": v >= t2 or (len(target) > 2 and v == t2[:2]),
            ">": v > t2 or (len(target) > 2 and v == t2),
            "<=": v <= t2,
            "<": v < t2 or (len(target) > 2 and v == t2),
            "==": v == t2,
            "!=": not (v == t2 and (star or len(target) <= 2)),
            "~=": v >= t2 and v[0] == t2[0],
        }[op]
        if not ok:
            return False
    return True
