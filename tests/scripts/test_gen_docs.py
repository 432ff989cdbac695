"""scripts/gen_docs.py: the probe table (docs/verifiers.md) and the settings table
(README.md) are what the code gives, and `--check` says which one is stale and how to fix
it. No Docker: everything here reads code and text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from envfactory.core.models import EnvironmentSpec
from envfactory.core.settings import Settings
from scripts import gen_docs
from verifiers.probes import ALTERNATIVES, GATE_BUILT, PROBES
from verifiers.probes.base import Probe
from verifiers.probes.rewards import RewardFile

ROOT = Path(__file__).resolve().parents[2]
BATTERY = [type(p) for p in PROBES]


class InventedProbe(Probe):
    """Writes an invented marker every verifier trusts. Second sentence, not shown."""

    name = "invented-marker"

    def script(self, spec: EnvironmentSpec) -> str:
        return "true"


class RenamedRewardFile(RewardFile):
    __doc__ = RewardFile.__doc__
    name = "reward-file-renamed"


def _copy_docs(to: Path) -> None:
    for t in gen_docs.TABLES:
        (to / t.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / t.path, to / t.path)


def test_the_committed_tables_are_what_the_code_generates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert gen_docs.main(["--check"]) == 0, capsys.readouterr().err


def test_an_added_probe_appears_in_the_table_with_its_first_sentence() -> None:
    before = gen_docs.probes_block(BATTERY, GATE_BUILT)
    after = gen_docs.probes_block([*BATTERY, InventedProbe], GATE_BUILT)
    assert before != after
    added = [line for line in after if line not in before]
    assert added == ["| `invented-marker` | Writes an invented marker every verifier trusts. |"]


def test_a_renamed_probe_changes_its_row() -> None:
    renamed = [RenamedRewardFile if p is RewardFile else p for p in BATTERY]
    text = "\n".join(gen_docs.probes_block(renamed, GATE_BUILT))
    assert "`reward-file-renamed`" in text and "| `reward-file` |" not in text


def test_a_noop_only_probe_says_so() -> None:
    rows = dict(gen_docs.probe_row(p) for p in BATTERY)
    assert rows["`hanging-programs`"].endswith("(no-op state only).")
    assert "no-op state only" not in rows["`reward-file`"]


def test_every_probe_class_of_the_library_is_in_the_table() -> None:
    def named(cls: type[Probe]) -> set[type[Probe]]:
        out = set()
        for sub in cls.__subclasses__():
            if sub.__module__.startswith("verifiers.") and hasattr(sub, "name"):
                out.add(sub)
            out |= named(sub)
        return out

    assert named(Probe) == set(BATTERY) | set(GATE_BUILT) | set(ALTERNATIVES)


def test_a_stale_table_fails_the_check_naming_it_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy_docs(tmp_path)
    doc = tmp_path / "docs/verifiers.md"
    doc.write_text(doc.read_text().replace("| `reward-file` |", "| `reward-file-old` |"))
    assert gen_docs.main(["--check"], root=tmp_path) == 1
    err = capsys.readouterr().err
    assert "the probes table in docs/verifiers.md is stale" in err
    assert "python scripts/gen_docs.py" in err and "settings" not in err
    assert "reward-file-old" in err  # the diff shows what is wrong
    assert gen_docs.main([], root=tmp_path) == 0
    assert gen_docs.main(["--check"], root=tmp_path) == 0
    assert doc.read_text() == (ROOT / "docs/verifiers.md").read_text()


def test_a_stale_settings_table_names_the_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy_docs(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text().replace("| `ENVFACTORY_HOME` |", "| `ENVFACTORY_OLD` |"))
    assert gen_docs.main(["--check"], root=tmp_path) == 1
    err = capsys.readouterr().err
    assert "the settings table in README.md is stale" in err and "probes table" not in err


def test_a_file_without_its_markers_is_an_error_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy_docs(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text().replace("<!-- end generated: settings -->", ""))
    before = (tmp_path / "docs/verifiers.md").read_text()
    assert gen_docs.main([], root=tmp_path) == 1
    err = capsys.readouterr().err
    assert "README.md" in err and "<!-- end generated: settings -->" in err
    assert (tmp_path / "docs/verifiers.md").read_text() == before  # nothing written


def test_the_text_around_the_markers_is_kept() -> None:
    t = gen_docs.TABLES[0]
    text = f"# Title\n\nbefore\n{t.begin}\nold\n{t.end}\nafter\n"
    assert gen_docs.replaced(text, t, ["new"]) == (
        f"# Title\n\nbefore\n{t.begin}\n\nnew\n\n{t.end}\nafter\n"
    )


class _Sub(BaseModel):
    size: int = Field(default=2, description="how many | at most")
    flags: tuple[str, ...] = Field(default=(), description="a list")


class _Toy(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="toy_", env_nested_delimiter="__")

    home: Path = Field(default=Path(".toy"), description="where")
    first: _Sub = _Sub()
    second: _Sub = Field(default=_Sub(), description="the second one's own values")
    token: str | None = Field(default=None, description="unset means none")


def test_settings_rows_follow_the_prefix_and_delimiter_and_fold_repeated_submodels() -> None:
    lines = gen_docs.settings_block(_Toy)
    assert lines[2:] == [
        "| `TOY_HOME` | `.toy` | where |",
        "| `TOY_FIRST__SIZE` | `2` | how many \\| at most |",
        "| `TOY_FIRST__FLAGS` | `[]` | a list |",
        "| `TOY_SECOND__<FIELD>` | `FIRST`'s | the second one's own values |",
        "| `TOY_TOKEN` | unset | unset means none |",
    ]


def test_a_setting_without_a_description_is_refused() -> None:
    class Bare(BaseSettings):
        model_config = SettingsConfigDict(env_prefix="toy_")
        size: int = 3

    with pytest.raises(gen_docs.DocsError, match=r"Bare\.size \(TOY_SIZE\) has no description"):
        gen_docs.settings_block(Bare)


def test_every_documented_variable_is_one_settings_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated names are the ones pydantic-settings reads: each integer setting, set
    through its documented variable to its default + 1, comes back so."""
    delimiter = "__"
    rows = gen_docs.settings_rows(Settings, "ENVFACTORY_", delimiter)
    ints = [r for r in rows if "<" not in r.var and r.default.strip("`").isdigit()]
    assert len(ints) > 10
    for r in ints:
        monkeypatch.setenv(r.var, str(int(r.default.strip("`")) + 1))
    settings = Settings()
    for r in ints:
        value: object = settings
        for part in r.var.removeprefix("ENVFACTORY_").lower().split(delimiter):
            value = getattr(value, part)
        assert value == int(r.default.strip("`")) + 1, r.var
