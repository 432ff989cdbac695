"""Agents: one OpenAI-compatible tool-calling loop, run by four roles.

Layering: imports `envfactory.core` and the `sandboxes.protocol` interface only (never a
Docker implementation, the database or workflows). The model is injected (`ChatModel`:
`OpenAIChatModel` for any chat-completions server, `ScriptedModel` offline); so are the
sandbox, the engine and the artifact store.
"""

from .factory import make_model, resolve_api_key
from .loop import AgentLoop, LoopResult
from .model import CallSpec, ChatModel, Completion, OpenAIChatModel
from .retry import RetryPolicy
from .scripted import Script, ScriptedModel
from .tools import SandboxTools, Tool, Toolbox, ToolResult

__all__ = [
    "AgentLoop",
    "CallSpec",
    "ChatModel",
    "Completion",
    "LoopResult",
    "OpenAIChatModel",
    "RetryPolicy",
    "SandboxTools",
    "Script",
    "ScriptedModel",
    "Tool",
    "ToolResult",
    "Toolbox",
    "make_model",
    "resolve_api_key",
]
