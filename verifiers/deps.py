"""Verifier dependencies: what a verifier installs or fetches at run time, and a
verification layer, built once per task image, that makes those lines succeed offline.

Real Terminal-Bench 2 verifiers install their tools when they run (`apt-get install -y
curl`, the uv installer from astral.sh, `uvx -p 3.13 -w pytest==8.4.1 pytest …`, `pip
install -r requirements.txt`). envfactory runs every verification in a fresh container
with **no network**, so `detect_requirements` reads the verifier's shell and Python files
for those lines and `ensure_verification_layer` builds an image FROM the task image (with
build network) that already holds the result: the apt packages, `uv`/`uvx` from PyPI in
`$HOME/.local/bin` with the installer's `env` file, uv's cache warmed by one pre-run of
each `uvx`/`uv run`/`uv tool` line, the pip packages, and `/etc/uv/uv.toml` saying
`offline = true` and `python-downloads = "never"`.

Invariants:
- the layer is for verification containers only, never for solver sandboxes: the solver
  never sees what the verifier needs (DESIGN.md invariant 2);
- cached by content: the generated Dockerfile + script name the task image by id, so the
  same task image and requirements reuse the same image (`engine.build`'s content cache),
  tagged `envfactory/verify:<hash>`;
- a requirement that cannot be provided (a Python the release lacks, a package the mirror
  or PyPI lacks, a URL the run would download) is named in `missing`; the layer is still
  built with the rest. The build script never fails on one requirement: it records each
  outcome in `MANIFEST` inside the image, which is read back after every (cached) build;
- model-free; everything the verifier wrote is shell-quoted before it reaches the build.

What the run-time lines do in a container from the layer, started as the runner starts
it (`--network none`, every capability dropped, `env -i PATH=… HOME=/root`), seen here
on bookworm (Docker 20.10, uv 0.9.5):
- `apt-get update` prints "Temporary failure resolving 'deb.debian.org'" (or "Method
  http has died") and setgroups errors and exits 100 (TB2 scripts do not `set -e` around
  it). The layer sets `Acquire::Retries "0"` (default retries back off for ~9 s) and
  deletes the package lists it fetched (as the base image does): at load average ~25
  `apt-get update` then took 3.7 s instead of 38 s;
- `apt-get install -y curl` of a package the layer installed prints "curl is already the
  newest version" and exits 0, lists or not (1.7 s without lists, 27 s with them at
  that load; chown warnings on apt's partial dirs are harmless);
- `curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh`: curl says "Could not resolve
  host", sh reads nothing and exits 0, so the pipeline exits 0;
- `source $HOME/.local/bin/env` puts `/root/.local/bin` first on PATH, exit 0;
- `uvx -p 3.11 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest …` runs from uv's
  cache (~0.5 s); `uvx -p 3.13 …` on bookworm fails with "No interpreter found for Python
  3.13 … Python downloads are set to 'never'" — listed in `missing` at build time;
- `pip install pkg==v` of an installed pin says "Requirement already satisfied", exit 0.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import shlex
import tarfile
from collections.abc import Callable, Iterator, Mapping
from typing import Literal

from envfactory.core.errors import SandboxFileNotFound
from envfactory.core.models.base import Model
from sandboxes.protocol import SandboxEngine

MANIFEST = "/var/lib/envfactory/verification-layer"
LAYER_REPO = "envfactory/verify"
UV_HOME_BIN = "/root/.local/bin"  # where the uv installer puts uv/uvx for HOME=/root
Log = Callable[[str], None]


# -- what a verifier needs ------------------------------------------------------------


class UvCommand(Model):
    """One `uvx` / `uv tool run` / `uv run` / `uv tool install` line, as written."""

    kind: Literal["uvx", "uv run", "uv tool install"]
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
            apt=tuple(self.apt), uv_installer=self.uv_installer, uv_version=self.uv_version,
            uv_commands=tuple(self.uv), pip=tuple(self.pip), urls=tuple(self.urls),
            found=tuple(self.found), notes=tuple(self.notes),
        )  # fmt: skip


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
_PREFIX_WORDS = {"sudo", "env", "time", "exec", "command", "nohup", "then", "do", "else",
                 "if", "elif", "while", "until", "!", "-E", "-H"}  # fmt: skip
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
    elif re.fullmatch(r"pip(3(\.\d+)?)?", prog) and args[:1] == ["install"]:
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
    "-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url",
    "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--python", "-p",
    "--cache-dir", "--trusted-host", "--progress-bar", "--platform", "--python-version",
    "--implementation", "--abi", "--src", "-e", "--editable", "--upgrade-strategy",
    "--only-binary", "--no-binary", "-C", "--config-settings", "--index", "--default-index",
    "--index-strategy", "--keyring-provider", "--resolution", "--prerelease", "--link-mode",
    "--log", "--timeout", "--retries", "--proxy", "--cert", "--client-cert",
    "--exclude-newer",
}  # fmt: skip
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
    "-w", "--with", "--from", "--with-requirements", "--with-editable", "--directory",
    "--project", "--config-file", "--python-preference", "--env-file", "--refresh-package",
    "-P", "--upgrade-package", "--reinstall-package", "--color", "--package", "--extra",
    "--group", "--script", "-m", "--module",
}  # fmt: skip


def _uv(acc: _Found, kind: str, head: list[str], args: list[str]) -> None:
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
    acc.uv[UvCommand(kind=kind, argv=tuple(taken), python=python, tool=tool,
                     with_packages=tuple(with_))] = None  # fmt: skip
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


# -- the verification layer -----------------------------------------------------------


class VerificationLayer(Model):
    """The image verifications start from, and what it does and does not provide."""

    image: str  # the layer's image id (the task image itself when nothing was needed)
    source_image: str  # the task image it was built FROM
    tag: str | None = None
    provided: tuple[str, ...] = ()  # "uv 0.9.5 (PyPI)", "pytest==8.4.1 (pip3)", "apt: curl"
    missing: tuple[str, ...] = ()  # "python 3.13 (not in this image's release)", "network: URL"
    notes: tuple[str, ...] = ()
    cached: bool = False
    build_s: float = 0.0


_UV_STAGE = """\
FROM {base} AS envfactory-uv
RUN mkdir -p /out && cd /tmp && ( python3 -m pip download -q --no-deps --only-binary=:all: \
--dest w {spec} && python3 -m zipfile -e w/uv-*.whl x && install -m 755 \
x/uv-*.data/scripts/uv x/uv-*.data/scripts/uvx /out/ ) || echo {spec} > /out/NOT-ON-PYPI
"""
_LAYER = """\
FROM {image}
{copy_uv}COPY envfactory-layer.sh /opt/envfactory-layer.sh
RUN sh /opt/envfactory-layer.sh && rm -rf /opt/envfactory-layer.sh /opt/envfactory-uv
"""
# What the uv installer writes to $HOME/.local/bin/env (uv 0.9.x), so `source` works.
_UV_ENV_FILE = r"""#!/bin/sh
# add binaries to PATH if they aren't added yet
# affix colons on either side of $PATH to simplify matching
case ":${PATH}:" in
    *:"$HOME/.local/bin":*)
        ;;
    *)
        # Prepending path in case a system-installed binary needs to be overridden
        export PATH="$HOME/.local/bin:$PATH"
        ;;
esac
"""
_HEADER = f"""\
set +e
M={MANIFEST}; mkdir -p "$(dirname "$M")"; : > "$M"
ok() {{ printf 'provided\\t%s\\n' "$1" >> "$M"; }}
miss() {{ printf 'missing\\t%s\\n' "$1" >> "$M"; }}
note() {{ printf 'note\\t%s\\n' "$1" >> "$M"; }}
export DEBIAN_FRONTEND=noninteractive HOME=/root PATH={UV_HOME_BIN}:$PATH
"""


def layer_context(requirements: Requirements, image: str, python_base: str) -> bytes:
    """The build context (Dockerfile + script) of the layer; deterministic, so the
    engine's content cache reuses it for the same image and requirements."""
    uv_stage = ""
    copy_uv = ""
    if requirements.needs_uv:
        uv_stage = _UV_STAGE.format(base=python_base, spec=shlex.quote(_uv_spec(requirements)))
        copy_uv = "COPY --from=envfactory-uv /out/ /opt/envfactory-uv/\n"
    dockerfile = uv_stage + _LAYER.format(image=image, copy_uv=copy_uv)
    return _tar({"Dockerfile": dockerfile, "envfactory-layer.sh": layer_script(requirements)})


def _uv_spec(requirements: Requirements) -> str:
    v = requirements.uv_version
    return f"uv=={v}" if v and re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", v) else "uv"


def layer_script(r: Requirements) -> str:
    """The shell script that installs everything; each outcome lands in the manifest."""
    parts = [_HEADER, _apt_part(r)]
    if r.needs_uv:
        parts.append(_uv_part(r))
    parts += [_python_part(v) for v in r.pythons]
    parts += [_uv_command_part(c) for c in r.uv_commands]
    parts += [_pip_part(installer, flags, pkgs) for (installer, flags), pkgs in _pip_groups(r)]
    parts += [f"miss {shlex.quote('network: ' + url)}\n" for url in r.urls]
    parts.append(_offline_part(r))
    return "".join(parts)


def _apt_part(r: Requirements) -> str:
    if not (r.apt or r.pythons):
        return ""
    lines = ["if command -v apt-get >/dev/null 2>&1; then",
             "  apt-get update -q || note 'apt-get update failed at build time'"]  # fmt: skip
    if r.apt:
        pkgs = " ".join(shlex.quote(p) for p in r.apt)
        lines += [
            f"  if apt-get install -y -q --no-install-recommends {pkgs}; then",
            *(f"    ok {shlex.quote('apt: ' + p)}" for p in r.apt),
            f'  else for p in {pkgs}; do apt-get install -y -q --no-install-recommends "$p"'
            ' && ok "apt: $p" || miss "apt: $p (not in this image\'s release)"; done; fi',
        ]
    lines.append("else")
    lines += [f"  miss {shlex.quote(f'apt: {p} (the image has no apt-get)')}" for p in r.apt]
    lines.append("  true\nfi\n")
    return "\n".join(lines)


def _uv_part(r: Requirements) -> str:
    missing = shlex.quote(f"{_uv_spec(r)} (not on PyPI)")
    return f"""\
if [ -x /opt/envfactory-uv/uv ]; then
  command -v uv >/dev/null 2>&1 || had_no_uv=1
  mkdir -p {UV_HOME_BIN} && cp /opt/envfactory-uv/uv /opt/envfactory-uv/uvx {UV_HOME_BIN}/
  cat > {UV_HOME_BIN}/env <<'ENVFACTORY_EOF'
{_UV_ENV_FILE}ENVFACTORY_EOF
  {_symlink_uv(r)}
  ok "uv $(uv --version | cut -d' ' -f2) (PyPI)"
else miss {missing}; fi
mkdir -p /etc/uv && printf 'python-downloads = "never"\\n' > /etc/uv/uv.toml
"""


def _symlink_uv(r: Requirements) -> str:
    """Without an installer line the script expects uv on PATH: put it there."""
    if r.uv_installer:
        return ":"
    return (
        f'[ -n "$had_no_uv" ] && ln -sf {UV_HOME_BIN}/uv {UV_HOME_BIN}/uvx /usr/local/bin/ '
        "&& note 'uv linked into /usr/local/bin (the verifier runs it without installing it)'"
    )


def _python_part(version: str) -> str:
    m = re.fullmatch(r"(?:python|cpython[-@]?)?(3\.\d+)(?:\.\d+)?", version)
    apt = f"apt-get install -y -q --no-install-recommends python{m.group(1)}" if m else "false"
    v, named = shlex.quote(version), shlex.quote(f"python {version}")
    lost = shlex.quote(f"python {version} (not in this image's release)")
    return (
        f"if uv python find {v} >/dev/null 2>&1; then ok {named}\n"
        f"elif {apt} && uv python find {v} >/dev/null 2>&1; then ok {shlex.quote(f'python {version} (apt)')}\n"
        f"else miss {lost}; fi\n"
    )  # fmt: skip


def _uv_command_part(c: UvCommand) -> str:
    cmd = shlex.join(c.argv)
    run = cmd if c.kind == "uv tool install" else f"{cmd} --version || {cmd} --help"
    what = " ".join(
        [c.kind if c.kind != "uvx" else "uvx", c.tool]
        + ([f"-p {c.python}"] if c.python else [])
        + [f"--with {w}" for w in c.with_packages]
    )
    guard = f"uv python find {shlex.quote(c.python)} >/dev/null 2>&1" if c.python else "true"
    return (
        f"if ! {guard}; then miss {shlex.quote(f'{what} (needs python {c.python})')}\n"
        f'elif (cd "$(mktemp -d)" && {{ {run}; }}); then ok {shlex.quote(what + " (cached)")}\n'
        f"else miss {shlex.quote(what + ' (the pre-run failed; see the build log)')}; fi\n"
    )


def _pip_groups(r: Requirements) -> list[tuple[tuple[tuple[str, ...], tuple[str, ...]], list[str]]]:
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for p in r.pip:
        groups.setdefault((p.installer, p.flags), []).extend(p.packages)
    return list(groups.items())


def _pip_part(installer: tuple[str, ...], flags: tuple[str, ...], pkgs: list[str]) -> str:
    inst = shlex.join([*installer, "install", *flags])
    if installer == ("uv", "pip") and not {"--system", "--python", "-p", "--target"} & set(flags):
        # Into a project venv at run time: warm uv's cache in a scratch venv.
        inst = f'cd "$(mktemp -d)" && uv venv -q && {inst}'
    label = " ".join(installer)
    quoted = " ".join(shlex.quote(p) for p in pkgs)
    return (
        f"if ! command -v {shlex.quote(installer[0])} >/dev/null 2>&1; then "
        f'for p in {quoted}; do miss "$p ({installer[0]} is not in the image)"; done\n'
        f'elif ({inst} {quoted}); then for p in {quoted}; do ok "$p ({label})"; done\n'
        f'else for p in {quoted}; do ({inst} "$p") && ok "$p ({label})" || '
        f'miss "$p (not installable by {label})"; done; fi\n'
    )


def _offline_part(r: Requirements) -> str:
    lines = []
    if r.needs_uv:
        lines.append("printf 'offline = true\\n' >> /etc/uv/uv.toml")
    if r.apt or r.pythons:
        # Offline, apt's default 3 retries with back-off turn `apt-get update` into ~9 s,
        # and parsing 80 MB of package lists costs ~30 s on a busy overlay filesystem;
        # without lists, `apt-get install` of an installed package still exits 0. The
        # lists/partial directory stays: apt cannot re-create it with capabilities dropped.
        lines.append(
            "[ -d /etc/apt/apt.conf.d ] && echo 'Acquire::Retries \"0\";' > "
            "/etc/apt/apt.conf.d/99envfactory-offline"
        )
        lines.append("find /var/lib/apt/lists -maxdepth 1 -type f -delete; apt-get clean")
    return "\n".join(lines) + "\nexit 0\n"


def _tar(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in sorted(members.items()):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def ensure_verification_layer(
    engine: SandboxEngine, image: str, requirements: Requirements, *, log: Log | None = None
) -> VerificationLayer:
    """The verification image for `image` and `requirements`: built once (with build
    network), reused while both are unchanged. Never start a solver sandbox from it."""
    if requirements.empty:
        return VerificationLayer(image=image, source_image=image, notes=requirements.notes)
    base = engine.ensure_base_image("python") if requirements.needs_uv else ""
    context = layer_context(requirements, image, base)
    tag = f"{LAYER_REPO}:{hashlib.sha256(context).hexdigest()[:16]}"
    built = engine.build(context, tag=tag, on_log=log)
    provided, missing, notes = _read_manifest(engine, built.image)
    return VerificationLayer(
        image=built.image, source_image=image, tag=tag, provided=provided, missing=missing,
        notes=(*requirements.notes, *notes), cached=built.cached, build_s=built.duration_s,
    )  # fmt: skip


def _read_manifest(engine: SandboxEngine, image: str) -> tuple[tuple[str, ...], ...]:
    box = engine.start(image, purpose="verify-deps", network=False)
    try:
        text = box.read_file(MANIFEST).decode(errors="replace")
    except SandboxFileNotFound:
        text = "note\tthe layer wrote no manifest (its script did not run to the end)\n"
    finally:
        box.remove()
    out: dict[str, list[str]] = {"provided": [], "missing": [], "note": []}
    for line in text.splitlines():
        kind, _, what = line.partition("\t")
        if kind in out and what not in out[kind]:
            out[kind].append(what)
    return tuple(out["provided"]), tuple(out["missing"]), tuple(out["note"])


def verification_image(
    engine: SandboxEngine, image: str, files: Mapping[str, bytes], *, log: Log | None = None
) -> VerificationLayer:
    """For the runner and gates: detect what the verifier `files` need and return the
    layer to start verification containers from (`.image`; the task image when the
    verifier needs nothing)."""
    return ensure_verification_layer(engine, image, detect_requirements(files), log=log)
