"""A judge-role agent loop on the local chat server with the sandbox tools and a `finish`
tool: what the loop tests and the model-behaviour tests drive."""

from __future__ import annotations

from pydantic import BaseModel

from envfactory.agents import AgentLoop, OpenAIChatModel, SandboxTools, Tool, Toolbox, ToolResult
from envfactory.core.models import AgentRole


class FinishArgs(BaseModel):
    summary: str


async def _finish(args: FinishArgs) -> ToolResult:
    return ToolResult(observation="ok", finished=True, payload=args)


def make_loop(server, settings, sandbox, store, retry, **kw) -> AgentLoop:  # type: ignore[no-untyped-def]
    model = OpenAIChatModel(name=settings.model, api_key="test-key", base_url=settings.base_url)
    loop = AgentLoop(
        model=model,
        toolbox=Toolbox([]),
        settings=settings,
        role=AgentRole.JUDGE,
        store=store,
        retry=retry,
        **kw,
    )
    tools = SandboxTools(sandbox, workdir="/workspace", remaining_s=loop.remaining_s).tools()
    loop.toolbox = Toolbox([*tools, Tool("finish", "end", FinishArgs, _finish)])
    return loop
