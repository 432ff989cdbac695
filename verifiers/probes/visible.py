"""A program that knows only the examples the solver could see.

A task that asks for a program (a converter, a parser, a calculator) and shows example
inputs beside their expected outputs is solved by a lookup table of those examples as
long as the verifier feeds the program nothing else. `VisibleExamplesOnly` builds that
solver from the reference: each program the reference created or changed, in Python or
shell, is wrapped so that it runs the reference's own code when every input it is given
was visible — each argument a line or word of a file the task started with (tests
excluded), a file whose lines all were, or a path that does not exist yet (an output),
and each line of its standard input one such line — and otherwise prints `bad input` and
exits 2. It is applied to the untouched state, so the outputs the reference wrote
beside its programs are absent: a verifier that only reads those files gives 0 (the
probe does not apply), one that runs the program on inputs of its own gives 0 (the
wrapper refuses them), and one that runs it only on what the solver could see gives 1.
A program imported as a module (its functions called in process) refuses the import:
wrapping functions is out of this probe's reach.
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
from collections.abc import Iterable
from fnmatch import fnmatch

from envfactory.core.models import EnvironmentSpec

from .base import TEST_GLOBS, Probe, premise_path, qs
from .numbers import MAX_EMBEDDED, file_entries, program_language, written
from .workspace import Workspace

#: what is read of the task's files for the visible set, and how many programs are wrapped
MAX_VISIBLE_BYTES = 4 * 1024 * 1024
MAX_PROGRAMS = 4
#: a probe's script is one argument of an exec (at most 128 KiB): the keys must fit in it
MAX_KEYS = 2000
REAL_SUFFIX = ".envfactory-real"
VISIBLE_SUFFIX = ".envfactory-visible"  # a shell wrapper's visible keys, one per line


def line_key(text: str) -> str:
    """The key a visible line or word is kept under (stripped, hashed, 16 hex digits)."""
    return hashlib.sha256(text.strip().encode("utf-8", "replace")).hexdigest()[:16]


def _is_test(path: str) -> bool:
    name = posixpath.basename(path)
    return any(fnmatch(name, g) for g in TEST_GLOBS) or "/tests/" in path


def visible_keys(pristine: Workspace, workdir: str) -> frozenset[str]:
    """Every line and word of the files the task started with (tests aside), and their
    paths (absolute, relative to the workdir, and bare names)."""
    keys: set[str] = set()
    used = 0
    for path, entry in sorted(file_entries(pristine).items()):
        if _is_test(path) or "/.git/" in path:
            continue
        rel = posixpath.relpath(path, workdir) if path.startswith(workdir) else path
        keys.update(line_key(p) for p in (path, rel, posixpath.basename(path)))
        if used + len(entry.data) > MAX_VISIBLE_BYTES or b"\0" in entry.data[:1024]:
            continue
        used += len(entry.data)
        text = entry.data.decode("utf-8", "replace")
        for line in text.splitlines():
            if line.strip():
                keys.add(line_key(line))
                keys.update(line_key(w) for w in line.split())
    return frozenset(keys)


_PYTHON = '''import hashlib as _h, io as _io, os as _os, sys as _s
_V = frozenset("""{keys}""".split())
def _note(what):
    try:  # the premise's evidence (`Probe.premise_file`): an input was judged by content
        with open({premise!r}, "a") as _f:
            _f.write(what + " " + {path!r} + "\\n")
    except OSError:
        pass
def _refuse():
    _note("refused")
    _s.stderr.write("bad input\\n")
    raise SystemExit(2)
def _k(t):
    return _h.sha256(t.strip().encode("utf-8", "replace")).hexdigest()[:16]
def _seen(text):
    return all(_k(x) in _V for x in text.splitlines() if x.strip())
def _arg_ok(a):
    if _os.path.isfile(a):
        try:
            with open(a, encoding="utf-8", errors="replace") as f:
                return _seen(f.read())
        except OSError:
            return False
    if _k(a) in _V or (a.startswith("-") and len(a) < 40):
        return True
    # an output path: not there yet, in a folder that is
    return "/" in a and not _os.path.exists(a) and _os.path.isdir(_os.path.dirname(a) or ".")
def _judged(a):
    return _os.path.isfile(a) or (_k(a) in _V and not a.startswith("-"))
if __name__ != "__main__":
    _refuse()
_data = b"" if _s.stdin is None or _s.stdin.isatty() else _s.stdin.buffer.read()
if not all(_arg_ok(a) for a in _s.argv[1:]) or not _seen(_data.decode("utf-8", "replace")):
    _refuse()
if _data.strip() or any(_judged(a) for a in _s.argv[1:]):
    _note("judged")
_s.stdin = _io.TextIOWrapper(_io.BytesIO(_data), encoding="utf-8")
_real = {real!r}
with open(_real, encoding="utf-8") as _f:
    _code = compile(_f.read(), {path!r}, "exec")
_s.argv[0] = {path!r}
exec(_code, {{"__name__": "__main__", "__file__": {path!r}, "__builtins__": __builtins__}})
'''

_SHELL = """v={visible}
note() {{ printf '%s %s\\n' "$1" {path} >> {premise} 2>/dev/null; }}
refuse() {{ note refused; echo 'bad input' >&2; exit 2; }}
k() {{ printf '%s' "$1" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//' | sha256sum | cut -c1-16; }}
seen_file() {{
  while IFS= read -r l || [ -n "$l" ]; do
    case "$l" in *[![:space:]]*) grep -qx "$(k "$l")" "$v" || return 1 ;; esac
  done < "$1"
}}
judged=
for a in "$@"; do
  if [ -f "$a" ]; then seen_file "$a" || refuse; judged=1; continue; fi
  if grep -qx "$(k "$a")" "$v"; then case "$a" in -*) ;; *) judged=1 ;; esac; continue; fi
  case "$a" in -*) [ ${{#a}} -lt 40 ] && continue ;; esac
  case "$a" in */*) [ ! -e "$a" ] && [ -d "$(dirname "$a")" ] && continue ;; esac
  refuse
done
in=$(mktemp)
if [ -t 0 ]; then : > "$in"; else cat > "$in"; fi
seen_file "$in" || {{ rm -f "$in"; refuse; }}
grep -q '[^[:space:]]' "$in" && judged=1
[ -n "$judged" ] && note judged
exec <"$in"; rm -f "$in"
exec {shell} {real} "$@"
"""


class VisibleExamplesOnly(Probe):
    """Applied to the untouched state: each program the reference solution created or
    changed (Python or shell) behaves exactly as the reference's when every argument
    and every line of input it is given appears in the files the task started with
    (tests excluded), and otherwise prints `bad input` and exits 2 (module docstring).
    Fools a verifier that tests the program only on the inputs the solver can see — a
    lookup table of the visible examples passes it. Built per gate run (`for_states`);
    never in the default battery.

    Premise, checked in the run: during the verification a wrapper judged at least one
    input by its content — an argument that is a file or a visible word (not an option
    flag, not an output path), or standard input that is not empty — and either refused
    it or let it through (it appends ``judged`` or ``refused`` and its program's path to
    `premise_file`). When none did, the lookup table decided nothing: the programs took
    their input from elsewhere (a service, a fixed file, only flags) and behaved exactly
    as the reference's, so a 1 proves nothing and the row is not applicable."""

    name = "visible-examples-only"
    premise_file = premise_path(name)
    premise_unmet = (
        "no wrapped program was given an input to judge (no file or word argument, no "
        "standard input): each took its input from elsewhere and behaved as the reference's"
    )

    def __init__(self, programs: dict[str, tuple[bytes, int, str, str]] | None = None) -> None:
        #: path → (the reference's code, its mode, the wrapper, a shell wrapper's key list)
        self.programs = dict(programs or {})

    @classmethod
    def for_states(
        cls, oracle: Workspace, pristine: Workspace, workdir: str
    ) -> VisibleExamplesOnly:
        chosen = [
            (p, e)
            for p, e in written(oracle, pristine).items()
            if program_language(p, e) in ("python", "shell") and not _is_test(p)
        ][:MAX_PROGRAMS]
        if not chosen:
            return cls()
        keys = visible_keys(pristine, workdir)
        if len(keys) > MAX_KEYS:
            return cls()  # more to see than a wrapper can carry: not built
        out = {}
        for p, e in chosen:
            lang = program_language(p, e)
            listing = "" if lang == "python" else "\n".join(sorted(keys)) + "\n"
            out[p] = (e.data, e.mode, _wrapper(p, e.data, lang, keys), listing)
        size = sum(len(c) + len(w) + len(li) for c, _, w, li in out.values())
        return cls(out) if size * 4 // 3 <= MAX_EMBEDDED else cls()

    @property
    def applies(self) -> bool:
        return bool(self.programs)

    def script(self, spec: EnvironmentSpec) -> str:
        parts = []
        for path, (code, mode, wrapper, listing) in sorted(self.programs.items()):
            parts.append(
                f'mkdir -p "$(dirname {qs([path])})"\n'
                + _write(path + REAL_SUFFIX, code, 0o644)
                + _write(path, wrapper.encode(), mode | 0o100)
                + (_write(path + VISIBLE_SUFFIX, listing.encode(), 0o644) if listing else "")
            )
        return "".join(parts) + "true\n"


def _write(path: str, data: bytes, mode: int) -> str:
    text = base64.b64encode(data).decode()
    return f"printf '%s' {qs([text])} | base64 -d > {qs([path])}\nchmod {mode:o} {qs([path])}\n"


def _wrapper(path: str, code: bytes, lang: str | None, keys: Iterable[str]) -> str:
    first = code.split(b"\n", 1)[0].decode(errors="replace")
    shebang = first if first.startswith("#!") else ""
    real = path + REAL_SUFFIX
    if lang == "python":
        premise = VisibleExamplesOnly.premise_file
        body = _PYTHON.format(keys=" ".join(sorted(keys)), real=real, path=path, premise=premise)
        return (shebang or "#!/usr/bin/env python3") + "\n" + body
    shell = shebang[2:].strip() if shebang else "/bin/sh"
    body = _SHELL.format(
        visible=qs([path + VISIBLE_SUFFIX]),
        path=qs([path]),
        premise=qs([str(VisibleExamplesOnly.premise_file)]),
        shell=shell,
        real=qs([real]),
    )
    return "#!/bin/sh\n" + body
