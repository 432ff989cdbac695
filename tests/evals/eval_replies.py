"""Reply scripts for the eval harness tests: attempts that succeed or fail in each way."""

from __future__ import annotations

from pathlib import Path

from envfactory.agents.chat_server import Reply, text_reply, tool_reply

DOCKERFILE = "FROM python:3.11-slim\nRUN mkdir -p /workspace\nWORKDIR /workspace\n"
SPEC = {
    "name": "answer-file",
    "instruction": "Write the answer, 42, into /workspace/answer.txt as one line.",
    "success_criteria": "/workspace/answer.txt exists and holds exactly the line 42.",
    "hidden_state_notes": "nothing is hidden here",
    "reference_solution": [{"title": "answer", "script": "echo 42 > /workspace/answer.txt"}],
    "partial_solutions": [
        {"name": "wrong answer", "steps": [{"script": "echo 41 > /workspace/answer.txt"}]}
    ],
}
SOUND = 'test "$(cat /workspace/answer.txt)" = 42\n'  # the verifier the gates accept
WEAK = "test -f /workspace/answer.txt\n"  # rewards the wrong answer too: gates reject it


def write_seed(root: Path, name: str, title: str) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "seed.yaml").write_text(
        f"title: {title}\ndomain: testing\ndescription: |\n"
        f"  An operator writes an answer file; {name} exercises the eval harness.\n"
    )
    return d


def write(path: str, content: str) -> Reply:
    return tool_reply(("write_file", {"path": path, "content": content}))


def finish(args: dict[str, object]) -> Reply:
    return tool_reply(("finish", args))


def chatter(n: int) -> list[Reply]:
    """Text without tool calls, n turns: with stuck_after=n the run ends as stuck."""
    return [text_reply(f"Thinking ({i})...") for i in range(n)]


def research_good(case: str = "") -> list[Reply]:
    """A proven environment; `case` marks its instruction (to route the verifier's replies)."""
    spec = SPEC | {"instruction": f"{SPEC['instruction']} (case {case})"} if case else SPEC
    return [write("/env/Dockerfile", DOCKERFILE), finish(spec)]


def verifier(check: str, stuck: int = 0) -> list[Reply]:
    """Write /verifier/check.sh and submit it (then chatter, if the finish is refused)."""
    entry = {"summary": "checks answer.txt", "entry": "/bin/bash check.sh"}
    return [write("/verifier/check.sh", check), finish(entry), *chatter(stuck)]


def judge(answer: str) -> list[Reply]:
    return [
        tool_reply(("shell", {"command": f"echo {answer} > /workspace/answer.txt"})),
        finish({"summary": f"wrote {answer}", "solved": True}),
    ]


def research_build_fails(stuck: int) -> list[Reply]:
    bad = DOCKERFILE + "RUN exit 7\n"
    return [write("/env/Dockerfile", bad), finish(SPEC), *chatter(stuck)]


def research_reference_fails(stuck: int) -> list[Reply]:
    steps = [{"title": "answer", "script": "echo 41 > answer.txt; exit 1"}]
    return [
        write("/env/Dockerfile", DOCKERFILE),
        finish(SPEC | {"reference_solution": steps}),
        *chatter(stuck),
    ]


def research_invalid(stuck: int) -> list[Reply]:
    return [finish({"name": "x"}), *chatter(stuck)]
