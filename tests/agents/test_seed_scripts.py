"""The recorded scripts for the example seeds: one per role for every seed, each ending in a
finish call that its role accepts, touching only files the seed really attaches."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from envfactory.agents.roles import JudgeFinish, RedTeamFinish, ResearchFinish, VerifierFinish
from envfactory.agents.roles.verifier_writer import entry_problem
from envfactory.agents.scripts import ROLES, available_seeds, load_script
from envfactory.core.errors import NotFound
from envfactory.core.settings import SeedLimits
from envfactory.seeds import load_seed

SEEDS_DIR = Path(__file__).resolve().parents[2] / "examples" / "seeds"
EXAMPLES = sorted(p.name for p in SEEDS_DIR.iterdir() if (p / "seed.yaml").is_file())
FINISH = {
    "research": ResearchFinish,
    "judge": JudgeFinish,
    "verifier": VerifierFinish,
    "red_team": RedTeamFinish,
}
SANDBOX_TOOLS = {"shell", "read_file", "write_file", "list_dir"}


def test_every_example_seed_has_a_script_for_every_role():
    assert len(EXAMPLES) >= 3
    assert set(EXAMPLES) <= set(available_seeds())
    for seed in EXAMPLES:
        for role in ROLES:
            assert load_script(seed, role).turns, (seed, role)


def test_an_unknown_seed_or_role_is_a_clear_not_found():
    with pytest.raises(NotFound, match="seeds with scripts"):
        load_script("no-such-seed", "judge")
    with pytest.raises(NotFound, match="roles"):
        load_script(EXAMPLES[0], "oracle")


@pytest.mark.parametrize("seed", EXAMPLES)
@pytest.mark.parametrize("role", ROLES)
def test_each_script_ends_with_a_finish_its_role_accepts(seed, role):
    script = load_script(seed, role)
    calls = [c for t in script.turns for c in t.calls]
    assert {c.tool for c in calls[:-1]} <= SANDBOX_TOOLS
    assert calls[-1].tool == "finish"
    payload = FINISH[role].model_validate(json.loads(calls[-1].arguments()))
    if role == "verifier":
        assert entry_problem(payload.entry) is None
        assert any(
            c.tool == "write_file" and c.args["path"].startswith("/verifier/") for c in calls
        )
    if role == "research":
        assert len(payload.reference_solution) >= 2  # multi-step
        assert payload.partial_solutions
        df = next(
            c.args["content"]
            for c in calls
            if c.tool == "write_file" and c.args["path"] == "/env/Dockerfile"
        )
        # an image the local base recipes build (sandboxes/builds.py): nothing is pulled
        assert re.match(r"FROM (python:3\.11-slim|debian:12)\n", df), df.splitlines()[0]


@pytest.mark.parametrize("seed", EXAMPLES)
def test_research_scripts_use_only_files_the_seed_attaches(seed):
    draft = load_seed(SEEDS_DIR / seed, SeedLimits())
    attached = {f.path for f in draft.files}
    text = json.dumps(load_script(seed, "research").model_dump())
    used = set(re.findall(r"/seed/([\w.\-]+)", text))
    assert used and used <= attached


@pytest.mark.parametrize("seed", EXAMPLES)
def test_verifier_scripts_do_not_contain_the_reference_solution(seed):
    finish = load_script(seed, "research").turns[-1].calls[-1]
    steps = json.loads(finish.arguments())["reference_solution"]
    verifier_text = json.dumps(load_script(seed, "verifier").model_dump())
    for step in steps:
        long_lines = [ln for ln in step["script"].splitlines() if len(ln.strip()) > 40]
        assert not any(ln.strip() in verifier_text for ln in long_lines), step["title"]
