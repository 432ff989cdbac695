"""Making a `ChatModel` from a role's settings — the one place that touches credentials.

Call `resolve_api_key` at a process edge (CLI command, worker main) with the environment
mapping; pass the key down. Below the edge nothing reads the environment.
"""

from __future__ import annotations

from collections.abc import Mapping

from envfactory.core.errors import ConfigError
from envfactory.core.settings import AgentSettings

from .model import ChatModel, OpenAIChatModel
from .scripted import Script, ScriptedModel


def resolve_api_key(settings: AgentSettings, environ: Mapping[str, str]) -> str:
    """The API key named by `settings.api_key_env`; local servers may need none."""
    if settings.backend != "openai":
        return ""
    key = environ.get(settings.api_key_env, "")
    if not key and settings.base_url is None:
        raise ConfigError(
            f"no API key: the environment variable {settings.api_key_env} is empty",
            hint=f"export {settings.api_key_env}=..., or set base_url to a local server "
            "(SGLang, vLLM) that needs no key",
        )
    return key


def make_model(
    settings: AgentSettings, *, api_key: str = "", script: Script | None = None
) -> ChatModel:
    if settings.backend == "scripted":
        if script is None:
            raise ConfigError(
                "the scripted backend needs a script",
                hint="pass script=Script.load(path), or set backend='openai'",
            )
        return ScriptedModel(script, name=settings.model_name)
    if not settings.model:
        raise ConfigError(
            "the openai backend needs a model name, and none is set",
            hint="set ENVFACTORY_AGENTS__DEFAULT__MODEL (or the role's own "
            "ENVFACTORY_AGENTS__<ROLE>__MODEL)",
        )
    return OpenAIChatModel(name=settings.model, api_key=api_key, base_url=settings.base_url)
