"""Solver-writable inputs the verifier trusts: a setting changed, then the task done right
for it.

A verifier that takes what to check from a file in the workspace (the period a report
covers from `config.ini`, a flag in `.env`, the manifest listing what must exist) lets
the solver choose the question: edit the setting to an easy answer, then answer that. The
class, by rule:

1. **The trusted inputs** (`trusted_inputs`): the workspace files the traced verification
   of the oracle read, that the reference did not change (inputs, not work), that are
   text (64 KiB or less), neither programs nor test files, and that hold a setting this
   module can change.
2. **The change** (`changed_setting`): dates one day earlier, months and quarters one
   earlier, year-only periods one earlier, and boolean values flipped (``true``/``false``,
   ``yes``/``no``, ``on``/``off``, ``enabled``/``disabled`` after ``=`` or ``:``), case kept.
3. **The row** (`trusted-inputs+reference`, on the no-op): those files changed, then the
   reference solution's own steps, as a solver that does the work right for the setting
   it chose would. Checked only when the reference then writes other bytes to an output
   it wrote (it reads the setting); expected 0: the task fixed the setting, and a 1 says
   "the verifier's verdict depends on a solver-writable input: F".
"""

from __future__ import annotations

import calendar
import fnmatch
import posixpath
import re
from collections.abc import Mapping

from envfactory.core.models import EnvironmentSpec, Step
from envfactory.core.models.rows import RowId

from .applicability import ReadLog
from .base import TEST_GLOBS, Probe
from .numbers import embedded_writes, file_entries, program_language
from .workspace import Workspace

MAX_BYTES = 64 * 1024
MAX_FILES = 8

#: The row of the reference solution run with the trusted inputs changed.
TRUSTED = RowId.probe_on("trusted-inputs+reference", RowId.noop())

_FLAGS = {"true": "false", "yes": "no", "on": "off", "enabled": "disabled"}
_FLAGS |= {v: k for k, v in _FLAGS.items()}
_FLAG = re.compile(r"(?<=[=:])(\s*[\"']?)(" + "|".join(_FLAGS) + r")\b", re.IGNORECASE)
_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH = re.compile(r"\b(\d{4})-(\d{2})\b(?!-\d)")
_QUARTER = re.compile(r"\b(\d{4})-?Q([1-4])\b")
_YEAR = re.compile(r"(?<=[=:])(\s*[\"']?)((?:19|20)\d{2})\b(?![-/.]\w)")


def changed_setting(text: str) -> str:
    """`text` with each date, month, quarter and year-only period one step earlier and each
    boolean value flipped; the same text when it holds none of them."""
    text = _DAY.sub(_day_before, text)
    text = _MONTH.sub(_month_before, text)
    text = _QUARTER.sub(_quarter_before, text)
    text = _YEAR.sub(lambda m: f"{m.group(1)}{int(m.group(2)) - 1}", text)
    return _FLAG.sub(_flipped, text)


def trusted_inputs(reads: ReadLog, oracle: Workspace, pristine: Workspace) -> dict[str, bytes]:
    """{path: its content with the setting changed} for each trusted input (the module's
    rule 1), at most `MAX_FILES`."""
    after = {p: e.data for p, e in file_entries(oracle).items()}
    out: dict[str, bytes] = {}
    for path, entry in sorted(file_entries(pristine).items()):
        data = entry.data
        if after.get(path) != data or len(data) > MAX_BYTES or b"\x00" in data:
            continue
        if _test_like(path) or program_language(path, entry) is not None:
            continue
        if reads.first_use(path) != "read":
            continue
        try:
            text = data.decode()
        except UnicodeDecodeError:
            continue
        changed = changed_setting(text)
        if changed != text:
            out[path] = changed.encode()
        if len(out) >= MAX_FILES:
            break
    return out


class TrustedInputsChanged(Probe):
    """Changes a setting in each solver-writable input the verifier reads and the
    reference leaves as it is (configuration, ``.env``, manifests: dates and periods one
    earlier, flags flipped); the reference's own steps then run (row
    ``trusted-inputs+reference``). Fools a verifier that takes from the workspace what it
    should know itself: the solver picks the question, then answers it."""

    name = "trusted-inputs-changed"

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = dict(files)

    @property
    def detail(self) -> str:
        return "the verifier's verdict depends on a solver-writable input: " + ", ".join(
            sorted(self.files)
        )

    @property
    def touched(self) -> tuple[str, ...]:
        return tuple(sorted(self.files))

    def script(self, spec: EnvironmentSpec) -> str:
        return embedded_writes(self.files)


def trusted_steps(probe: TrustedInputsChanged, spec: EnvironmentSpec) -> tuple[Step, ...]:
    """The inputs changed, then the reference solution's steps."""
    return (
        Step(title="trusted inputs changed", script=probe.script(spec)),
        *spec.reference_solution,
    )


def trusted_probe(
    reads: ReadLog | None, oracle: Workspace, pristine: Workspace
) -> TrustedInputsChanged | None:
    """The probe for a gate run, or None when the verifier reads no such input."""
    if reads is None:
        return None
    files = trusted_inputs(reads, oracle, pristine)
    return TrustedInputsChanged(files) if files else None


def _test_like(path: str) -> bool:
    name = posixpath.basename(path)
    return any(fnmatch.fnmatchcase(name, g) for g in TEST_GLOBS) or "/tests/" in path


def _day_before(m: re.Match[str]) -> str:
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not (1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1]):
        return m.group(0)
    if d > 1:
        return f"{y:04d}-{mo:02d}-{d - 1:02d}"
    y, mo = (y - 1, 12) if mo == 1 else (y, mo - 1)
    return f"{y:04d}-{mo:02d}-{calendar.monthrange(y, mo)[1]:02d}"


def _month_before(m: re.Match[str]) -> str:
    y, mo = int(m.group(1)), int(m.group(2))
    if not 1 <= mo <= 12:
        return m.group(0)
    y, mo = (y - 1, 12) if mo == 1 else (y, mo - 1)
    return f"{y:04d}-{mo:02d}"


def _quarter_before(m: re.Match[str]) -> str:
    y, q = int(m.group(1)), int(m.group(2))
    y, q = (y - 1, 4) if q == 1 else (y, q - 1)
    sep = "-" if "-Q" in m.group(0) else ""
    return f"{y}{sep}Q{q}"


def _flipped(m: re.Match[str]) -> str:
    word = m.group(2)
    new = _FLAGS[word.lower()]
    if word.isupper():
        new = new.upper()
    elif word[0].isupper():
        new = new.capitalize()
    return m.group(1) + new
