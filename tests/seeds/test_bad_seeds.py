"""Every way a seed can be wrong gets a message naming the field or file and how to fix it,
a refusal (non-zero exit on the CLI), and nothing stored — checked through the function
and through the command line, case by case."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.core.errors import InvalidSeed
from envfactory.core.settings import SeedLimits, Settings
from envfactory.seeds import submit_seed
from envfactory.store import ArtifactStore, Store
from tests.seeds.conftest import MODEL_ENV


def _yaml(d: Path, old: str, new: str) -> Path:
    f = d / "seed.yaml"
    text = f.read_text()
    assert old in text, old
    f.write_text(text.replace(old, new))
    return d


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _deep(d: Path, levels: int) -> Path:
    """An attachment whose directories nest `levels` deep (one file at the bottom)."""
    here = os.getcwd()
    os.chdir(d / "data")  # relative steps: a 1,100-level absolute path passes PATH_MAX
    try:
        for _ in range(levels):
            os.mkdir("d")
            os.chdir("d")
        Path("leaf.txt").write_text("x\n")
    finally:
        os.chdir(here)
    return d


def _outside(d: Path) -> Path:
    return _write(d.parent / "outside" / "secret.txt", "api_key=hunter2\n")


def _symlinked_seed_yaml(d: Path) -> Path:
    real = _write(d.parent / "real.yaml", (d / "seed.yaml").read_text())
    (d / "seed.yaml").unlink()
    (d / "seed.yaml").symlink_to(real)
    return d


def _symlink(d: Path, name: str, target: Path, attach: str | None = None) -> Path:
    (d / name).symlink_to(target)
    return _yaml(d, "  - data\n", f"  - {attach or name}\n") if attach != "" else d


#: Regression (issue 15): 385 bytes that took 41 s and 3.1 GB before their error, because
#: the message repr()'d the expanded value.
ALIAS_BOMB = (
    "".join(
        f"{k}: &{k} [{', '.join([f'*{p}'] * 9)}]\n"
        if p
        else f"{k}: &{k} [{', '.join(['lol'] * 9)}]\n"
        for k, p in zip("abcdefgh", ["", *"abcdefg"], strict=True)
    )
    + "title: *h\ndescription: d\ndomain: x\n"
)


@dataclass(frozen=True)
class Case:
    id: str
    make: Callable[[Path], Path]  # breaks a valid seed dir; returns what to submit
    says: tuple[str, ...]  # substrings the user must see
    duplicate: bool = False  # submit the untouched seed first


CASES = [
    Case(
        "missing title",
        lambda d: _yaml(d, "title: Nightly ETL drops rows after a schema change\n", ""),
        ("field 'title'", "is missing", "title: "),
    ),
    Case(
        "empty description",
        lambda d: _yaml(
            d,
            "description: |\n  The partner changed the export format; "
            "the job keeps 0 rows and exits 0.\n",
            'description: "   "\n',
        ),
        ("field 'description'", "is empty"),
    ),
    Case(
        "missing domain",
        lambda d: _yaml(d, "domain: data-engineering\n", ""),
        ("field 'domain'", "is missing", "domain: data-engineering"),
    ),
    Case(
        "title of the wrong type",
        lambda d: _yaml(d, "title: Nightly ETL drops rows after a schema change", "title: 42"),
        ("field 'title'", "must be text, got int 42"),
    ),
    Case(
        "title too long",
        lambda d: _yaml(d, "title: Nightly ETL", "title: " + "x" * 300 + " Nightly ETL"),
        ("field 'title'", "is too long", "at most 200"),
    ),
    Case(
        "number given as a string",
        lambda d: _yaml(d, "max_turns: 40", 'max_turns: "40"'),
        ("field 'constraints.max_turns'", "must be a whole number, got str '40'", "max_turns: 60"),
    ),
    Case(
        "number out of range",
        lambda d: _yaml(d, "max_turns: 40", "max_turns: 0"),
        ("field 'constraints.max_turns'", "must be at least 1, got 0"),
    ),
    Case(
        "unknown base image",
        lambda d: _yaml(d, "base_image: python", "base_image: ubuntu"),
        ("field 'constraints.base_image'", "'debian' or 'python'", "ubuntu"),
    ),
    Case(
        "solve-rate band inverted",
        lambda d: _yaml(
            d,
            "base_image: python\n",
            "base_image: python\n  min_solve_rate: 0.8\n  max_solve_rate: 0.2\n",
        ),
        ("field 'constraints'", "min_solve_rate 0.8 is above max_solve_rate 0.2"),
    ),
    Case(
        "solve rate above 1",
        lambda d: _yaml(d, "base_image: python\n", "base_image: python\n  max_solve_rate: 1.5\n"),
        ("field 'constraints.max_solve_rate'", "must be at most 1", "max_solve_rate: 0.75"),
    ),
    Case(
        "solve rate given as a string",
        lambda d: _yaml(d, "base_image: python\n", 'base_image: python\n  min_solve_rate: "0.5"\n'),
        ("field 'constraints.min_solve_rate'", "must be a number, got str '0.5'"),
    ),
    Case(
        "no judges",
        lambda d: _yaml(d, "base_image: python\n", "base_image: python\n  judges: 0\n"),
        ("field 'constraints.judges'", "must be at least 1, got 0", "judges: 4"),
    ),
    Case(
        "constraints not a mapping",
        lambda d: _yaml(
            d,
            "constraints:\n  max_turns: 40\n  time_budget_s: 900\n  base_image: python\n",
            "constraints: 40\n",
        ),
        ("field 'constraints'", "must be a mapping"),
    ),
    Case(
        "unknown top-level key",
        lambda d: _yaml(d, "domain:", "titel: typo\ndomain:"),
        ("field 'titel'", "unknown key", "did you mean 'title'"),
    ),
    Case(
        "unknown nested key",
        lambda d: _yaml(d, "max_turns: 40", "max_turn: 40"),
        ("field 'constraints.max_turn'", "unknown key", "did you mean 'max_turns'"),
    ),
    Case(
        "repository not a URL",
        lambda d: _yaml(d, "domain:", "repository: my laptop copy\ndomain:"),
        ("field 'repository'", "is not a clone URL", "https://"),
    ),
    Case(
        "history without a repository",
        lambda d: _yaml(d, "domain:", "history: {limit: 5}\ndomain:"),
        ("field 'history'", "needs `repository:`"),
    ),
    Case(
        "history revision that is an option",
        lambda d: _yaml(
            d, "domain:", "repository: /srv/git/calc.git\nhistory:\n  revisions: [--all]\ndomain:"
        ),
        ("field 'history.revisions'", "starts with '-'"),
    ),
    Case(
        "history with a range and a list",
        lambda d: _yaml(
            d,
            "domain:",
            "repository: /srv/git/calc.git\nhistory:\n  revisions: [a..b, v1]\ndomain:",
        ),
        ("field 'history.revisions'", "one A..B range, or a list"),
    ),
    Case(
        "history range of three parts",
        lambda d: _yaml(
            d, "domain:", "repository: /srv/git/calc.git\nhistory:\n  revisions: [A..B..C]\ndomain:"
        ),
        ("field 'history.revisions'", "is not a range A..B"),
    ),
    Case(
        "history key misspelt",
        lambda d: _yaml(
            d, "domain:", "repository: /srv/git/calc.git\nhistory:\n  limt: 5\ndomain:"
        ),
        ("history.limt", "limit"),
    ),
    Case(
        "history limit not a number",
        lambda d: _yaml(
            d, "domain:", "repository: /srv/git/calc.git\nhistory:\n  limit: '5'\ndomain:"
        ),
        ("field 'history.limit'", "a whole number"),
    ),
    Case(
        "attachments of the wrong type",
        lambda d: _yaml(d, "  - job.py\n  - data\n", "  job.py: 1\n"),
        ("field 'attachments'", "must be a path or a list of paths, got dict"),
    ),
    Case(
        "empty attachment entry",
        lambda d: _yaml(d, "  - data\n", '  - ""\n'),
        ("field 'attachments[1]'", "must be a non-empty path"),
    ),
    Case(
        "attachment not found",
        lambda d: _yaml(d, "  - data\n", "  - dataa\n"),
        ("attachment 'dataa'", "not found in the seed directory"),
    ),
    Case(
        "path escaping the seed directory",
        lambda d: (_outside(d), _yaml(d, "  - data\n", "  - ../outside/secret.txt\n"))[1],
        ("attachment '../outside/secret.txt'", "escapes the seed directory"),
    ),
    Case(
        "absolute path",
        lambda d: _yaml(d, "  - data\n", "  - /etc/hostname\n"),
        ("attachment '/etc/hostname'", "absolute path", "relative to the seed directory"),
    ),
    Case(
        "backslash path",
        lambda d: _yaml(d, "  - data\n", "  - data\\orders.csv\n"),
        ("attachment 'data\\orders.csv'", "backslashes", "forward slashes"),
    ),
    Case(
        "symlinked attachment",
        lambda d: _symlink(d, "notes.txt", _outside(d)),
        ("attachment 'notes.txt'", "is a symlink", "copy the real file"),
    ),
    Case(
        "symlink inside an attached directory",
        lambda d: ((d / "data" / "passwd").symlink_to("/etc/passwd"), d)[1],
        ("attachment 'data/passwd'", "is a symlink"),
    ),
    Case(
        "path through a symlinked directory",
        lambda d: _symlink(d, "ext", _outside(d).parent, "ext/secret.txt"),
        ("attachment 'ext/secret.txt'", "passes through a symlink (ext)"),
    ),
    Case("symlinked seed.yaml", _symlinked_seed_yaml, ("seed.yaml", "is a symlink")),
    Case(
        "oversize attachment",
        lambda d: (_write(d / "data" / "big.bin", b"\0" * 3_000), d)[1],
        (
            "attachment 'data/big.bin'",
            "is too large (3000 bytes; at most 2000 bytes)",
            "ENVFACTORY_SEEDS__MAX_ATTACHMENT_BYTES",
        ),
    ),
    Case(
        "attachments too large together",
        lambda d: (
            [_write(d / "data" / n, "x" * 1_990) for n in ("orders.csv", "p0.txt", "p1.txt")],
            d,
        )[1],
        ("attachments", "too large together", "MAX_TOTAL_BYTES"),
    ),
    Case(
        "too many attachments",
        lambda d: ([_write(d / "data" / f"f{i}.txt", f"{i}") for i in range(5)], d)[1],
        ("attachments", "too many files (more than 4", "bundle them"),
    ),
    Case(
        "non-UTF-8 seed.yaml",
        lambda d: (
            _write(
                d / "seed.yaml",
                (d / "seed.yaml").read_text().replace("Nightly", "Café nightly").encode("latin-1"),
            ).parent
        ),
        ("seed.yaml", "is not UTF-8 text", "byte 0xe9 at line 1", "iconv"),
    ),
    Case(
        "non-UTF-8 text attachment",
        lambda d: (_write(d / "data" / "orders.csv", "id;name\n1;Müller\n".encode("latin-1")), d)[
            1
        ],
        ("attachment 'data/orders.csv'", "is not UTF-8 text", "line 2", "iconv"),
    ),
    Case(
        "invalid YAML",
        lambda d: _write(d / "seed.yaml", "title: [unclosed\ndomain: x\n").parent,
        ("seed.yaml", "is not valid YAML at line"),
    ),
    Case(
        "YAML that is not a mapping",
        lambda d: _write(d / "seed.yaml", "- title\n- domain\n").parent,
        ("seed.yaml", "must be a YAML mapping of fields, got a list"),
    ),
    Case(
        "empty seed.yaml",
        lambda d: _write(d / "seed.yaml", "").parent,
        ("seed.yaml", "got an empty file"),
    ),
    Case(
        "YAML alias bomb",
        lambda d: _write(d / "seed.yaml", ALIAS_BOMB).parent,
        ("seed.yaml", "expands to more than", "through aliases", "no repeated aliases"),
    ),
    Case(
        "recursive YAML alias",
        lambda d: _yaml(d, "domain: data-engineering", "domain: &x [*x]"),
        ("seed.yaml", "an alias refers to a node that contains it"),
    ),
    Case(
        "deeply nested YAML",
        lambda d: _yaml(d, "domain: data-engineering", "domain: " + "[" * 600 + "]" * 600),
        ("seed.yaml", "nesting deeper than 50 levels"),
    ),
    Case(
        "NUL escape in a field",
        lambda d: _yaml(
            d, "title: Nightly ETL drops rows after a schema change", 'title: "Nightly\\0ETL"'
        ),
        ("field 'title'", "must not contain NUL characters"),
    ),
    Case(
        "NUL escape in the description",
        lambda d: _yaml(
            d, "description: |\n  The partner", 'description: "a\\0b"\nsource: |\n  The partner'
        ),
        ("field 'description'", "must not contain NUL"),
    ),
    Case(
        "NUL escape in an attachment path",
        lambda d: _yaml(d, "  - data\n", '  - "data\\0x"\n'),
        ("attachment 'data\\0x'", "contains a NUL character"),
    ),
    Case(
        "mapping key that is a list",
        lambda d: _yaml(d, "domain:", "? [a, b]\n: 1\ndomain:"),
        ("seed.yaml", "a mapping key must be a plain value", "line 4"),
    ),
    Case(
        "attachment directory nested 65 levels",
        lambda d: _deep(d, 65),
        ("attachment 'data'", "nested deeper than 64 levels", "tar.gz"),
    ),
    Case(
        "title with an escape sequence",
        lambda d: _yaml(
            d,
            "title: Nightly ETL drops rows after a schema change",
            'title: "Nightly ETL\\e[2J\\rdrops rows"',
        ),
        ("field 'title'", "without control characters", "\\x1b", "\\r"),
    ),
    Case(
        "attachment named with a newline",
        lambda d: (_write(d / "data" / "a\nb.csv", "x\n"), d)[1],
        ("attachment 'data/a\\nb.csv'", "without control characters"),
    ),
    Case(
        "attachment hard-linked to a file outside the seed",
        lambda d: (os.link(_outside(d), d / "data" / "secret.txt"), d)[1],
        ("attachment 'data/secret.txt'", "hard link to a file that has a name outside"),
    ),
    Case(
        "key given twice",
        lambda d: _yaml(d, "domain:", "title: again\ndomain:"),
        ("seed.yaml", "key 'title' appears twice (second time on line 4)"),
    ),
    Case(
        "directory without seed.yaml",
        lambda d: ((d / "seed.yaml").unlink(), d)[1],
        ("has no seed.yaml", "put the seed fields in seed.yaml"),
    ),
    Case("path that does not exist", lambda d: d / "nope", ("nope", "does not exist")),
    Case(
        "several problems at once",
        lambda d: _yaml(
            _yaml(d, "title: Nightly ETL drops rows after a schema change\n", ""),
            "max_turns: 40",
            "max_turns: lots",
        ),
        ("2 problems", "field 'title'", "field 'constraints.max_turns'"),
    ),
    Case(
        "duplicate of a stored seed",
        lambda d: shutil.copytree(d, d.parent / "again"),
        ("seed.yaml: is a duplicate of seed-", "envfactory seed show seed-"),
        duplicate=True,
    ),
]


def _message(exc: InvalidSeed) -> str:
    return str(exc)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_bad_seed_is_refused_by_name_and_nothing_is_stored(
    case: Case, seed_dir: Path, limits: SeedLimits, store: Store, artifacts: ArtifactStore
) -> None:
    if case.duplicate:
        submit_seed(seed_dir, store=store, artifacts=artifacts, limits=limits)
    seeds_before, keys_before = store.seeds.count(), set(artifacts.keys())
    target = case.make(seed_dir)
    with pytest.raises(InvalidSeed) as info:
        submit_seed(target, store=store, artifacts=artifacts, limits=limits)
    message = _message(info.value)
    for part in case.says:
        assert part in message, f"{part!r} not in:\n{message}"
    assert store.seeds.count() == seeds_before
    assert set(artifacts.keys()) == keys_before


def _cli_env(home: Path, limits: SeedLimits) -> dict[str, str | None]:
    return {
        "ENVFACTORY_HOME": str(home),
        "ENVFACTORY_DATABASE_URL": None,  # unset: the embedded default under home
        "ENVFACTORY_SEEDS__MAX_ATTACHMENTS": str(limits.max_attachments),
        "ENVFACTORY_SEEDS__MAX_ATTACHMENT_BYTES": str(limits.max_attachment_bytes),
        "ENVFACTORY_SEEDS__MAX_TOTAL_BYTES": str(limits.max_total_bytes),
        "COLUMNS": "200",
        **MODEL_ENV,  # a model is configured: any valid seed may run
    }


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_cli_refuses_a_bad_seed_with_a_non_zero_exit_and_stores_nothing(
    case: Case, seed_dir: Path, limits: SeedLimits, tmp_path: Path
) -> None:
    runner, home = CliRunner(), tmp_path / "home"
    env = _cli_env(home, limits)
    if case.duplicate:
        assert runner.invoke(app, ["seed", "submit", str(seed_dir)], env=env).exit_code == 0
    target = case.make(seed_dir)
    result = runner.invoke(app, ["seed", "submit", str(target)], env=env)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: ")
    for part in case.says:
        assert part in result.stderr, f"{part!r} not in:\n{result.stderr}"
    as_json = runner.invoke(app, ["seed", "submit", str(target), "--json"], env=env)
    assert as_json.exit_code == 1
    body = json.loads(as_json.stdout)
    assert body["error"] == "InvalidSeed" and body["where"] and body["message"]
    if case.duplicate:
        settings = Settings(home=home, database_url=None)
        with Store.from_settings(settings) as store:
            assert store.seeds.count() == 1
    else:  # validation happens before the store is opened: not even a database appears
        assert not (home / "envfactory.db").exists()
        assert not (home / "artifacts").exists()


def test_an_attachment_nested_1100_levels_is_refused_not_a_recursion_error(
    seed_dir: Path, limits: SeedLimits, store: Store, artifacts: ArtifactStore
) -> None:
    _deep(seed_dir, 1100)  # os.walk alone recurses past Python's stack at ~1,000
    try:
        with pytest.raises(InvalidSeed, match="nested deeper than 64 levels"):
            submit_seed(seed_dir, store=store, artifacts=artifacts, limits=limits)
        assert store.seeds.count() == 0
    finally:
        _remove_deep(seed_dir / "data")


def _remove_deep(top: Path) -> None:
    """Remove a tree too deep for shutil.rmtree (it recurses too), bottom up."""
    here = os.getcwd()
    os.chdir(top)
    try:
        depth = 0
        while os.path.isdir("d"):
            os.chdir("d")
            depth += 1
        for _ in range(depth):
            for name in os.listdir("."):
                os.unlink(name) if not os.path.isdir(name) else os.rmdir(name)
            os.chdir("..")
        os.rmdir("d")
    finally:
        os.chdir(here)
