"""The one place errors become Temporal failures (`to_application_error`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

import pytest
import requests
from temporalio.api.failure.v1 import Failure
from temporalio.converter import DataConverter, DefaultFailureConverter
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from envfactory.core.errors import InvalidInput, StoreError, cut_cause_cycles, raise_as
from workflows.activities import PipelineActivities, to_application_error


def test_a_docker_engine_gone_mid_call_is_named_and_retryable() -> None:
    """Issue 15: a refused engine call reached the workflow as a bare ConnectionError."""
    err = to_application_error(requests.exceptions.ConnectionError("Connection aborted."))
    assert err.message.startswith("Docker engine unreachable") and "DOCKER_HOST" in err.message
    assert err.type == "SandboxError" and not err.non_retryable


def test_our_errors_keep_their_type_and_retryability() -> None:
    assert to_application_error(StoreError("db down")).non_retryable is False
    bad = to_application_error(InvalidInput("bad"))
    assert bad.type == "InvalidInput" and bad.non_retryable is True


def _engine_gone_raised_as_its_own_cause(_: object) -> None:
    """What the sandbox engine's start did when a failure needed no translation:
    ``raise translate(exc) from exc`` with ``translate(exc) is exc``."""
    try:
        raise requests.exceptions.ConnectionError("Connection aborted.")
    except requests.exceptions.ConnectionError as exc:
        raise exc from exc


def _already_an_application_error(_: object) -> None:
    raise ApplicationError("SandboxError: engine gone", type="SandboxError")


@pytest.mark.parametrize(
    "service", [_engine_gone_raised_as_its_own_cause, _already_an_application_error]
)
def test_a_failure_whose_cause_chain_loops_still_reaches_temporal_with_its_message(
    service: Callable[[object], None],
) -> None:
    """An engine outage reached the workflow as 'Failed building exception result: maximum
    recursion depth exceeded' (the fault test of a Docker engine that stays away)."""
    activities = PipelineActivities(cast(Any, object()))
    try:
        with pytest.raises(ApplicationError) as caught:
            asyncio.run(ActivityEnvironment().run(activities._call, service, None))
    finally:
        activities.close()
    failure = Failure()
    DefaultFailureConverter().to_failure(
        caught.value, DataConverter.default.payload_converter, failure
    )
    assert "engine" in failure.message and caught.value.type == "SandboxError"
    assert caught.value.__cause__ is not caught.value


def test_raise_as_never_makes_an_error_its_own_cause() -> None:
    err = ValueError("x")
    with pytest.raises(ValueError) as caught:
        raise_as(err, err)
    assert caught.value.__cause__ is None
    with pytest.raises(KeyError) as other:
        raise_as(KeyError("y"), err)
    assert other.value.__cause__ is err


def test_cut_cause_cycles_cuts_a_loop_of_two() -> None:
    a, b = ValueError("a"), ValueError("b")
    a.__cause__, b.__cause__ = b, a
    assert cut_cause_cycles(a) is a
    assert a.__cause__ is b and b.__cause__ is None
