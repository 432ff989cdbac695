"""The one place errors become Temporal failures (`to_application_error`)."""

from __future__ import annotations

import requests

from envfactory.core.errors import InvalidInput, StoreError
from workflows.activities import to_application_error


def test_a_docker_engine_gone_mid_call_is_named_and_retryable() -> None:
    """Issue 15: a refused engine call reached the workflow as a bare ConnectionError."""
    err = to_application_error(requests.exceptions.ConnectionError("Connection aborted."))
    assert err.message.startswith("Docker engine unreachable") and "DOCKER_HOST" in err.message
    assert err.type == "SandboxError" and not err.non_retryable


def test_our_errors_keep_their_type_and_retryability() -> None:
    assert to_application_error(StoreError("db down")).non_retryable is False
    bad = to_application_error(InvalidInput("bad"))
    assert bad.type == "InvalidInput" and bad.non_retryable is True
