"""The pure parts of the API's bounds (issue 46, item 6): capped error bodies and what the
per-token limit counts. The real process is exercised in `test_load.py`."""

from __future__ import annotations

from envfactory.api.error_bodies import MAX_DETAIL_CHARS, capped, validation_body
from envfactory.api.token_limit import PerTokenLimit


async def _app(scope: object, receive: object, send: object) -> None:
    return None


def test_a_validation_body_lists_the_first_20_errors_and_counts_them() -> None:
    errors = [
        {"type": "int_type", "loc": ("body", "items", i), "msg": "x", "input": "y" * 10_000}
        for i in range(500)
    ]
    body = validation_body(errors)
    assert body["count"] == 500 and len(body["detail"]) == 20
    assert body["note"] == "the first 20 of 500 problems are listed"
    assert len(body["detail"][0]["input"]) < 300  # a long input is not sent back


def test_small_inputs_are_sent_back_as_they_came() -> None:
    (error,) = validation_body([{"type": "missing", "loc": ("body",), "input": {"a": 1}}])["detail"]
    assert error["input"] == {"a": 1}


def test_a_long_message_is_cut_saying_how_much() -> None:
    text = capped("z" * (MAX_DETAIL_CHARS + 5000))
    assert text.endswith("… (5,000 more characters)") and len(text) < MAX_DETAIL_CHARS + 40
    assert capped("short") == "short"


def test_the_limit_counts_a_bearer_token_or_a_page_session_and_never_health() -> None:
    limit = PerTokenLimit(_app, max_in_flight=2, session_cookie="envfactory_session")

    def key(path: str, *headers: tuple[bytes, bytes]) -> str | None:
        return limit._key({"type": "http", "path": path, "headers": list(headers)})

    bearer = key("/api/seeds", (b"authorization", b"Bearer efr_abc"))
    cookie = key("/ui/queue", (b"cookie", b"envfactory_session=s1; other=2"))
    assert bearer and cookie and bearer != cookie and "efr_abc" not in bearer
    assert key("/api/health", (b"authorization", b"Bearer efr_abc")) is None
    assert key("/ui/login") is None and key("/api/me", (b"authorization", b"Basic x")) is None
