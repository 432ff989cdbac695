"""Fixtures for the agent eval harness tests: the local chat-completions server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from envfactory.agents.chat_server import LocalChatServer


@pytest.fixture
def chat() -> Iterator[LocalChatServer]:
    with LocalChatServer() as srv:
        yield srv
