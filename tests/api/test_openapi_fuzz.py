"""Schemathesis against the served OpenAPI spec: no generated request gets a 500.

Runs as a signed-in reviewer (so requests reach the handlers, not just the 401) on a store
with a queue in it; every status below 500 is an answer, a 500 is a bug. Operations are
driven one by one through Hypothesis (the schemathesis pytest plugin does not load under
this pytest version).
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings

from .conftest import Api, add_item

EXAMPLES = 25


def test_no_generated_request_gets_a_500(api: Api):
    add_item(api.store)
    schema = schemathesis.openapi.from_asgi("/openapi.json", api.client.app)
    auth = {"Authorization": f"Bearer {api.tokens['ana']}"}
    failures: list[str] = []
    operations = [r.ok() for r in schema.get_all_operations()]
    assert len(operations) >= 14

    for op in operations:

        @given(case=op.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def run(case) -> None:  # type: ignore[no-untyped-def]
            response = case.call(headers=auth)
            if response.status_code >= 500:
                failures.append(
                    f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:300]}"
                )

        run()
    assert failures == []
