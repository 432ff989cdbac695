"""Payloads in a tool's own language for the files it loads from the solver's space
(`loads.tool_loads`), and the probes that plant them.

Each load gets three variants:

- ``exit``: end the tool's run with success at once — `traced.TracedShadow` /
  `traced.TracedOverwrite` plant it (TeX: `traced.TEX_EXIT` ends the job with status 0);
- ``silence`` (`TracedSilenced`): silence the tool's diagnostics, then load the real file the
  tool would have found (its twin in the trace, outside the solver's space) and go on — TeX
  ``\\hfuzz=\\maxdimen``, ``\\hbadness=10000`` and LaTeX's warnings off around the real
  class; Perl, Ruby and Node warnings and stderr off; make ``.SILENT:`` and ``.IGNORE:``; a
  shell's stderr closed. Python and git have none: Python's diagnostics are the program's
  own output, and git's decide nothing (its code channel is hooks and filters);
- ``replay`` (`ToolReplay`): write the reference solution's changed files at verification
  time, then load the real file and go on; built per gate run from the oracle's files.
  git's replay is `git.GitHookReplay`. TeX can only write below its working directory
  (``openout_any = p``), text files with an extension, and leaves what a TeX job writes
  itself (``.log``, ``.aux``, ``.pdf``…) alone; a TeX class also typesets the body of the
  reference's document in place of the compiled one (`_reference_body`).

Invariants: a payload is planted only where the tool looked and found nothing (a found file
there is the task's own, replaced by `traced.TracedOverwrite`); each probe's `detail` names
every planted path with its tool; what a replay embeds is bounded (`numbers.within_budget`);
a path a payload names is plain (letters, digits, ``_./+-``), so no quoting is needed in any
of the languages.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from .base import Probe
from .loads import Load
from .numbers import within_budget
from .traced import Plant, PlantingProbe, leaves_only
from .workspace import is_output

# --------------------------------------------------------------------------- payloads

_TEX_QUIET = (
    "\\hfuzz=\\maxdimen \\vfuzz=\\maxdimen \\hbadness=10000 \\vbadness=10000 "
    "\\expandafter\\let\\csname @latex@warning@no@line\\expandafter\\endcsname"
    "\\csname @gobble\\endcsname "
    "\\expandafter\\let\\csname @latex@warning\\expandafter\\endcsname\\csname @gobble\\endcsname "
    "\\expandafter\\let\\csname @font@warning\\expandafter\\endcsname\\csname @gobble\\endcsname "
)


def _safe_path(path: str) -> bool:
    return bool(path) and re.fullmatch(r"[A-Za-z0-9_./+-]+", path) is not None


#: loads reported but given no payload: kpathsea reads ``texmf.cnf`` as configuration, not
#: TeX, and from the solver's space only where ``TEXMFCNF`` names it
_NOT_CODE = ("kpathsea configuration",)


def silence(load: Load) -> str | None:
    """The silence variant (see module docstring); None where the language has none."""
    real = load.real if _safe_path(load.real) else ""
    lang = load.language
    if load.what in _NOT_CODE:
        return None
    if lang == "tex":
        again = "\\ifdefined\\AtBeginDocument\\AtBeginDocument{" + _TEX_QUIET + "}\\fi\n"
        load_real = f"\\input {real} " if real else ""
        return f"{_TEX_QUIET}\n{load_real}\n{_TEX_QUIET}\n{again}"
    if lang == "perl":
        tail = f"do '{real}';\n" if real else ""
        return (
            "BEGIN { $SIG{__WARN__} = sub {} }\nopen(STDERR, '>', '/dev/null');\n" + tail + "1;\n"
        )
    if lang == "ruby":
        tail = f"load '{real}'\n" if real else ""
        return "$VERBOSE = nil\n$stderr.reopen(File::NULL)\n" + tail
    if lang == "node" and not load.path.endswith(".mjs"):
        tail = f"module.exports = require('{real}');\n" if real else ""
        return "console.warn = console.error = () => {};\nprocess.emitWarning = () => {};\n" + tail
    if lang == "make":
        return ".SILENT:\n.IGNORE:\n" + (f"include {real}\n" if real else "")
    if lang == "shell":
        return "exec 2>/dev/null\n" + (f". {real}\n" if real else "")
    return None


def replay(load: Load, files: Mapping[str, bytes]) -> str | None:
    """The replay variant: `files` (absolute path → the reference's bytes) written when the
    tool loads this file, then the real file loaded; None where nothing can be written."""
    real = load.real if _safe_path(load.real) else ""
    files = {p: d for p, d in files.items() if _safe_path(p)}
    if not files or load.what in _NOT_CODE:
        return None
    writer = _WRITERS.get(load.language)
    return None if writer is None else writer(files, real, load)


def _hexes(files: Mapping[str, bytes]) -> list[tuple[str, str]]:
    return [(p, d.hex()) for p, d in sorted(files.items())]


def _octal(data: bytes) -> str:
    return "".join(f"\\{b:03o}" for b in data)


def _perl(files: Mapping[str, bytes], real: str, load: Load) -> str:
    rows = "".join(f"  ['{p}', '{h}'],\n" for p, h in _hexes(files))
    tail = f"do '{real}';\n" if real else ""
    return (
        f"for my $f (\n{rows}) {{\n  my $d = ''; my @up = split m{{/}}, $f->[0]; pop @up;\n"
        '  for (@up) { $d .= "$_/"; mkdir $d }\n'
        "  open(my $o, '>', $f->[0]) or next; binmode $o;\n"
        "  print $o pack('H*', $f->[1]); close $o;\n}\n" + tail + "1;\n"
    )


def _ruby(files: Mapping[str, bytes], real: str, load: Load) -> str:
    rows = "".join(f"  ['{p}', '{h}'],\n" for p, h in _hexes(files))
    tail = f"load '{real}'\n" if real else ""
    return (
        f"require 'fileutils'\n[\n{rows}].each do |p, h|\n"
        "  FileUtils.mkdir_p(File.dirname(p)); File.binwrite(p, [h].pack('H*'))\n"
        "rescue StandardError\n  nil\nend\n" + tail
    )


def _node(files: Mapping[str, bytes], real: str, load: Load) -> str | None:
    if load.path.endswith(".mjs"):
        return None
    rows = "".join(f"  ['{p}', '{h}'],\n" for p, h in _hexes(files))
    tail = f"module.exports = require('{real}');\n" if real else ""
    return (
        f"for (const [p, h] of [\n{rows}]) {{\n"
        "  try {\n    require('fs').mkdirSync(require('path').dirname(p), { recursive: true });\n"
        "    require('fs').writeFileSync(p, Buffer.from(h, 'hex'));\n  } catch (e) {}\n}\n" + tail
    )


def _sh_write(path: str, data: bytes) -> str:
    return f"mkdir -p '{posixpath.dirname(path)}' && printf '{_octal(data)}' > '{path}'"


def _shell(files: Mapping[str, bytes], real: str, load: Load) -> str:
    writes = "".join(f"{_sh_write(p, d)} 2>/dev/null\n" for p, d in sorted(files.items()))
    return writes + (f". {real}\n" if real else "true\n")


def _make(files: Mapping[str, bytes], real: str, load: Load) -> str:
    writes = "".join(f"$(shell {_sh_write(p, d)} 2>/dev/null)\n" for p, d in sorted(files.items()))
    return writes + (f"include {real}\n" if real else "")


def _python(files: Mapping[str, bytes], real: str, load: Load) -> str:
    rows = "".join(f"    ({p!r}, {h!r}),\n" for p, h in _hexes(files))
    return (
        "import importlib as _il, os as _os, sys as _sys\n"
        f"for _p, _h in [\n{rows}]:\n"
        "    try:\n        _os.makedirs(_os.path.dirname(_p), exist_ok=True)\n"
        "        open(_p, 'wb').write(bytes.fromhex(_h))\n"
        "    except OSError:\n        pass\n"
        "if __name__ not in ('sitecustomize', 'usercustomize', '__main__'):\n"
        "    _here, _saved = _os.path.dirname(_os.path.realpath(__file__)), _sys.path[:]\n"
        "    _sys.path[:] = [d for d in _saved if _os.path.realpath(d or '.') != _here]\n"
        "    del _sys.modules[__name__]\n"
        "    _sys.modules[__name__] = _il.import_module(__name__)\n"
        "    _sys.path[:] = _saved\n"
    )


def _tex(files: Mapping[str, bytes], real: str, load: Load) -> str | None:
    """``\\openout`` below the TeX process's working directory, every character but letters
    and digits written as a category-12 token made with ``\\lowercase``."""
    lines = [
        "\\begingroup\\catcode`\\?=12 \\gdef\\efmk#1{\\begingroup\\lccode`\\?=#1\\relax"
        "\\lowercase{\\endgroup\\expandafter\\gdef\\csname efc#1\\endcsname{?}}}\\endgroup"
        "\\gdef\\efc#1{\\csname efc#1\\endcsname}"
    ]
    made: set[int] = set()
    writes = {
        rel: data.decode()
        for path, data in sorted(files.items())
        if _tex_writable(rel := posixpath.relpath(path, load.cwd or "/"), data)
    }
    typeset = _reference_body(writes)
    for rel, text in writes.items():
        _tex_write(lines, made, rel, text)
    if len(lines) == 1:
        return None
    tail = f"\\input {real} \n" if real else ""
    if typeset:  # the reference's document typeset in place of the one being compiled
        tail += f"\\AtBeginDocument{{\\input{{{typeset}}}\\end{{document}}}}\n"
    return "\n".join(lines) + "\n" + tail


def _tex_write(lines: list[str], made: set[int], rel: str, text: str) -> None:
    """Lines that write `text` to `rel` (each character but letters and digits a token
    `\\efc{N}`, its maker `\\efmk{N}` added once near the top)."""
    body = text[:-1] if text.endswith("\n") else text
    lines.append(f"\\immediate\\openout15={rel}\\relax")
    for line in body.split("\n"):
        out = []
        for ch in line:
            if ch.isascii() and ch.isalnum():
                out.append(ch)
                continue
            for b in ch.encode():
                if b not in made:
                    made.add(b)
                    lines.insert(1, f"\\efmk{{{b}}}")
                out.append(f"\\efc{{{b}}}")
        lines.append("\\immediate\\write15{" + "".join(out) + "}")
    lines.append("\\immediate\\closeout15")


_DOCUMENT = re.compile(r"\\begin\{document\}(.*)\\end\{document\}", re.S)


def _reference_body(writes: dict[str, str]) -> str | None:
    """For the first LaTeX document the reference wrote, add its body (between
    ``\\begin{document}`` and ``\\end{document}``) to `writes` as ``NAME.efcbody.tex`` and
    return that name: the class then typesets the reference's body instead of the
    document being compiled, as a class planted by a solver who read the answer could."""
    for rel, text in writes.items():
        found = _DOCUMENT.search(text) if rel.endswith(".tex") else None
        if found:
            name = rel[: -len(".tex")] + ".efcbody.tex"
            writes[name] = found.group(1) + "\n"
            return name
    return None


#: what a TeX job writes itself (its log, auxiliary files, the document): never replayed
_TEX_OWN = (".log", ".aux", ".pdf", ".dvi", ".toc", ".lof", ".lot", ".out", ".fls", ".synctex")


def _tex_writable(rel: str, data: bytes) -> bool:
    parts = rel.split("/")
    return (
        not rel.startswith("../")
        and not rel.endswith(_TEX_OWN)
        and not any(p.startswith(".") for p in parts)
        and "." in parts[-1]
        and all(b >= 32 or b in (9, 10) for b in data)
        and _decodes(data)
    )


def _decodes(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


_WRITERS: dict[str, Callable[[Mapping[str, bytes], str, Load], str | None]] = {
    "tex": _tex,
    "perl": _perl,
    "ruby": _ruby,
    "node": _node,
    "shell": _shell,
    "make": _make,
    "python": _python,
}

# ----------------------------------------------------------------------------- probes

#: a replayed file's bytes at most, and all payloads' characters together: a payload spells
#: each byte out (TeX a token per character, shell an octal escape), and the planting
#: script is one exec argument (< 128 KiB)
_REPLAY_FILE_MAX = 16 * 1024
_REPLAY_TOTAL = 96 * 1024


class _LoadPlanting(PlantingProbe):
    """Files planted at the tools' lookups, each named with its tool in `detail`."""

    @property
    def applies(self) -> bool:
        return bool(self.files)


class TracedSilenced(_LoadPlanting):
    """Diagnostics silenced around the real file: at every solver-writable path where a
    verifier's tool looked up its own code and found nothing (TeX ``./article.cls``,
    ``./x.sty``; a Perl, Ruby or Node module on its search path; ``GNUmakefile`` or an
    ``include``\\ d makefile; a sourced shell file), plants a file in the tool's language
    that turns its warnings off (TeX: ``\\hfuzz=\\maxdimen``, ``\\hbadness=10000``; make:
    ``.SILENT:`` and ``.IGNORE:``) and then loads the real one. Fools a verifier that judges
    a tool's log or diagnostics after running it where the solver can put files."""

    name = "traced-silenced"

    @classmethod
    def for_loads(cls, loads: Sequence[Load]) -> TracedSilenced:
        files: dict[str, Plant] = {}
        for load in loads:
            content = silence(load) if not load.found else None
            if content is not None:
                files[load.path] = (content, 0o644)
        return cls(leaves_only(files), loads)


class ToolReplay(_LoadPlanting):
    """Applied to the untouched state: at every solver-writable path where a verifier's tool
    looked up its own code and found nothing, plants a file in the tool's language that
    writes the reference solution's changed files when the tool loads it (TeX with
    ``\\openout``, Perl, Ruby, Node, Python, make ``$(shell)``, a sourced shell file) and
    then loads the real one and goes on. Fools a verifier that runs such a tool on the
    solver's files before reading them. Built per gate run from the traced loads and the
    oracle's files (`for_states`); never in the default battery."""

    name = "traced-tool-replay"
    noop_only = True

    @classmethod
    def for_states(
        cls, loads: Sequence[Load], oracle: Mapping[str, bytes], pristine: Mapping[str, bytes]
    ) -> ToolReplay:
        changed = within_budget(
            {
                p: d
                for p, d in oracle.items()
                if pristine.get(p) != d and is_output(p) and len(d) <= _REPLAY_FILE_MAX
            }
        )
        files: dict[str, Plant] = {}
        used = 0
        # a directory on the way to another lookup (`node_modules`) is never a file
        leaves = leaves_only({x.path: ("", 0) for x in loads if not x.found})
        for load in (x for x in loads if x.path in leaves):
            content = _fitting(load, changed, _REPLAY_TOTAL - used)
            if content is not None:
                files[load.path], used = (content, 0o644), used + len(content)
        return cls(files, loads)


def _fitting(load: Load, files: Mapping[str, bytes], room: int) -> str | None:
    """The replay of as many of `files` (smallest first) as fit in `room` characters."""
    best: str | None = None
    chosen: dict[str, bytes] = {}
    for path, data in sorted(files.items(), key=lambda f: (len(f[1]), f[0])):
        content = replay(load, {**chosen, path: data})
        if content is None or len(content) > room:
            continue
        chosen[path], best = data, content
    return best


def loads_of(probes: Iterable[Probe]) -> tuple[Load, ...]:
    """The traced loads the battery's tool probes carry (empty when it has none)."""
    out: dict[str, Load] = {}
    for p in probes:
        for load in getattr(p, "loads", ()):
            out.setdefault(load.path, load)
    return tuple(out[k] for k in sorted(out))


def loads_note(probes: Iterable[Probe]) -> str:
    """The gate report's line naming every traced load with its tool ("" when none)."""
    loads = loads_of(probes)
    if not loads:
        return ""
    return "the verifier's tools load from the solver's space: " + "; ".join(
        load.describe() for load in loads
    )
