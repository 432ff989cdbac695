"""Versioned prompt files (`<role>.v<N>.md`), shipped as package data.

A prompt's version is its file name without `.md` (`judge.v1`); trajectories and
verifier provenance record it. A change of wording is a new file, never an edit of a
released one, so a recorded version always names the exact text the model saw.
Placeholders are `string.Template` style (`$instruction`), so braces in examples are safe.
"""

from __future__ import annotations

from importlib import resources
from string import Template

from envfactory.core.errors import ConfigError


def load_prompt(version: str) -> str:
    """The text of `prompts/<version>.md`, e.g. `load_prompt("judge.v1")`."""
    path = resources.files(__package__).joinpath(f"{version}.md")
    if not path.is_file():
        raise ConfigError(
            f"no prompt file {version}.md in envfactory/agents/prompts",
            hint="prompt versions look like 'judge.v1'",
        )
    return path.read_text(encoding="utf-8")


def render_prompt(version: str, **values: str) -> str:
    """The prompt with `$name` placeholders filled; a missing value is an error."""
    try:
        return Template(load_prompt(version)).substitute(values)
    except KeyError as exc:
        raise ConfigError(f"prompt {version} needs a value for {exc}") from exc
