"""Detecting what a verifier installs or fetches at run time, from its files alone.

Reads shell files (continuations joined, heredoc bodies skipped, `bash -c` followed) and
Python files (`subprocess` / `os.system` argv lists and strings, `urlopen` /
`requests.get` of a literal URL). Invariants: nothing is executed; the result is a
frozen, deterministic `Requirements` (same files → equal value, in reading order), and
`found` says where each requirement was read.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator, Mapping
from typing import Literal

from envfactory.core.models.base import Model

# -- what a verifier needs ------------------------------------------------------------


UvKind = Literal["uvx", "uv run", "uv tool install"]


class UvCommand(Model):
    """One `uvx` / `uv tool run` / `uv run` / `uv tool install` line, as written."""

    kind: UvKind
    argv: tuple[str, ...]  # the invocation up to and including the tool (no tool args)
    python: str | None = None
    with_packages: tuple[str, ...] = ()  # -w / --with, as written
    tool: str = ""


class PipInstall(Model):
    """One `pip install` line: which installer, which packages, where they go."""

    installer: tuple[str, ...]  # ("pip3",), ("python3", "-m", "pip"), ("uv", "pip")
    packages: tuple[str, ...]
    flags: tuple[str, ...] = ()  # placement flags kept as written (--user, --system, …)


class Requirements(Model):
    """What a verifier installs or fetches at run time; `found` says where each was read."""

    apt: tuple[str, ...] = ()
    uv_installer: bool = False
    uv_version: str | None = None  # None: the installer's latest
    uv_commands: tuple[UvCommand, ...] = ()
    pip: tuple[PipInstall, ...] = ()
    urls: tuple[str, ...] = ()  # downloads other than the uv installer: network needs
    found: tuple[str, ...] = ()  # "test.sh:3: apt-get install -y curl"
    notes: tuple[str, ...] = ()

    @property
    def pythons(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.python for c in self.uv_commands if c.python))

    @property
    def needs_uv(self) -> bool:
        return (
            self.uv_installer
            or bool(self.uv_commands)
            or any(p.installer[0] == "uv" for p in self.pip)
        )

    @property
    def empty(self) -> bool:
        return not (self.apt or self.needs_uv or self.pip or self.urls)


class _Found:
    """Mutable collector used while scanning; frozen into `Requirements` at the end."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = files
        self.apt: dict[str, None] = {}
        self.uv_installer = False
        self.uv_version: str | None = None
        self.uv: dict[UvCommand, None] = {}
        self.pip: dict[PipInstall, None] = {}
        self.urls: dict[str, None] = {}
        self.found: list[str] = []
        self.notes: dict[str, None] = {}
        self.where = ""

    def freeze(self) -> Requirements:
        return Requirements(
            apt=tuple(self.apt),
            uv_installer=self.uv_installer,
            uv_version=self.uv_version,
            uv_commands=tuple(self.uv),
            pip=tuple(self.pip),
            urls=tuple(self.urls),
            found=tuple(self.found),
            notes=tuple(self.notes),
        )


def detect_requirements(files: Mapping[str, bytes]) -> Requirements:
    """Read the verifier's shell and Python files (paths relative to the verifier
    directory) for what they install or download at run time."""
    acc = _Found(files)
    for name in sorted(files):
        text = files[name].decode(errors="replace")
        if name.endswith(".py"):
            _scan_python(acc, name, text)
        elif name.endswith((".sh", ".bash")) or re.match(r"#!\S*\b(ba|da)?sh\b", text):
            _scan_shell(acc, name, text)
    return acc.freeze()


# -- shell ----------------------------------------------------------------------------

_SEPARATORS = {";", "&&", "||", "|", "&", "|&", ";;", "(", ")", "{", "}", "$("}
_PREFIX_WORDS = {
    "sudo",
    "env",
    "time",
    "exec",
    "command",
    "nohup",
    "then",
    "do",
    "else",
    "if",
    "elif",
    "while",
    "until",
    "!",
    "-E",
    "-H",
}
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, line) with backslash continuations joined, heredoc bodies skipped."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start, line = i + 1, lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i]
        i += 1
        heredoc = _HEREDOC.search(line)
        if heredoc:
            while i < len(lines) and lines[i].strip() != heredoc.group(1):
                i += 1
            i += 1
        yield start, line


def _words(line: str) -> list[list[str]]:
    """The simple commands of one line, as argv lists (redirections dropped)."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
    lex.whitespace_split = True
    try:
        tokens = list(lex)
    except ValueError:  # an unbalanced quote: fall back to plain words
        tokens = line.split()
    commands: list[list[str]] = [[]]
    skip = False
    for tok in tokens:
        if skip:
            skip = False
        elif tok in _SEPARATORS:
            commands.append([])
        elif tok and set(tok) <= set("<>&"):
            skip = True  # the redirection's target
            if commands[-1] and commands[-1][-1].isdigit():
                commands[-1].pop()  # the fd number of `2>`
        else:
            commands[-1].append(tok)
    return [c for c in commands if c]


def _strip_prefix(argv: list[str]) -> list[str]:
    while argv and (argv[0] in _PREFIX_WORDS or re.match(r"^[A-Za-z_]\w*=", argv[0])):
        argv = argv[1:]
    return argv


def _scan_shell(acc: _Found, name: str, text: str) -> None:
    for lineno, line in _logical_lines(text):
        if line.lstrip().startswith("#"):
            continue
        for argv in _words(line):
            acc.where = f"{name}:{lineno}"
            _dispatch(acc, _strip_prefix(argv))


def _dispatch(acc: _Found, argv: list[str]) -> None:
    if not argv:
        return
    prog = argv[0].rsplit("/", 1)[-1]
    args = argv[1:]
    if prog in ("bash", "sh", "dash") and len(args) >= 2 and args[0] == "-c":
        for inner in _words(args[1]):
            _dispatch(acc, _strip_prefix(inner))
    elif prog in ("apt-get", "apt", "aptitude") and "install" in args:
        _apt(acc, argv)
    elif prog in ("curl", "wget"):
        _download(acc, argv)
    elif prog == "git" and args[:1] == ["clone"]:
        for url in (a for a in args if re.match(r"^(https?|git)://|^git@", a)):
            _need_url(acc, url, argv)
    else:
        _dispatch_python(acc, prog, argv)


def _dispatch_python(acc: _Found, prog: str, argv: list[str]) -> None:
    """pip, `python -m pip`, uv and uvx: the Python installers a verifier may call."""
    args = argv[1:]
    if re.fullmatch(r"pip(3(\.\d+)?)?", prog) and args[:1] == ["install"]:
        _pip(acc, (prog,), args[1:], argv)
    elif re.fullmatch(r"python(3(\.\d+)?)?", prog) and args[:3] == ["-m", "pip", "install"]:
        _pip(acc, (prog, "-m", "pip"), args[3:], argv)
    elif prog == "uv" and args[:2] == ["pip", "install"]:
        _pip(acc, ("uv", "pip"), args[2:], argv)
    elif prog == "uvx" or (prog == "uv" and args[:2] == ["tool", "run"]):
        _uv(acc, "uvx", argv[: 1 if prog == "uvx" else 3], argv[1 if prog == "uvx" else 3 :])
    elif prog == "uv" and args[:2] == ["tool", "install"]:
        _uv(acc, "uv tool install", argv[:3], argv[3:])
    elif prog == "uv" and args[:1] == ["run"]:
        _uv(acc, "uv run", argv[:2], argv[2:])


def _record(acc: _Found, argv: list[str]) -> None:
    acc.found.append(f"{acc.where}: {shlex.join(argv)}")


_APT_VALUE_OPTS = {"-o", "-t", "-c", "--target-release", "--option", "--config-file"}


def _apt(acc: _Found, argv: list[str]) -> None:
    args = argv[argv.index("install") + 1 :]
    packages = _positional(args, _APT_VALUE_OPTS)
    for p in packages:
        acc.apt[p] = None
    if packages:
        _record(acc, argv)


_UV_INSTALLER = re.compile(
    r"^https?://(astral\.sh/uv(?:/(?P<v1>[0-9][^/]*))?/install\.sh"
    r"|github\.com/astral-sh/uv/releases/(?:download/(?P<v2>[^/]+)|latest/download)/uv-installer\.sh)"
)


def _download(acc: _Found, argv: list[str]) -> None:
    for url in (a for a in argv[1:] if re.match(r"^https?://", a)):
        m = _UV_INSTALLER.match(url)
        if m:
            acc.uv_installer = True
            acc.uv_version = acc.uv_version or m.group("v1") or m.group("v2")
            _record(acc, argv)
        else:
            _need_url(acc, url, argv)


def _need_url(acc: _Found, url: str, argv: list[str]) -> None:
    acc.urls[url] = None
    _record(acc, argv)


def _positional(args: list[str], value_opts: set[str]) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in value_opts:
            skip = True
        elif not a.startswith("-"):
            out.append(a)
    return out


_PIP_VALUE_OPTS = {
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--python",
    "-p",
    "--cache-dir",
    "--trusted-host",
    "--progress-bar",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--src",
    "-e",
    "--editable",
    "--upgrade-strategy",
    "--only-binary",
    "--no-binary",
    "-C",
    "--config-settings",
    "--index",
    "--default-index",
    "--index-strategy",
    "--keyring-provider",
    "--resolution",
    "--prerelease",
    "--link-mode",
    "--log",
    "--timeout",
    "--retries",
    "--proxy",
    "--cert",
    "--client-cert",
    "--exclude-newer",
}
# Flags that decide where packages go: the layer installs with the same ones.
_PIP_PLACEMENT = {"--user", "--system", "--break-system-packages"}
_PIP_PLACEMENT_VALUE = {"-t", "--target", "--prefix", "--root", "--python", "-p"}


def _pip(acc: _Found, installer: tuple[str, ...], args: list[str], argv: list[str]) -> None:
    packages: list[str] = []
    flags: list[str] = []
    it = iter(_split_equals(args))
    for a in it:
        if a in ("-r", "--requirement"):
            packages += _requirements_file(acc, next(it, ""))
        elif a in _PIP_PLACEMENT:
            flags.append(a)
        elif a in _PIP_PLACEMENT_VALUE:
            flags += [a, next(it, "")]
        elif a in ("-e", "--editable"):
            acc.notes[f"{acc.where}: editable install of {next(it, '')}: nothing to fetch"] = None
        elif a in _PIP_VALUE_OPTS:
            next(it, "")
        elif not a.startswith("-"):
            packages.append(a)
    for p in packages:
        _pip_package(acc, p, installer, flags)
    _record(acc, argv)


def _pip_package(acc: _Found, spec: str, installer: tuple[str, ...], flags: list[str]) -> None:
    if re.match(r"^(https?|git\+\w+)://", spec):
        acc.urls[spec] = None
    elif spec.startswith((".", "/")) or spec.endswith((".whl", ".tar.gz", ".zip")):
        acc.notes[f"{acc.where}: pip install of a local path {spec}: nothing to fetch"] = None
    else:
        acc.pip[PipInstall(installer=installer, packages=(spec,), flags=tuple(flags))] = None


def _split_equals(args: list[str]) -> list[str]:
    """`--opt=value` → `--opt value`; `-rFILE` → `-r FILE`."""
    out: list[str] = []
    for a in args:
        if a.startswith("--") and "=" in a:
            out += a.split("=", 1)
        elif re.match(r"^-[rcpiwe]\S", a):
            out += [a[:2], a[2:]]
        else:
            out.append(a)
    return out


def _requirements_file(acc: _Found, ref: str, depth: int = 0) -> list[str]:
    """The requirements in `ref`, resolved against the verifier's files (TB2 scripts name
    them as /tests/FILE or FILE)."""
    key = _resolve_file(acc.files, ref)
    if key is None or depth > 5:
        acc.notes[f"{acc.where}: requirements file {ref} is not among the verifier's files"] = None
        return []
    out: list[str] = []
    for raw in acc.files[key].decode(errors="replace").splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if line.startswith(("-r ", "--requirement")):
            out += _requirements_file(acc, line.split(None, 1)[-1].lstrip("= "), depth + 1)
        elif line and not line.startswith("-"):
            out.append(line)
    return out


def _resolve_file(files: Mapping[str, bytes], ref: str) -> str | None:
    bare = re.sub(r"^(\./|/tests/|tests/)", "", ref)
    for candidate in (ref, bare, ref.lstrip("/")):
        if candidate in files:
            return candidate
    tail = [k for k in files if k.rsplit("/", 1)[-1] == bare.rsplit("/", 1)[-1]]
    return tail[0] if len(tail) == 1 else None


_UV_VALUE_OPTS = _PIP_VALUE_OPTS | {
    "-w",
    "--with",
    "--from",
    "--with-requirements",
    "--with-editable",
    "--directory",
    "--project",
    "--config-file",
    "--python-preference",
    "--env-file",
    "--refresh-package",
    "-P",
    "--upgrade-package",
    "--reinstall-package",
    "--color",
    "--package",
    "--extra",
    "--group",
    "--script",
    "-m",
    "--module",
}


def _uv(acc: _Found, kind: UvKind, head: list[str], args: list[str]) -> None:
    """Parse uv's options up to the tool; what follows the tool belongs to the tool."""
    python, with_, tool, taken = None, [], "", list(head)
    it = iter(_split_equals(args))
    for a in it:
        if a in _UV_VALUE_OPTS:
            value = next(it, "")
            taken += [a, value]
            if a in ("-p", "--python"):
                python = value
            elif a in ("-w", "--with"):
                with_ += [w.strip() for w in value.split(",") if w.strip()]
        elif a.startswith("-"):
            taken.append(a)
        else:
            tool = a
            taken.append(a)
            break
    if kind == "uv run" and not (with_ or python):
        return  # runs what the image or project has: nothing to warm
    acc.uv[
        UvCommand(
            kind=kind, argv=tuple(taken), python=python, tool=tool, with_packages=tuple(with_)
        )
    ] = None
    _record(acc, head + args)


# -- Python ---------------------------------------------------------------------------

_URL_CALLS = {"urlopen", "urlretrieve", "get", "post", "request", "stream", "download"}


def _scan_python(acc: _Found, name: str, text: str) -> None:
    """Commands a Python verifier runs (subprocess / os.system) and URLs it opens."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        acc.notes[f"{name}: not valid Python; not scanned"] = None
        return
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        acc.where = f"{name}:{node.lineno}"
        first = node.args[0]
        argv = _literal_argv(first)
        if argv is not None:
            _dispatch(acc, _strip_prefix(argv))
        elif isinstance(first, ast.Constant) and isinstance(first.value, str):
            if _call_name(node) in _URL_CALLS and re.match(r"^https?://", first.value):
                _need_url(acc, first.value, [_call_name(node), first.value])
            else:
                for inner in _words(first.value):
                    _dispatch(acc, _strip_prefix(inner))


def _literal_argv(node: ast.expr) -> list[str] | None:
    """`["pip", "install", "x"]` or `[sys.executable, "-m", "pip", …]` as an argv."""
    if not isinstance(node, ast.List | ast.Tuple) or not node.elts:
        return None
    out = []
    for e in node.elts:
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            out.append(e.value)
        elif isinstance(e, ast.Attribute) and e.attr == "executable":
            out.append("python3")
        else:
            return None
    return out


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
