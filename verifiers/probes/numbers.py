"""Probes against loose comparisons of numbers, built from what the reference solution wrote.

A verifier that compares figures with a tolerance wide enough to hold zero (``rel_tol=1.0``),
or only from one side (``got >= want``), accepts an answer whose every figure is wrong; one
that looks for the expected figures *in* an output (a substring, a set of candidates)
accepts an output that lists every figure. Neither probe is in the default battery: both
are built per gate run by comparing the oracle's workspace with the pristine one.

- `perturbed_numbers` (on the oracle state): every number in the data files the oracle
  wrote is rewritten — all zeros in one variant, all ones in another (fools checks of signs
  only: ``total > 0``), scaled ×1.5 in a third, each in its own
  format (an integer stays an integer, a figure keeps its decimals, zero-padding and
  exponent). Only files the instruction names are rewritten, and in a file the task started
  with only the lines the oracle changed: numbers a sound verifier has no reason to check
  (an untouched setting, a stale log) must not turn into a rejection of it. Dates, times,
  versions and numbers inside identifiers (``user1``, ``x86_64``) are left alone; so is, in
  a sentence of a free-text file, a number the task itself gave (``Werkzeug 3.0`` where the
  task's files hold ``werkzeug-3.0.4``): a mention, not a figure the solver computed. A fourth
  variant (`PlaceholderLines`) keeps the same files' shape and replaces each written line
  by a placeholder: fools checks of line or record counts only.
- `CandidateFlood` (on the no-op state): every program the oracle created or changed is
  replaced by one in the same language that prints a flood of candidate answers and exits
  0; every other output the instruction names gets the flood as its content.

A sound verifier compares the figures it checks with a tolerance below 50 % (or exactly)
and rejects all these states.
"""

from __future__ import annotations

import base64
import gzip
import json
import posixpath
import re
from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple

from envfactory.core.models import EnvironmentSpec

from .base import Probe, qs
from .history import OracleEdit
from .workspace import SQLITE_MAGIC, Workspace, is_named, is_output, mentioned_paths
from .workspace import file_entries as workspace_entries

#: Files whose every line is data (fields and values).
STRUCTURED_EXTS = (".json", ".jsonl", ".ndjson", ".csv", ".tsv", ".yaml", ".yml", ".toml", ".xml")
#: Free text: a sentence there (`is_prose`) keeps the numbers the task gave (`mentions`).
FREE_TEXT_EXTS = (".txt", ".md", ".out", ".dat")
_TABLE_EXTS = (".csv", ".tsv")
#: Extensions of the data files whose numbers `perturbed_numbers` rewrites.
DATA_EXTS = STRUCTURED_EXTS + FREE_TEXT_EXTS
#: Larger files are left alone (a data file that big is rarely the answer itself).
MAX_FILE_BYTES = 1 << 20
#: The rewritten files travel inside the probe's script (one argv string, which Linux caps
#: at 128 KiB): compressed and base64-encoded, at most this many characters in all.
MAX_EMBEDDED = 96_000
#: The factor of the scaled variant: outside any tolerance a sound verifier would use, and
#: it changes every non-zero number whatever its precision (|x·1.5 − x| ≥ one last unit).
SCALE = Decimal("1.5")

# A number: optional sign, digits, optional decimals, optional exponent.
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
# Numbers on a line the oracle did not change, or inside these, are left alone.
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?|\d{1,2}:\d{2}")
# Digits, or a dot-version: what `mentions` collects.
_DOTTED = re.compile(r"\d+(?:\.\d+)*")
# A word of prose: two letters or more (``Flask``, ``don't``), never a number.
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]+")


def zeroed(number: str) -> str:
    """`number` as zero in its own format: ``-3.50`` → ``0.00``, ``007`` → ``000``."""
    return _formatted(Decimal(0), number)


def scaled(number: str) -> str:
    """`number` × 1.5 in its own format, rounded half away from zero to its last digit:
    ``3.50`` → ``5.25``, ``7`` → ``11``, ``-0.01`` → ``-0.02``, ``1.5e3`` → ``2.3e3``."""
    mantissa, _ = _parts(number)
    return _formatted(Decimal(mantissa) * SCALE, number)


def _parts(number: str) -> tuple[str, str]:
    """(mantissa, exponent part or '') of a number as `_NUMBER` matches it."""
    m = re.fullmatch(r"(-?\d+(?:\.\d+)?)([eE][+-]?\d+)?", number)
    assert m, number
    return m.group(1), m.group(2) or ""


def _formatted(value: Decimal, like: str) -> str:
    """`value` written like the number `like`: its decimals, zero-padding and exponent."""
    mantissa, exponent = _parts(like)
    digits = mantissa.lstrip("-")
    whole, _, frac = digits.partition(".")
    q = Decimal(1).scaleb(-len(frac))
    v = value.quantize(q, rounding=ROUND_HALF_UP)
    sign = "-" if v < 0 else ""
    body = f"{abs(v):.{len(frac)}f}"
    int_part, dot, dec = body.partition(".")
    if whole.startswith("0") and len(whole) > 1:  # zero-padded: keep the width
        int_part = int_part.zfill(len(whole))
    return f"{sign}{int_part}{dot}{dec}{exponent}"


def is_prose(line: str) -> bool:
    """Whether `line` is a sentence rather than a record: six words or more, and at least
    three words per standalone number (``release, Werkzeug 3.0.4. Werkzeug 3.0 removed
    url_quote, which Flask 2.2 imports``: 11 words, two numbers).
    A sentence may cite what the task gave (a release, a port): rewriting such a mention
    would turn a sound verifier's acceptance into a false finding (`mentions`)."""
    words = len(_WORD.findall(line))
    return words >= 6 and words >= 3 * len(_standalone_numbers(line))


def rewrite_numbers(
    text: str,
    rewrite: Callable[[str], str],
    keep_lines: frozenset[str],
    sentences_keep: frozenset[str] | None = None,
) -> str:
    """`text` with every number that stands alone rewritten, on every line not in
    `keep_lines` (the lines a task's file started with). In a free-text file
    (`sentences_keep` given), a sentence (`is_prose`) keeps the numbers in `sentences_keep`
    (those the task gave: `mentions`); a figure the solver computed is rewritten there too. A number glued to a letter, a dot-version or a
    date/time (``user1``, ``1.2.3``, ``2024-01-31``, ``12:30``) stays."""
    out = []
    for line in text.splitlines(keepends=True):
        if line.rstrip("\r\n") in keep_lines:
            out.append(line)
            continue
        spared = sentences_keep if sentences_keep and is_prose(line) else frozenset()
        out.append(_rewrite_line(line, rewrite, spared))
    return "".join(out)


def _rewrite_line(line: str, rewrite: Callable[[str], str], spared: frozenset[str]) -> str:
    starts = {m.start() for m in _standalone_numbers(line) if m.group(0).lstrip("-") not in spared}
    return _NUMBER.sub(lambda m: rewrite(m.group(0)) if m.start() in starts else m.group(0), line)


def mentions(given: Workspace, instruction: str) -> frozenset[str]:
    """The numbers the task gave: those in its instruction and in the pristine workspace
    (paths and UTF-8 text files), each dot-version also by its leading parts (``3.0.4``
    gives ``3.0`` and ``3.0.4``). A sentence that cites one mentions it. A single digit
    never counts: some turns up in any input, and a small count the solver worked out
    ("3 duplicate payments") must still be rewritten."""
    texts = [instruction]
    for path, entry in file_entries(given).items():
        texts.append(path)
        if len(entry.data) <= MAX_FILE_BYTES and b"\0" not in entry.data:
            texts.append(entry.data.decode(errors="ignore"))
    found: set[str] = set()
    for text in texts:
        for dotted in _DOTTED.findall(text):
            parts = dotted.split(".")
            found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return frozenset(n for n in found if len(n) > 1)


def _standalone_numbers(line: str) -> list[re.Match[str]]:
    """The numbers of `line` that stand alone: not in a date or time, not glued to a
    letter, a dot-version or a path."""
    masked = {i for m in _DATE_TIME.finditer(line) for i in range(m.start(), m.end())}
    return [
        m
        for m in _NUMBER.finditer(line)
        if m.start() not in masked
        and not _glued(line, m.start() - 1, -1)
        and not _glued(line, m.end(), 1)
    ]


def _glued(line: str, i: int, step: int) -> bool:
    """Whether the character at `i` (just outside a number, on the side `step` points to)
    makes it part of a larger token: a word character or a dot next to a digit, or a
    ``-``/``:``/``/`` with a letter or digit beyond it."""
    if not 0 <= i < len(line):
        return False
    c, beyond = line[i], line[i + step] if 0 <= i + step < len(line) else ""
    if c.isalnum() or c == "_":
        return True
    if c == "." and beyond.isdigit():
        return True
    return c in "-:/" and (beyond.isalnum() or beyond == "_")


class _Entry(NamedTuple):
    data: bytes
    mode: int


def file_entries(workspace: Workspace) -> dict[str, _Entry]:
    """Absolute path → (content, mode) of each regular file in a state's workspace tars."""
    return {p: _Entry(*e) for p, e in workspace_entries(workspace).items()}


def written(oracle: Workspace, pristine: Workspace) -> dict[str, _Entry]:
    """The files whose content the oracle's workspace adds or changes (by-products aside)."""
    before = file_entries(pristine)
    return {
        p: e
        for p, e in sorted(file_entries(oracle).items())
        if (p not in before or before[p].data != e.data) and is_output(p)
    }


def named(path: str, names: Sequence[str]) -> bool:
    """Whether the instruction names `path` (a named directory covers what is under it)."""
    return is_named(path, names)


class _NumbersRewritten(OracleEdit):
    """Shared shape of the variants: the rewritten files, written over the oracle's (and
    into its commit, where it committed them)."""

    @staticmethod
    def rewrite(number: str) -> str:
        raise NotImplementedError

    @classmethod
    def transform(
        cls, text: str, keep: frozenset[str], sentences_keep: frozenset[str] | None = None
    ) -> str:
        """The file's new text; `keep`: the lines it started with (left as they are);
        `sentences_keep`: in a free-text file, the numbers its sentences keep."""
        return rewrite_numbers(text, cls.rewrite, keep, sentences_keep)

    def __init__(self, files: dict[str, bytes] | None = None) -> None:
        self.files = dict(files or {})

    @property
    def touched(self) -> tuple[str, ...]:
        return tuple(sorted(self.files))

    def edits(self, spec: EnvironmentSpec) -> str:
        return embedded_writes(self.files)


class ZeroedNumbers(_NumbersRewritten):
    """Applied to the oracle state: every number the reference solution wrote into a data
    file the instruction names becomes zero, in its own format (``645.00`` → ``0.00``).
    Fools a verifier whose tolerance holds zero (``math.isclose(got, want, rel_tol=1.0)``,
    ``abs(got - want) <= want``): it accepts a summary whose every figure is 0. Built per
    gate run (`perturbed_numbers`); never in the default battery."""

    name = "perturbed-numbers-zero"

    @staticmethod
    def rewrite(number: str) -> str:
        return zeroed(number)


class OneNumbers(_NumbersRewritten):
    """Applied to the oracle state: every number the reference solution wrote into a data
    file the instruction names becomes one, in its own format (``645.00`` → ``1.00``,
    ``8`` → ``1``). Fools a verifier that checks only signs or presence of figures
    (``total > 0``, ``rows != 0``), which the zeroed variant does not. Built per gate run
    (`perturbed_numbers`); never in the default battery."""

    name = "perturbed-numbers-one"

    @staticmethod
    def rewrite(number: str) -> str:
        return _formatted(Decimal(1), number)


class NanNumbers(_NumbersRewritten):
    """Applied to the oracle state: every number the reference solution wrote into a data
    file the instruction names becomes ``NaN``, with which every comparison is false (and
    which Python's ``float`` and ``json`` read, as do pandas, numpy and awk's ``+0`` on some
    builds). So a check written as "fail when it is off" — ``if abs(got - want) > tol:
    fail``, ``assert not (got < lo or got > hi)``, ``if got != got`` forgotten — lets it
    through, where "pass when it is close" (``math.isclose``, ``abs(...) <= tol``) does
    not. The zeroed, one and scaled variants cannot show this: their figures are real
    numbers the tolerance rejects. Built per gate run (`perturbed_numbers`); never in
    the default battery."""

    name = "perturbed-numbers-nan"

    @staticmethod
    def rewrite(number: str) -> str:
        return "NaN"


class PlaceholderLines(_NumbersRewritten):
    """Applied to the oracle state: every line the reference solution wrote into a data
    file the instruction names becomes a placeholder (``placeholder-1``, ``placeholder-2``…),
    empty lines and the lines the file started with kept. The output keeps its shape (line
    count, blank lines) and loses its content: fools a verifier that checks only how many
    lines or records an output has. Built per gate run (`perturbed_numbers`); never in the
    default battery."""

    name = "placeholder-lines"

    @classmethod
    def transform(
        cls, text: str, keep: frozenset[str], sentences_keep: frozenset[str] | None = None
    ) -> str:
        out = []
        for i, line in enumerate(text.splitlines(keepends=True), 1):
            body = line.rstrip("\r\n")
            kept = body in keep or not body.strip()
            out.append(line if kept else f"placeholder-{i}" + line[len(body) :])
        return "".join(out)


class ScaledNumbers(_NumbersRewritten):
    """Applied to the oracle state: every number the reference solution wrote into a data
    file the instruction names is scaled ×1.5, in its own format (``245.00`` → ``367.50``,
    ``8`` → ``12``). Fools a verifier that checks figures from one side (``got >= want``)
    or within a tolerance of 50 % or more. Built per gate run (`perturbed_numbers`); never
    in the default battery."""

    name = "perturbed-numbers-scaled"

    @staticmethod
    def rewrite(number: str) -> str:
        return scaled(number)


class DoubledNumbers(_NumbersRewritten):
    """Applied to the oracle state: every number the reference solution wrote into a data
    file the instruction names is doubled, in its own format (``20`` → ``40``, ``3.50`` →
    ``7.00``): sign, whole numbers, parity, divisibility and order all kept. Fools a
    verifier that checks properties of the figures (positive, whole cases, even, sorted)
    and never their values, which the zeroed, one and ×1.5 variants each break. Built per
    gate run (`perturbed_numbers`); never in the default battery."""

    name = "perturbed-numbers-doubled"

    @staticmethod
    def rewrite(number: str) -> str:
        mantissa, _ = _parts(number)
        return _formatted(Decimal(mantissa) * 2, number)


def named_texts(
    oracle: Workspace, pristine: Workspace, instruction: str, workdir: str
) -> dict[str, tuple[str, frozenset[str]]]:
    """path → (text the oracle wrote, lines to keep) for the data files the oracle wrote
    that the instruction names (UTF-8, at most `MAX_FILE_BYTES`). Kept: the lines the file
    started with, and a table's header (the first line of a .csv or .tsv): a rewritten
    output keeps its shape, so a check of the header and the row count alone is not
    enough to reject it."""
    before = file_entries(pristine)
    names = mentioned_paths(instruction, workdir)
    texts: dict[str, tuple[str, frozenset[str]]] = {}
    for path, entry in written(oracle, pristine).items():
        if not path.lower().endswith(DATA_EXTS) or not named(path, names):
            continue
        if len(entry.data) > MAX_FILE_BYTES or entry.data.startswith(SQLITE_MAGIC):
            continue  # a database's rows change through SQLite (`probes.rows`)
        try:
            text = entry.data.decode()
            old = before[path].data.decode() if path in before else ""
        except UnicodeDecodeError:
            continue
        keep = set(old.splitlines())
        if path.lower().endswith(_TABLE_EXTS) and text.strip():
            keep.add(text.splitlines()[0])
        texts[path] = (text, frozenset(keep))
    return texts


#: the variants `perturbed_numbers` builds, in the order the report lists them
class CentsOff(_NumbersRewritten):
    """Applied to the oracle state: every amount with two decimals the reference solution
    wrote into a data file the instruction names is ten cents more, in its own format
    (``645.00`` → ``645.10``), every other number kept. Fools a verifier whose tolerance on
    money is wider than the cent (``abs(got - want) <= 1.00``), which the zeroed, one,
    scaled and doubled variants are all too far off to show. A probe row where the
    instruction asks for cents or decimal places (`asks_for_cents`), a tolerance row
    elsewhere (a loose tolerance can be the task's design). Built per gate run
    (`perturbed_numbers`); never in the default battery."""

    name = "perturbed-numbers-cents"

    @staticmethod
    def rewrite(number: str) -> str:
        mantissa, exponent = _parts(number)
        if exponent or len(mantissa.partition(".")[2]) != 2:
            return number
        return _formatted(Decimal(mantissa) + Decimal("0.10"), number)


_CENTS_WORDS = re.compile(
    r"\b(?:cents?|penn(?:y|ies)|(?:two|2) decimals?|decimal places?|to the cent)\b",
    re.IGNORECASE,
)


def asks_for_cents(instruction: str) -> bool:
    """Whether the instruction asks for amounts right to the cent or to decimal places
    (then `CentsOff` is a probe row, not a tolerance)."""
    return bool(_CENTS_WORDS.search(instruction))


NUMBER_PROBES: tuple[type[_NumbersRewritten], ...] = (
    ZeroedNumbers,
    OneNumbers,
    ScaledNumbers,
    DoubledNumbers,
    NanNumbers,
    PlaceholderLines,
    CentsOff,
)


def perturbed_numbers(
    oracle: Workspace, pristine: Workspace, instruction: str, workdir: str
) -> tuple[Probe, ...]:
    """`ZeroedNumbers`, `OneNumbers`, `ScaledNumbers`, `DoubledNumbers`, `NanNumbers` and
    `PlaceholderLines` for the data files the oracle wrote that the instruction names — each only where it
    changes something."""
    texts = named_texts(oracle, pristine, instruction, workdir)
    given = mentions(pristine, instruction) if texts else frozenset()
    out: list[Probe] = []
    for cls in NUMBER_PROBES:
        files = {}
        for path, (text, keep) in texts.items():
            free_text = path.lower().endswith(FREE_TEXT_EXTS)
            new = cls.transform(text, keep, given if free_text else None)
            if new != text:
                files[path] = new.encode()
        files = within_budget(files)
        if files:
            out.append(cls(files))
    return tuple(out)


def within_budget(files: dict[str, bytes], budget: int = MAX_EMBEDDED) -> dict[str, bytes]:
    """The files (in path order) whose embedded form fits in `budget` characters together."""
    out, used = {}, 0
    for path, data in sorted(files.items()):
        size = len(_packed(data)) + len(path) + 64
        if used + size <= budget:
            out[path] = data
            used += size
    return out


def _packed(data: bytes) -> str:
    return base64.b64encode(gzip.compress(data, mtime=0)).decode()


def embedded_writes(files: dict[str, bytes]) -> str:
    """Shell that writes each file's bytes (carried gzipped and base64-encoded)."""
    writes = "".join(
        f"printf '%s' {qs([_packed(data)])} | base64 -d | gzip -dc > {qs([path])}\n"
        for path, data in sorted(files.items())
    )
    return writes + "true\n"


# -- the candidate flood --------------------------------------------------------------------

#: The candidate answers, as (decimals, lowest, highest): every integer in −1000…100000 and
#: every 1-, 2- and 3-decimal number in its range, one per line (about 4 MB).
FLOOD: tuple[tuple[int, int, int], ...] = (
    (0, -1000, 100000),
    (1, -1000, 1000),
    (2, -1000, 1000),
    (3, -100, 100),
)


def flood_lines() -> list[str]:
    """The flood, as the programs print it (for tests; the programs compute it themselves)."""
    return [f"{i / 10**d:.{d}f}" for d, lo, hi in FLOOD for i in range(lo * 10**d, hi * 10**d + 1)]


#: The candidates every flooded output holds besides the reference's own figures: every
#: integer in −1000…1000 and every 1-, 2- and 3-decimal number in −100…100, −10…10, −1…1.
OUTPUT_FLOOD: tuple[tuple[int, int, int], ...] = (
    (0, -1000, 1000),
    (1, -100, 100),
    (2, -10, 10),
    (3, -1, 1),
)
#: The flooded outputs' content travels in the probe's script (`MAX_EMBEDDED`): the
#: reference's figures are dropped from the last until it fits in this many characters.
MAX_FLOOD_EMBEDDED = 48_000
# A figure as written: `_NUMBER`, or digits grouped by thousands (1,234.5).
_GROUPED = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def oracle_figures(files: dict[str, _Entry], first: Sequence[str] = ()) -> list[str]:
    """Every figure (`_NUMBER`, `_GROUPED`) in the text files the reference solution
    wrote, as written, each once: those in the files `first` names come first."""
    out: dict[str, None] = {}
    for path in [*first, *(p for p in files if p not in first)]:
        entry = files.get(path)
        if entry is None or len(entry.data) > MAX_FILE_BYTES or b"\0" in entry.data:
            continue
        text = entry.data.decode("utf-8", "replace")
        for rx in (_GROUPED, _NUMBER):
            out.update(dict.fromkeys(m.group(0) for m in rx.finditer(text)))
    return list(out)


def output_flood(figures: Sequence[str] = ()) -> bytes:
    """A flooded output's content: `OUTPUT_FLOOD`'s candidates and `figures`, each once,
    one per line in ascending order; `figures` cut from the end until it packs into
    `MAX_FLOOD_EMBEDDED` characters."""
    base = [
        f"{i / 10**d:.{d}f}"
        for d, lo, hi in OUTPUT_FLOOD
        for i in range(lo * 10**d, hi * 10**d + 1)
    ]
    keep = list(figures)
    while True:
        lines = sorted(dict.fromkeys([*base, *keep]), key=_flood_order)
        data = "".join(f"{x}\n" for x in lines).encode()
        if not keep or len(_packed(data)) <= MAX_FLOOD_EMBEDDED:
            return data
        keep = keep[: len(keep) // 2]


def _flood_order(figure: str) -> tuple[float, str]:
    try:
        return float(figure.replace(",", "")), figure
    except ValueError:  # an exponent past a float's range
        return float("inf"), figure


_RANGES = json.dumps([list(r) for r in FLOOD])
FLOOD_PROGRAMS = {
    "python": (
        "import sys\n"
        f"for d, lo, hi in {_RANGES}:\n"
        "    sys.stdout.write(''.join(f'{i / 10**d:.{d}f}\\n' for i in range(lo * 10**d, hi * 10**d + 1)))\n"
        "sys.stdout.flush()\n"
    ),
    "js": (
        "const out = [];\n"
        f"for (const [d, lo, hi] of {_RANGES}) {{\n"
        "  for (let i = lo * 10 ** d; i <= hi * 10 ** d; i++) out.push((i / 10 ** d).toFixed(d));\n"
        "}\n"
        "process.stdout.write(out.join('\\n') + '\\n');\n"
    ),
    "ruby": (
        f"{_RANGES}.each do |d, lo, hi|\n"
        '  $stdout.write(((lo * 10**d)..(hi * 10**d)).map { |i| format("%.#{d}f\\n", i / 10.0**d) }.join)\n'
        "end\n"
    ),
    "perl": (
        "for my $r (" + ", ".join(f"[{d}, {lo}, {hi}]" for d, lo, hi in FLOOD) + ") {\n"
        "  my ($d, $lo, $hi) = @$r;\n"
        '  printf("%.${d}f\\n", $_ / 10**$d) for ($lo * 10**$d) .. ($hi * 10**$d);\n'
        "}\n"
    ),
    "shell": (
        "awk 'BEGIN {\n"
        + "".join(
            f'  for (i = {lo * 10**d}; i <= {hi * 10**d}; i++) printf "%.{d}f\\n", i / {10**d}\n'
            for d, lo, hi in FLOOD
        )
        + "}' 2>/dev/null || seq "
        + f"{FLOOD[0][1]} {FLOOD[0][2]}\n"
        "exit 0\n"
    ),
}
_BY_EXT = {
    ".py": "python",
    ".sh": "shell",
    ".bash": "shell",
    ".js": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".rb": "ruby",
    ".pl": "perl",
}
_BY_SHEBANG = (("python", "python"), ("node", "js"), ("ruby", "ruby"), ("perl", "perl"))
_SHELL_SHEBANG = "#!/bin/sh"
#: At most this many programs and outputs are replaced.
MAX_FLOODED = 200


def program_language(path: str, entry: _Entry) -> str | None:
    """The language of a program file (by extension, else shebang, else executable bit:
    shell); None for a data file."""
    ext = posixpath.splitext(path)[1].lower()
    if ext in _BY_EXT:
        return _BY_EXT[ext]
    if entry.data.startswith(b"#!"):
        first = entry.data.split(b"\n", 1)[0].decode(errors="replace")
        return next((lang for key, lang in _BY_SHEBANG if key in first), "shell")
    return "shell" if entry.mode & 0o111 else None


def flood_program(path: str, entry: _Entry) -> str:
    """The flood printer replacing the program at `path` (its shebang line kept)."""
    lang = program_language(path, entry) or "shell"
    first = entry.data.split(b"\n", 1)[0].decode(errors="replace")
    shebang = first if first.startswith("#!") else ""
    if lang == "shell" and not shebang:
        shebang = _SHELL_SHEBANG
    return (f"{shebang}\n" if shebang else "") + FLOOD_PROGRAMS[lang]


class CandidateFlood(Probe):
    """Applied to the no-op state: every program the reference solution created or changed
    (``.py``, ``.sh``, ``.js``, ``.rb``, ``.pl``, a shebang or the executable bit) is
    replaced by one in the same language (same mode, same shebang) that prints every
    integer in −1000…100000 and every 1-, 2- and 3-decimal number in a useful range, one
    per line (about 4 MB), and exits 0; every other output of the reference solution that
    the instruction names gets a flood as its content too: a smaller range of candidates
    plus every figure the reference solution wrote anywhere (`output_flood`). Fools a
    verifier that accepts when the expected figures merely appear in the output (``want in
    stdout``, a set of candidates) — no exact comparison accepts it. A program's flood
    must hold answers to inputs the verifier may choose; an output's is judged as the
    reference solution left it, so the figures any check the reference passes looks for
    are among those it wrote (in the form it wrote them: large numbers, long decimals and
    thousands separators included, which the program flood lacks), at ~1% of the bytes a
    verifier reads and the state carries. Built per gate run (`for_oracle`); never in the
    default battery."""

    name = "candidate-flood"

    def __init__(
        self,
        programs: dict[str, tuple[str, int]] | None = None,
        outputs: Sequence[str] = (),
        figures: Sequence[str] = (),
    ) -> None:
        self.programs = dict(programs or {})  # path → (program text, mode)
        self.outputs = tuple(outputs)
        self.content = output_flood(figures)  # what each output gets

    @classmethod
    def for_oracle(
        cls, oracle: Workspace, pristine: Workspace, instruction: str, workdir: str
    ) -> CandidateFlood:
        names = mentioned_paths(instruction, workdir)
        programs: dict[str, tuple[str, int]] = {}
        outputs: list[str] = []
        for path, entry in written(oracle, pristine).items():
            if len(programs) + len(outputs) >= MAX_FLOODED:
                break
            if program_language(path, entry) is not None:
                programs[path] = (flood_program(path, entry), entry.mode)
            elif named(path, names):
                outputs.append(path)
        return cls(programs, outputs, oracle_figures(written(oracle, pristine), outputs))

    @property
    def applies(self) -> bool:
        return bool(self.programs or self.outputs)

    def script(self, spec: EnvironmentSpec) -> str:
        parts = []
        for path, (text, mode) in sorted(self.programs.items()):
            parts.append(
                f'mkdir -p "$(dirname {qs([path])})"\n'
                f"cat > {qs([path])} <<'PROGRAM'\n{text}PROGRAM\n"
                f"chmod {mode:o} {qs([path])}\n"
            )
        if self.outputs:
            parts.append(
                f"printf '%s' {qs([_packed(self.content)])} | base64 -d | gzip -dc > /tmp/.flood\n"
                f'for p in {qs(self.outputs)}; do mkdir -p "$(dirname "$p")"; cat /tmp/.flood > "$p"; done\n'
                "rm -f /tmp/.flood\n"
            )
        return "".join(parts) + "true\n"
