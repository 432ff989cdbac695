"""A model's instruction for a mined commit: asked over the real chat-completions protocol
(a local server), shown the message and the paths, never the diff; an answer that quotes
the fix is refused (the template writes the instruction then)."""

from __future__ import annotations

import json
from pathlib import Path

from envfactory.agents.chat_server import LocalChatServer, text_reply
from envfactory.agents.model import OpenAIChatModel
from envfactory.core.settings import Settings
from envfactory.repos.taskdir import written_instruction
from envfactory.repos.wording import Written, model_writer, quoted_fix
from workflows.composition import make_services

PATCH = """diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -7,2 +7,2 @@ def sub(a, b):
-    return b - a
+    return a - b if a is not None else raise_missing(b)
"""
MESSAGE = "Fix sub: it subtracted the wrong way round\n\nsub(5, 3) gave -2."


def test_a_line_of_the_fix_or_diff_syntax_in_the_text_is_a_quote():
    assert quoted_fix("Make sub(a, b) return a minus b.", PATCH) is None
    quote = "Change it to `return a - b if a is not None else raise_missing(b)`."
    assert quoted_fix(quote, PATCH) == "return a - b if a is not None else raise_missing(b)"
    assert quoted_fix("@@ -7,2 +7,2 @@ fix", PATCH) == "diff syntax"
    assert quoted_fix("return b - a", PATCH) is None  # too short to be a quote


def test_the_model_sees_the_message_and_paths_never_the_diff():
    answer = "sub(a, b) must return a minus b: sub(5, 3) is 2, not -2."
    with LocalChatServer([text_reply(answer, usage=(90, 30))], auto_summary=False) as server:
        model = OpenAIChatModel(name="writer-model", api_key="", base_url=server.url)
        written = model_writer(model)("a" * 40, MESSAGE, ["calc.py"], PATCH)
        (request,) = server.requests
    assert written == Written(text=answer, tokens=120, model="writer-model")
    shown = json.dumps(request["messages"])
    assert "subtracted the wrong way round" in shown and "calc.py" in shown
    assert "raise_missing" not in shown and "@@" not in shown
    page = written_instruction("a" * 40, written)
    assert page.startswith(answer) and "written by the model writer-model" in page
    assert "never saw the change" in page


def test_an_answer_quoting_the_fix_is_refused():
    leaky = "Replace the body with:\n    return a - b if a is not None else raise_missing(b)\n"
    with LocalChatServer([text_reply(leaky)], auto_summary=False) as server:
        model = OpenAIChatModel(name="m", api_key="", base_url=server.url)
        assert model_writer(model)("a" * 40, MESSAGE, ["calc.py"], PATCH) is None


def test_no_model_is_asked_when_the_research_role_is_scripted(tmp_path: Path):
    services = make_services(Settings(home=tmp_path, database_url=None))
    assert services._writer() is None
