"""The tables in the docs that the code already states, written from the code; `make lint`
runs the check.

    python scripts/gen_docs.py          # rewrite the tables in place
    python scripts/gen_docs.py --check  # exit 1, naming each stale table, when a file differs

Each table sits between two marker lines of its file, and only what lies between them is
ever written:

    <!-- generated: probes (scripts/gen_docs.py) -->
    …
    <!-- end generated: probes -->

- `probes` in docs/verifiers.md: every shortcut probe, by name, with the first sentence of
  its docstring (`Probe.summary`: what a report's evidence quotes); the default battery
  (`verifiers.probes.PROBES`), then what the gates build per run (`GATE_BUILT` and the
  reference run on minimal inputs).
- `settings` in README.md: every leaf field of `envfactory.core.settings.Settings`, as its
  environment variable (the model's `env_prefix` and `env_nested_delimiter`), its default
  and its `Field(description=…)`. A field without a description is an error, not a blank.

Invariants: a file without its two markers, or with them twice, is an error that names
the file (nothing is written then); the text around the markers is never touched.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

ROOT = Path(__file__).resolve().parent.parent
# `python scripts/gen_docs.py` puts scripts/ on sys.path, not the checkout, so an editable
# install elsewhere would be documented instead: document the code beside us.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

if TYPE_CHECKING:
    from pydantic import BaseModel

    from verifiers.probes.base import Probe

FIX = "run `python scripts/gen_docs.py` and commit the result"


class DocsError(Exception):
    """A file the generator cannot write into (markers missing or repeated, a field with no
    description): the message says which and how to fix it."""


def cell(text: str) -> str:
    """`text` as one Markdown table cell: on one line, its pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def markdown(doc: str) -> str:
    """Docstring text as Markdown: reST's ``literal`` becomes `literal`."""
    return doc.replace("``", "`")


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


# ------------------------------------------------------------------------------ probes


def probe_row(probe: type[Probe]) -> tuple[str, str]:
    """(name, attack class): the docstring's first sentence, and where the gates apply it
    when that is the no-op state alone (`Probe.noop_only`)."""
    from verifiers.probes.base import first_sentence

    text = markdown(first_sentence(probe.__doc__ or ""))
    if not text:
        raise DocsError(f"probe {probe.name} ({probe.__qualname__}) has no docstring: write one")
    if probe.noop_only:
        text = text.removesuffix(".") + " (no-op state only)."
    if probe.privileged:
        text += f" Privileged: uses {markdown(probe.privileged)}."
    return f"`{probe.name}`", text


def probes_block(
    battery: Sequence[type[Probe]],
    built: Sequence[type[Probe]],
    extra: Sequence[tuple[str, str]] = (),
    alternatives: Sequence[type[Probe]] = (),
) -> list[str]:
    """The probe tables: the default battery, then the probes the gates build per run
    (`extra`: rows of (name, description) that are no `Probe` class), then the correct
    alternatives they check."""
    header = ("probe", "attack class")
    more = [
        "",
        "Correct alternatives (`verifiers.probes.ALTERNATIVES`), checked on the oracle state",
        "and expected to keep reward 1 (a 0 is a *too strict* warning, not a rejection):",
        "",
        *table(("alternative", "what it rewrites"), [probe_row(p) for p in alternatives]),
    ]
    return [
        "The default battery (`verifiers.probes.PROBES`), applied to the no-op state and to",
        "every unsolved state:",
        "",
        *table(header, [probe_row(p) for p in battery]),
        "",
        "Built by the gates for each run (`verifiers.probes.GATE_BUILT`), from what the",
        "reference solution wrote or from the verifier's traced run on the oracle:",
        "",
        *table(header, [*(probe_row(p) for p in built), *((f"`{n}`", d) for n, d in extra)]),
        *(more if alternatives else []),
    ]


def current_probes() -> list[str]:
    from verifiers.probes import ALTERNATIVES, GATE_BUILT, PROBES
    from verifiers.probes.base import first_sentence
    from verifiers.probes.inputs import RECOMPUTED, recomputed_steps

    recomputed = (str(RECOMPUTED.probe), markdown(first_sentence(recomputed_steps.__doc__ or "")))
    return probes_block([type(p) for p in PROBES], GATE_BUILT, [recomputed], ALTERNATIVES)


# ---------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Setting:
    var: str
    default: str
    description: str


def _submodel(annotation: Any) -> type[BaseModel] | None:
    from pydantic import BaseModel

    for t in (annotation, *get_args(annotation)):
        if isinstance(t, type) and issubclass(t, BaseModel):
            return t
    return None


def shown_default(value: Any) -> str:
    """A default as one would set it in the environment (JSON for lists and maps)."""
    if value is None:
        return "unset"
    if value == "":
        return "empty"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, tuple | list | dict):
        return f"`{json.dumps(list(value) if isinstance(value, tuple) else value)}`"
    return f"`{value}`"


def settings_rows(model: type[BaseModel], prefix: str, delimiter: str | None) -> list[Setting]:
    """Every leaf field of `model` as its variable. A sub-model of a type already walked at
    the same level (an agent role beside `default`) is one row, `PREFIX<NAME>__<FIELD>`,
    whose defaults are the first one's."""
    rows: list[Setting] = []
    walked: dict[type[BaseModel], str] = {}
    for name, field in model.model_fields.items():
        var = f"{prefix}{name.upper()}"
        sub = _submodel(field.annotation)
        if sub is not None and not delimiter:
            raise DocsError(f"{var}: a nested model needs the settings' env_nested_delimiter")
        if sub is not None and sub not in walked:
            walked[sub] = name.upper()
            rows += settings_rows(sub, f"{var}{delimiter}", delimiter)
            continue
        if not field.description:
            raise DocsError(
                f"{model.__qualname__}.{name} ({var}) has no description: give it "
                f"Field(description=...) in {model.__module__}"
            )
        if sub is not None:
            rows.append(
                Setting(f"{var}{delimiter}<FIELD>", f"`{walked[sub]}`'s", field.description)
            )
        else:
            default = shown_default(field.get_default(call_default_factory=True))
            rows.append(Setting(var, default, field.description))
    return rows


def settings_block(model: type[BaseModel]) -> list[str]:
    config = model.model_config
    prefix = str(config.get("env_prefix") or "")
    delimiter = config.get("env_nested_delimiter")
    rows = settings_rows(model, prefix.upper(), str(delimiter) if delimiter else None)
    return table(
        ("variable", "default", "meaning"), ((f"`{r.var}`", r.default, r.description) for r in rows)
    )


def current_settings() -> list[str]:
    from envfactory.core.settings import Settings

    return settings_block(Settings)


# ------------------------------------------------------------------- files and markers


@dataclass(frozen=True)
class Table:
    name: str
    path: str  # relative to the repository root
    source: str  # what the table is generated from, for messages
    render: Callable[[], list[str]]

    @property
    def begin(self) -> str:
        return f"<!-- generated: {self.name} (scripts/gen_docs.py) -->"

    @property
    def end(self) -> str:
        return f"<!-- end generated: {self.name} -->"


TABLES = (
    Table("probes", "docs/verifiers.md", "verifiers.probes", current_probes),
    Table("settings", "README.md", "envfactory.core.settings.Settings", current_settings),
)


def replaced(text: str, t: Table, body: Sequence[str]) -> str:
    """`text` with the lines between `t`'s markers replaced by `body` (a blank line on
    either side, so that Markdown reads the table as one)."""
    lines = text.split("\n")
    begins = [i for i, line in enumerate(lines) if line.strip() == t.begin]
    ends = [i for i, line in enumerate(lines) if line.strip() == t.end]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise DocsError(
            f"{t.path}: the {t.name} table needs exactly one line `{t.begin}` and, below it, "
            f"one line `{t.end}` (found {len(begins)} and {len(ends)}): put them back where "
            "the table goes"
        )
    b, e = begins[0], ends[0]
    return "\n".join([*lines[: b + 1], "", *body, "", *lines[e:]])


@dataclass(frozen=True)
class Stale:
    path: str
    tables: tuple[Table, ...]  # those of the file's tables that differ
    now: str
    want: str


def stale(root: Path, tables: Sequence[Table] = TABLES) -> list[Stale]:
    """Each file whose generated tables differ from what the code gives (every table of a
    file is replaced in the same text, so two tables may share a file)."""
    out = []
    for path in dict.fromkeys(t.path for t in tables):
        now = want = (root / path).read_text()
        differ = []
        for t in (t for t in tables if t.path == path):
            new = replaced(want, t, t.render())
            if new != want:
                differ.append(t)
            want = new
        if differ:
            out.append(Stale(path, tuple(differ), now, want))
    return out


def main(argv: Sequence[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 when a table is stale"
    )
    args = parser.parse_args(argv)
    try:
        found = stale(root)
    except DocsError as exc:
        print(f"gen_docs: {exc}", file=sys.stderr)
        return 1
    for f in found:
        names = " and ".join(t.name for t in f.tables)
        if not args.check:
            (root / f.path).write_text(f.want)
            print(f"gen_docs: wrote the {names} table in {f.path}")
            continue
        sources = ", ".join(t.source for t in f.tables)
        print(
            f"gen_docs: the {names} table in {f.path} is stale (it differs from what "
            f"{sources} gives): {FIX}",
            file=sys.stderr,
        )
        print(diff_head(f), file=sys.stderr)
    return 1 if args.check and found else 0


def diff_head(f: Stale, most: int = 40) -> str:
    """The start of the difference, enough to see what went stale."""
    lines = list(
        difflib.unified_diff(
            f.now.splitlines(),
            f.want.splitlines(),
            f.path,
            f"{f.path} (generated)",
            n=0,
            lineterm="",
        )
    )
    more = [f"… ({len(lines) - most} more lines)"] if len(lines) > most else []
    return "\n".join(lines[:most] + more)


if __name__ == "__main__":
    sys.exit(main())
