"""Finding a seed's recorded scripts, and refusing a seed no configured model can run."""

from __future__ import annotations

from pathlib import Path

import pytest

from envfactory.agents.scriptbook import (
    ScriptBook,
    packaged_dir,
    require_scripts,
    script_book,
    seed_names,
    unscripted_roles,
)
from envfactory.core.errors import ConfigError
from envfactory.core.settings import AgentSettings, AgentsSettings, SeedLimits
from envfactory.seeds import load_seed

SEEDS_DIR = Path(__file__).resolve().parents[2] / "examples" / "seeds"
EXAMPLES = sorted(p for p in SEEDS_DIR.iterdir() if (p / "seed.yaml").is_file())
SCRIPTED = AgentsSettings()


def _names(seed_dir: Path) -> tuple[str, ...]:
    d = load_seed(seed_dir, SeedLimits())
    return seed_names(d.seed_id, d.fields.title, d.content_hash, d.fields.source)


def test_the_packaged_scripts_live_in_the_package_not_the_working_directory():
    assert packaged_dir().is_relative_to(Path(__file__).resolve().parents[2] / "envfactory")
    assert (packaged_dir() / "etl-silent-row-drop" / "research.yaml").is_file()


@pytest.mark.parametrize("seed_dir", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_an_example_seed_finds_every_script_by_its_own_fields_without_an_alias(seed_dir):
    """Regression (issue 14): the compose worker found the example's scripts only through
    `examples/seeds` under its working directory (a directory-name alias)."""
    names = _names(seed_dir)
    assert seed_dir.name not in names
    assert unscripted_roles(SCRIPTED, script_book(), names) == []
    for role in ("research", "judge", "verifier", "red_team"):
        assert script_book().find(names, role, seed_dir.name).turns


def test_an_example_seed_is_scripted_with_a_service_built_from_the_local_debian_base():
    """The issue's goal: one example runs an app beside a service (here Redis), built
    locally from Debian's package (no image can be pulled), with a ready check."""
    declared = {}
    for seed_dir in EXAMPLES:
        script = script_book().find(_names(seed_dir), "research", seed_dir.name)
        calls = [c for t in script.turns for c in t.calls]
        finish = next(c.args for c in calls if c.tool == "finish" and c.args)
        files = {
            c.args["path"]: c.args["content"] for c in calls if c.tool == "write_file" and c.args
        }
        for svc in finish.get("services", ()):
            declared[seed_dir.name] = svc
            assert svc["ready"], "a service without a ready check is used before it listens"
            assert files["/env/" + svc["dockerfile"]].startswith("FROM debian:12\n")
    assert declared.get("redis-invoice-queue-recovery", {}).get("name") == "redis"


def test_a_seed_nobody_scripted_is_refused_naming_the_roles_and_the_variables():
    names = seed_names("seed-0123456789ab", "Rotate the TLS certificates", "0" * 64, None)
    with pytest.raises(ConfigError) as err:
        require_scripts(SCRIPTED, script_book(), names, "Rotate the TLS certificates")
    text = str(err.value)
    assert "research, judge, verifier, red_team" in text
    assert "ENVFACTORY_AGENTS__DEFAULT__BACKEND=openai" in text
    assert "ENVFACTORY_AGENTS__DEFAULT__MODEL" in text
    assert "etl-silent-row-drop" in text  # which seeds do have scripts


def test_only_the_roles_still_on_the_scripted_backend_need_a_script():
    agents = AgentsSettings(
        default=AgentSettings(backend="openai", model="m"), judge=AgentSettings(backend="scripted")
    )
    names = seed_names("seed-0123456789ab", "Rotate the TLS certificates", "0" * 64, None)
    assert unscripted_roles(agents, script_book(), names) == ["judge"]
    with pytest.raises(ConfigError, match="ENVFACTORY_AGENTS__JUDGE__BACKEND"):
        require_scripts(agents, script_book(), names, "Rotate the TLS certificates")
    everyone = AgentsSettings(default=AgentSettings(backend="openai", model="m"))
    require_scripts(everyone, script_book(), names, "Rotate the TLS certificates")


def test_an_extra_directory_scripts_a_new_seed(tmp_path):
    role_dir = tmp_path / "tls-rotation"
    role_dir.mkdir()
    for role in ("research", "judge", "verifier", "red_team"):
        (role_dir / f"{role}.yaml").write_text(
            f"role: {role}\nturns:\n  - calls:\n      - {{tool: finish, args: {{summary: x}}}}\n"
        )
    (tmp_path / "notes.yaml").write_text("just: notes\n")  # not a script: skipped
    book = ScriptBook((packaged_dir(), tmp_path))
    names = seed_names(
        "seed-0123456789ab",
        "Rotate the TLS certificates",
        "0" * 64,
        None,
        aliases=("tls-rotation",),
    )
    require_scripts(SCRIPTED, book, names, "Rotate the TLS certificates")
    assert "tls-rotation" in book.seeds()
