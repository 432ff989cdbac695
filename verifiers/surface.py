"""The verifier's search surface, discovered: every path a verifier's process tree looks up
where the solver could have put something, found by running the verifier under a tracer.

Search-path shadowing is a class of attack, not a list of names: ``sys.path`` puts the
working directory before the standard library, Node walks ``node_modules`` upwards, a shell
``source``s ``./config.sh``, pytest looks for ``conftest.py`` and ``pytest.ini`` in every
ancestor, a shell resolves commands through ``PATH``. Rather than guess which of these a
verifier does, `trace_surface` runs it once, on a prepared state (the oracle's), staged
exactly as the runner stages it (`verify_script.setup_script` with its `wrap` hook), under
``strace -f``, and keeps each path its processes opened, stat-ed, executed or failed to
find inside *solver-writable* places. `traced_probes` turns that surface into probes
(`probes.traced`) that plant a same-named file of the right type at each such path.

The same run shows what the verifier does with data there. Outputs it read (files it
opened for reading in solver-writable places) are linked to the files it read from its own
directory (`probes.TracedLink`: ``out.txt -> /proc/self/cwd/expected.txt``, or the mount
path when the verifier lives at a fixed one); files it wrote there are read back from the
container after the run and replayed, with that content, onto the attacked state
(`probes.TracedReplay`: the junit report a crashing checker never rewrites).

Solver-writable (decided here, see `solver_writable`): scope ``workspace`` — only the
declared workspace paths (everything else is the pristine image's own); scope
``full-state`` — anything a solver can change without it counting as tamper evidence
(`tamper.category_of` is None), i.e. /tmp, /root, /home, most of /etc, /opt, /srv…, plus
the workspace. Never /proc, /sys, /dev or the runner's own directories.

Tracing needs no network and nothing in the task image: the host's ``strace``, the shared
libraries ``ldd`` lists and the host's dynamic loader are copied into a private directory
of the container and run through that loader (``ld.so --library-path DIR DIR/strace``).
Measured here (Docker 20.10, default seccomp profile, every capability dropped,
no-new-privileges): tracing one's own children needs no CAP_SYS_PTRACE and the default
seccomp profile allows ``ptrace`` (kernel ≥ 4.8), ``--seccomp-bpf`` included. Where the
host has no strace, `trace_surface` says so and `traced_probes` returns nothing: the static
probes (`probes.ModuleShadow` with the verifier's own imports) remain the fallback.

Invariants: a traced run never decides a reward (it is evidence only); the tracer's files
live in a directory no verifier or workspace path names and are never reported; what is read
back of the verifier's writes is bounded (32 files, 16 KiB each).
"""

from __future__ import annotations

import functools
import posixpath
import re
import secrets
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from envfactory.core.errors import SandboxError, SandboxFileNotFound
from envfactory.core.models import EnvironmentSpec, Purpose, Verifier, VerifyScope
from sandboxes.protocol import Sandbox, SandboxEngine

from . import archives
from .prepare import PreparedState
from .probes.applicability import Traced, read_log
from .probes.base import Probe
from .probes.loads import tool_loads
from .probes.tools import TracedSilenced
from .probes.traced import (
    Access,
    TracedLink,
    TracedOverwrite,
    TracedReplay,
    TracedShadow,
    links,
    plants,
    replays,
)
from .runner import replay_state
from .tamper import VERIFIER_DIR_PREFIX, category_of
from .verify_script import STAGE_PREFIX, script_argv, setup_script, staged_tar

_TRACE_PREFIX = "/.envfactory-trace-"
_TRACE_MAX_BYTES = 256 * 1024 * 1024
_MAX_CAPTURES = 32
_CAPTURE_MAX_BYTES = 16 * 1024 + 1  # one over what `replays` keeps, so an oversize file shows
#: Syscalls that look a path up; the process ones to follow the tree and its programs.
_SYSCALLS = (
    "open,openat,openat2,creat,stat,lstat,newfstatat,statx,access,faccessat,faccessat2,"
    "execve,execveat,readlink,readlinkat,chdir,fork,vfork,clone,clone3"
)
_NEVER = ("/proc", "/sys", "/dev", VERIFIER_DIR_PREFIX.rstrip("-"), STAGE_PREFIX.rstrip("-"))


@dataclass(frozen=True)
class Surface:
    """What one traced verification looked up. `accesses` are every path lookup of the
    process tree; `writable` the subset the solver could have planted or replaced."""

    traced: bool
    accesses: tuple[Access, ...] = ()
    writable: tuple[Access, ...] = ()
    exit_code: int | None = None
    note: str = ""
    verifier_dir: str = ""
    fixed_dir: bool = False  # `verifier_dir` is a mount path a solver can name
    written: dict[str, bytes] = field(default_factory=dict)

    def missing(self) -> list[str]:
        """Solver-writable paths looked up and not found (the shadowing candidates)."""
        return sorted({a.path for a in self.writable if not a.ok})


@functools.lru_cache(maxsize=1)
def strace_bundle() -> dict[str, tuple[bytes, int]] | None:
    """The host's strace with its shared libraries and loader, {name: (bytes, mode)};
    None when the host has no strace."""
    exe = shutil.which("strace")
    if exe is None:
        return None
    out = {"strace": (Path(exe).read_bytes(), 0o755)}
    res = subprocess.run(["ldd", exe], capture_output=True, text=True, check=False)
    for line in res.stdout.splitlines():
        m = re.search(r"(/\S+)\s+\(0x", line)
        if m is None:
            continue
        lib = Path(m.group(1))
        name = "ld.so" if "=>" not in line else lib.name
        out[name] = (lib.resolve().read_bytes(), 0o755)
    return out


def _tracer_words(tdir: str, bundle: dict[str, tuple[bytes, int]]) -> str:
    """strace (through the copied loader when there is one) as shell words for
    `setup_script`'s `wrap`; `_SYSCALLS` is a fixed list of names and commas."""
    q = shlex.quote
    run = f"{q(tdir + '/ld.so')} --library-path {q(tdir)} " if "ld.so" in bundle else ""
    return (
        f"{run}{q(tdir + '/strace')} --seccomp-bpf -f -y -qq -s 4096 -e signal=none "
        f"-e trace={_SYSCALLS} -o {q(tdir + '/log')}"
    )


@dataclass(frozen=True)
class TraceRun:
    """One traced verification: its lookups (`parse_trace`; `logged` False when the tracer
    wrote nothing), exit code, the directory the verifier was staged in and what it wrote in
    solver-writable places ({path: bytes}, read back from the container after the run; see
    `_capture_writes`)."""

    logged: bool
    accesses: tuple[Access, ...]
    exit_code: int | None
    verifier_dir: str
    written: dict[str, bytes]


def trace_verifier(
    engine: SandboxEngine,
    prepared: PreparedState,
    *,
    spec: EnvironmentSpec,
    verifier: Verifier,
    verifier_files: dict[str, tuple[bytes, int]],
) -> TraceRun | None:
    """Run the verifier once under strace, staged as the runner stages it; None when
    tracing is unavailable."""
    bundle = strace_bundle()
    if bundle is None:
        return None
    box = engine.start(
        prepared.image, limits=spec.limits, purpose=Purpose.VERIFY_TRACE, network=False
    )
    try:
        if prepared.replay:
            replay_state(engine, box, spec, prepared)
        token = secrets.token_hex(8)
        vdir = verifier.mount_path or VERIFIER_DIR_PREFIX + token  # as the runner picks it
        stage, tdir = STAGE_PREFIX + token, _TRACE_PREFIX + token
        box.put_archive("/", staged_tar(prepared, stage, verifier_files))
        members = [(f"{tdir.lstrip('/')}/{n}", data, mode) for n, (data, mode) in bundle.items()]
        box.put_archive("/", archives.combine(members, [], dirs=[(tdir.lstrip("/"), 0o700)]))
        # Tracing slows a run down (a few times for import-heavy Python): a longer leash.
        script = setup_script(
            prepared,
            verifier,
            vdir,
            stage,
            verifier.timeout_s * 3,
            inline=False,
            wrap=_tracer_words(tdir, bundle),
        )
        argv = script_argv(script, verifier.entry)
        res = box.exec(argv, timeout=verifier.timeout_s * 3 + 15, workdir="/", user="root")
        try:
            text = box.read_file(tdir + "/log", max_bytes=_TRACE_MAX_BYTES).decode(errors="replace")
        except SandboxFileNotFound:
            text = ""
        accesses = tuple(parse_trace(text, root_cwd=vdir))
        written = _capture_writes(box, accesses, spec)
        return TraceRun(bool(text), accesses, res.exit_code, vdir, written)
    finally:
        box.remove()


def _capture_writes(
    box: Sandbox, accesses: tuple[Access, ...], spec: EnvironmentSpec
) -> dict[str, bytes]:
    """The files the verifier opened for writing in solver-writable places, as they are
    after the run (at most `_MAX_CAPTURES`, each cut at `_CAPTURE_MAX_BYTES`); a file gone
    or no longer regular is left out."""
    paths = dict.fromkeys(
        a.path for a in accesses if a.op == "write" and a.ok and solver_writable(a.path, spec)
    )
    out: dict[str, bytes] = {}
    for path in list(paths)[:_MAX_CAPTURES]:
        try:
            out[path] = box.read_file(path, max_bytes=_CAPTURE_MAX_BYTES)
        except SandboxError:
            continue  # removed again (a temporary file) or replaced by a non-file
    return out


def solver_writable(path: str, spec: EnvironmentSpec) -> bool:
    """Could the solver have put a file at `path` without the runner noticing? (see module
    docstring for the rule per scope)."""
    if path == "/" or any(path == p or path.startswith(p) for p in (*_NEVER, _TRACE_PREFIX)):
        return False
    if any(
        path == ws.rstrip("/") or path.startswith(ws.rstrip("/") + "/")
        for ws in spec.workspace_paths
    ):
        return True
    return spec.verify_scope == VerifyScope.FULL_STATE and category_of(path) is None


def trace_surface(
    engine: SandboxEngine,
    prepared: PreparedState,
    *,
    spec: EnvironmentSpec,
    verifier: Verifier,
    verifier_files: dict[str, tuple[bytes, int]],
) -> Surface:
    """The verifier's search surface on `prepared` (see module docstring)."""
    run = trace_verifier(
        engine, prepared, spec=spec, verifier=verifier, verifier_files=verifier_files
    )
    if run is None:
        return Surface(traced=False, note="no strace on this host: surface not traced")
    if not run.logged:
        return Surface(traced=False, exit_code=run.exit_code, note="the tracer wrote nothing")
    writable = tuple(a for a in run.accesses if solver_writable(a.path, spec))
    return Surface(
        True,
        run.accesses,
        writable,
        run.exit_code,
        verifier_dir=run.verifier_dir,
        fixed_dir=bool(verifier.mount_path),
        written=run.written,
    )


def traced_probes(
    engine: SandboxEngine,
    prepared: PreparedState,
    *,
    spec: EnvironmentSpec,
    verifier: Verifier,
    verifier_files: dict[str, tuple[bytes, int]],
) -> tuple[Probe, ...]:
    """Probes planting a same-typed file at every solver-writable path the verifier looked
    up on `prepared` (the oracle's state): `traced-shadow` for paths it did not find,
    `traced-overwrite` for code and configuration it did find there, `traced-silenced` for
    a tool's own files it looked up there (`probes.tools`: a TeX class, a Perl module…),
    `traced-link` linking the outputs it read to its own files, `traced-replay` leaving
    what it wrote there beforehand. Empty when nothing writable was looked up, or when tracing is unavailable
    (then rely on the static probes)."""
    return traced_battery(
        engine, prepared, spec=spec, verifier=verifier, verifier_files=verifier_files
    ).probes


def traced_battery(
    engine: SandboxEngine,
    prepared: PreparedState,
    *,
    spec: EnvironmentSpec,
    verifier: Verifier,
    verifier_files: dict[str, tuple[bytes, int]],
) -> Traced:
    """`traced_probes` and, from the same run, what the verifier read (the gates mark a
    probe whose files it never read not applicable: `probes.applicability`)."""
    surface = trace_surface(
        engine, prepared, spec=spec, verifier=verifier, verifier_files=verifier_files
    )
    if not surface.traced:
        return Traced()
    return Traced(_planted(surface), read_log(surface.accesses))


def _planted(surface: Surface) -> tuple[Probe, ...]:
    shadow, overwrite = plants(surface.accesses, surface.writable)
    linked = links(
        surface.accesses,
        surface.writable,
        verifier_dir=surface.verifier_dir,
        fixed=surface.fixed_dir,
    )
    replayed = replays(surface.written)
    loads = tool_loads(surface.accesses, surface.writable)
    silenced = TracedSilenced.for_loads(loads)
    out: list[Probe] = []
    if shadow:
        out.append(TracedShadow(shadow, loads))
    if overwrite:
        out.append(TracedOverwrite(overwrite, loads))
    if silenced.applies:
        out.append(silenced)
    if linked:
        out.append(TracedLink(linked))
    if replayed:
        out.append(TracedReplay(replayed))
    return tuple(out)


# ----------------------------------------------------------------------------- parsing

_LINE = re.compile(r"^(\d+)\s+(.*)$")
_CALL = re.compile(r"^(\w+)\((.*)\)\s+=\s+(-?\d+|\?)(?:<[^>]*>)?(?:\s+(E[A-Z]+))?")
_STR = re.compile(r'"((?:[^"\\]|\\.)*)"')
_CWD = re.compile(r"AT_FDCWD<([^>]*)>")
_FD_PATH = re.compile(r"^\d+<([^>]*)>")
_AT_CALLS = {
    "openat",
    "openat2",
    "newfstatat",
    "statx",
    "faccessat",
    "faccessat2",
    "execveat",
    "readlinkat",
}
_OPS = {
    "open": "open",
    "openat": "open",
    "openat2": "open",
    "creat": "open",
    "stat": "stat",
    "lstat": "stat",
    "newfstatat": "stat",
    "statx": "stat",
    "access": "stat",
    "faccessat": "stat",
    "faccessat2": "stat",
    "execve": "exec",
    "execveat": "exec",
    "readlink": "stat",
    "readlinkat": "stat",
    "chdir": "chdir",
}
_FORKS = {"fork", "vfork", "clone", "clone3"}


def _joined(lines: list[str]) -> list[tuple[int, str]]:
    """(pid, 'call(args) = ret') with `<unfinished ...>` / `<... resumed>` halves joined."""
    pending: dict[int, str] = {}
    out: list[tuple[int, str]] = []
    for raw in lines:
        m = _LINE.match(raw)
        if m is None:
            continue
        pid, rest = int(m.group(1)), m.group(2)
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest[: -len("<unfinished ...>")].rstrip()
            continue
        r = re.match(r"^<\.\.\. \w+ resumed>\s?(.*)$", rest)
        if r is not None:
            rest = pending.pop(pid, "") + r.group(1)
        out.append((pid, rest))
    return out


def _unescape(s: str) -> str:
    return s.encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")


def parse_trace(text: str, *, root_cwd: str) -> list[Access]:
    """Every path lookup in an `strace -f -y` log, made absolute (see `Access`)."""
    trace = _Trace(root_cwd)
    for pid, rest in _joined(text.splitlines()):
        m = _CALL.match(rest)
        if m is not None:
            trace.call(pid, *m.groups())
    return trace.out


@dataclass
class _Trace:
    """Each process's working directory and program, followed through forks."""

    root_cwd: str
    cwd: dict[int, str] = field(default_factory=dict)
    exe: dict[int, str] = field(default_factory=dict)
    out: list[Access] = field(default_factory=list)

    def call(self, pid: int, name: str, args: str, ret: str | None, err: str | None) -> None:
        here = self.cwd.setdefault(pid, self.root_cwd)
        if (c := _CWD.search(args)) is not None:
            here = self.cwd[pid] = c.group(1)
        if name in _FORKS:
            if ret not in ("?", None) and int(ret) > 0:
                self.cwd[int(ret)], self.exe[int(ret)] = here, self.exe.get(pid, "")
            return
        op = _OPS.get(name)
        s = _STR.search(args)
        path = _unescape(s.group(1)) if s is not None else ""
        if op is None or not path:
            return
        base = here
        if name in _AT_CALLS and (fd := _FD_PATH.match(args)) is not None:
            base = fd.group(1)
        full = posixpath.normpath(posixpath.join(base, path))
        ok = ret != "?" and int(ret or 0) >= 0
        self._moved(pid, op, ok, full)
        mode = _open_mode(args) if op == "open" else ""
        op = _open_kind(args) if op == "open" else op
        self.out.append(Access(full, op, ok, err or "", self.exe.get(pid, ""), here, pid, mode))

    def _moved(self, pid: int, op: str, ok: bool, full: str) -> None:
        """An exec changes the process's program, a chdir its directory."""
        if op == "exec" and ok:
            self.exe[pid] = full
        if op == "chdir" and ok:
            self.cwd[pid] = full


def _open_mode(args: str) -> str:
    """How an open treats the file's content (`Access.mode`)."""
    if "O_TRUNC" in args or ("O_CREAT" in args and "O_EXCL" in args) or _is_creat(args):
        return "reset"
    if "O_WRONLY" in args:
        return "append"
    return "read"


def _is_creat(args: str) -> bool:
    """`creat(path, mode)` has no flags: it truncates."""
    return "O_" not in args and bool(re.search(r'",\s*0\d+$', args))


def _open_kind(args: str) -> str:
    if "O_DIRECTORY" in args:
        return "list"
    if re.search(r"O_WRONLY|O_RDWR|O_CREAT", args):
        return "write"
    return "open"
