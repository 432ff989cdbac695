"""Tools the model can call, and the dispatcher that turns every call into an observation.

A tool is a name, a description, a pydantic model for its arguments and an async
function. `Toolbox.dispatch` never raises for anything the model did: unknown tools,
malformed JSON, arguments that fail validation and tool failures all come back as an
observation text the model can read and act on (a bad call is data, not a crash).

The sandbox tools (`shell`, `read_file`, `write_file`, `list_dir`) act on any object
that implements `sandboxes.protocol.Sandbox`; its blocking methods run in a thread.
"""

from __future__ import annotations

import asyncio
import copy
import json
import shlex
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envfactory.core.errors import EnvFactoryError, SandboxBroken
from envfactory.core.models import ExecResult, FinishRefusal, StepCause
from sandboxes.protocol import Sandbox

from .model import CallSpec, ToolSchema


@dataclass(frozen=True)
class ToolResult:
    observation: str
    finished: bool = False  # only a finish tool that accepted its payload sets this
    payload: Any = None
    error: str | None = None  # recorded in the trajectory when the call failed
    cause: StepCause | None = None  # what kind of failure `error` is
    refusal: FinishRefusal | None = None  # a finish tool's reason for refusing
    ok: bool = True  # False for any failed call, a shell command's non-zero exit included


def refuse(kind: FinishRefusal, text: str) -> ToolResult:
    """A finish tool's refusal: the model reads `text` and may try again."""
    return ToolResult(
        observation="error: " + text,
        error=text[:300],
        cause=StepCause.FINISH_REFUSED,
        refusal=kind,
        ok=False,
    )


Handler = Callable[[Any], Awaitable["ToolResult | str"]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    params: type[BaseModel]
    fn: Handler

    def schema(self) -> ToolSchema:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": inline_refs(self.params.model_json_schema()),
            },
        }


class Toolbox:
    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools = {t.name: t for t in tools}
        self._schemas: list[ToolSchema] | None = None

    def schemas(self) -> list[ToolSchema]:
        if self._schemas is None:  # built once: JSON-schema generation costs ms per turn
            self._schemas = [t.schema() for t in self.tools.values()]
        return self._schemas

    async def dispatch(self, call: CallSpec) -> ToolResult:
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(self.tools)
            return _err(
                f"unknown tool {call.name!r}; the tools are: {known}", StepCause.UNKNOWN_TOOL
            )
        try:
            raw = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return _err(
                f"the arguments of {call.name} are not valid JSON ({exc.msg} at char {exc.pos}); "
                "send the call again with a JSON object",
                StepCause.MALFORMED_ARGUMENTS,
            )
        if not isinstance(raw, dict):
            return _err(
                f"the arguments of {call.name} must be a JSON object, got {type(raw).__name__}",
                StepCause.MALFORMED_ARGUMENTS,
            )
        try:
            args = tool.params.model_validate(raw)
        except ValidationError as exc:
            bad = _err(
                f"invalid arguments for {call.name}:\n{_validation_text(exc)}",
                StepCause.INVALID_ARGUMENTS,
            )
            if call.name == "finish":  # a finish payload that fails validation is refused
                return replace(bad, refusal=FinishRefusal.INVALID_OUTPUT)
            return bad
        try:
            out = await tool.fn(args)
        except EnvFactoryError as exc:
            return _err(f"{call.name} failed: {exc}", StepCause.TOOL_FAILED)
        except Exception as exc:  # a tool bug must not end the episode; it is recorded
            return _err(
                f"{call.name} failed unexpectedly: {type(exc).__name__}: {exc}",
                StepCause.TOOL_FAILED,
            )
        return out if isinstance(out, ToolResult) else ToolResult(observation=out)


def _err(text: str, cause: StepCause = StepCause.TOOL_FAILED) -> ToolResult:
    return ToolResult(observation="error: " + text, error=text, cause=cause, ok=False)


def _validation_text(exc: ValidationError) -> str:
    lines = []
    for e in exc.errors()[:20]:
        loc = ".".join(str(p) for p in e["loc"]) or "(arguments)"
        lines.append(f"- {loc}: {e['msg']}")
    return "\n".join(lines)


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace `$ref`s into `$defs` with the definitions (some servers ignore `$defs`)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(copy.deepcopy(defs[ref.rsplit("/", 1)[1]]))
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return cast(dict[str, Any], walk(schema))  # a dict walks to a dict


def cap_text(text: str, limit: int) -> str:
    """Keep head and tail of long output; the middle is where the least is lost."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters cut ...]\n{text[-half:]}"


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ShellArgs(_Args):
    command: str = Field(description="a bash command line (runs under `bash -lc`)")
    timeout_s: int | None = Field(default=None, ge=1, description="seconds before it is killed")


class ReadArgs(_Args):
    path: str = Field(description="absolute path of the file")


class WriteArgs(_Args):
    path: str = Field(description="absolute path; parent directories are created")
    content: str
    executable: bool = False


class ListArgs(_Args):
    path: str = Field(default=".", description="directory to list")


@dataclass
class SandboxTools:
    """The four sandbox tools, bound to one sandbox."""

    sandbox: Sandbox
    workdir: str = "/workspace"
    default_timeout_s: int = 120
    max_timeout_s: int = 600
    output_cap: int = 12_000
    remaining_s: Callable[[], float] | None = None  # the loop's wall-time budget

    def tools(self) -> list[Tool]:
        return [
            Tool(
                "shell",
                "Run a bash command in the environment; returns exit code and output.",
                ShellArgs,
                self.shell,
            ),
            Tool("read_file", "Read a text file from the environment.", ReadArgs, self.read_file),
            Tool(
                "write_file",
                "Create or overwrite a file in the environment.",
                WriteArgs,
                self.write_file,
            ),
            Tool(
                "list_dir", "List a directory in the environment (ls -la).", ListArgs, self.list_dir
            ),
        ]

    def _timeout(self, asked: int | None) -> float:
        t = float(min(asked or self.default_timeout_s, self.max_timeout_s))
        if self.remaining_s is not None:
            t = max(1.0, min(t, self.remaining_s()))
        return t

    async def shell(self, a: ShellArgs) -> ToolResult:
        timeout = self._timeout(a.timeout_s)
        try:
            res = await asyncio.to_thread(
                self.sandbox.exec, a.command, timeout=timeout, workdir=self.workdir
            )
        except SandboxBroken as exc:
            return await self._restarted(exc)
        return ToolResult(observation=format_exec(res, self.output_cap, timeout), ok=res.ok)

    async def _restarted(self, exc: SandboxBroken) -> ToolResult:
        """The sandbox could not run the command (e.g. a fork bomb the model left running
        holds every pid): restart it — every process ends, files stay — and say so. A
        sandbox past its disk quota is gone; that error reaches the model as it is."""
        if exc.reason == "disk_exceeded":
            raise exc
        await asyncio.to_thread(self.sandbox.restart)
        text = (
            f"the sandbox could not run the command ({exc.message}). It has been "
            "restarted: every process ended, background servers included; files are kept."
        )
        return _err(text)

    async def read_file(self, a: ReadArgs) -> str:
        data = await asyncio.to_thread(self.sandbox.read_file, a.path, self.output_cap * 4)
        return cap_text(data.decode("utf-8", errors="replace"), self.output_cap)

    async def write_file(self, a: WriteArgs) -> str:
        mode = 0o755 if a.executable else 0o644
        await asyncio.to_thread(self.sandbox.write_file, a.path, a.content.encode(), mode)
        return f"wrote {len(a.content.encode())} bytes to {a.path}"

    async def list_dir(self, a: ListArgs) -> ToolResult:
        try:
            res = await asyncio.to_thread(
                self.sandbox.exec,
                f"ls -la -- {shlex.quote(a.path)}",
                timeout=30.0,
                workdir=self.workdir,
            )
        except SandboxBroken as exc:
            return await self._restarted(exc)
        return ToolResult(observation=format_exec(res, self.output_cap, 30.0), ok=res.ok)


def format_exec(res: ExecResult, cap: int, timeout: float) -> str:
    head = f"exit_code: {res.exit_code}"
    if res.timed_out:
        head += f" (killed: timed out after {timeout:.0f}s)"
    if res.oom_killed:
        head += " (killed: out of memory)"
    if res.disk_exceeded:
        head += " (killed: the sandbox wrote past its disk quota and was removed)"
    if res.truncated:
        head += " (output truncated by the sandbox)"
    parts = [head]
    if res.stdout:
        parts.append("stdout:\n" + cap_text(res.stdout, cap))
    if res.stderr:
        parts.append("stderr:\n" + cap_text(res.stderr, cap // 2))
    return "\n".join(parts)
