"""The review pages in real headless Chromium (Debian's `chromium`, driven by playwright):
sign in, reach the item from the keyboard, confirm it, and see the pipeline workflow that
waited on the review resume (a stand-in workflow on a real Temporal dev server). A
screenshot is kept under test-artifacts/ for the record."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import threading
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from envfactory.api import create_app
from envfactory.api.app import store_only
from envfactory.api.pipeline import pipeline_sinks
from envfactory.core.models import ReviewerRole, ReviewState
from envfactory.core.settings import Settings, TemporalSettings
from envfactory.store import ArtifactStore
from tests.packs.conftest import DictArtifacts, make_item
from workflows.client import connect
from workflows.devserver import DevServer, free_port

from .conftest import add_item
from .pipeline_standin import waiting_pipeline

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = [
    pytest.mark.temporal,
    pytest.mark.skipif(
        CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)"
    ),
]


class _Loop:
    """One event loop in a thread: Temporal objects stay on the loop that made them."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = 120) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@contextlib.contextmanager
def _serve(app: Any) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    while not srv.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(10)


def _confirm_in_browser(base: str, token: str, item_id: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(f"{base}/ui/queue")
        assert "/ui/login" in page.url  # strangers are sent to sign in
        page.fill("#token", token)
        page.keyboard.press("Enter")
        page.wait_for_url(f"{base}/ui/queue")
        page.keyboard.press("j")  # select the first item, focus its link
        page.keyboard.press("Enter")
        page.wait_for_url(f"{base}/ui/items/{item_id}")
        assert page.locator("text=After (suspicious state)").is_visible()
        page.keyboard.press("c")
        assert page.locator("#d-confirm").is_checked()
        page.focus("#comment")
        page.keyboard.type("rewrites the tests to pass")
        page.keyboard.press("Control+Enter")
        page.wait_for_selector("text=Decision recorded.")
        assert page.locator("#item-state").inner_text() == "confirmed"
        assert "not told" not in page.content()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "review-item-confirmed.png"), full_page=True)
        browser.close()


def test_a_reviewer_confirms_an_item_in_the_browser_and_the_pipeline_resumes(tmp_path, store):
    store.environments.add(
        make_item(DictArtifacts(), "env-b").spec.model_copy(update={"seed_id": "seed-b1"})
    )
    item = add_item(store, "env-b")
    token = store.reviewers.add("ana", ReviewerRole.REVIEWER)
    with DevServer(free_port(), tmp_path / "temporal.db") as srv:
        settings = Settings(home=tmp_path / "home", temporal=TemporalSettings(address=srv.address))
        app = create_app(
            settings,
            store=store,
            artifacts=ArtifactStore(tmp_path / "a"),
            on_decision=pipeline_sinks(settings, store).on_decision,  # through Temporal
            on_seed=store_only,
        )
        loop = _Loop()
        pipeline = waiting_pipeline(loop.run(connect(settings.temporal)), "seed-b1")
        handle = loop.run(pipeline.__aenter__())
        try:
            with _serve(app) as base:
                _confirm_in_browser(base, token, item.id)
            result = loop.run(asyncio.wait_for(handle.result(), 60))
        finally:
            loop.run(pipeline.__aexit__(None, None, None))
            loop.close()
    assert result == f"{item.id}:confirm:ana"
    assert store.reviews.get(item.id).state == ReviewState.CONFIRMED


def _attack_page(target: str, item_id: str, csrf: str) -> Any:
    """Another site on the same host (same *site* as the review server, so SameSite=Strict
    still sends the cookie): a page that posts a decision as soon as it loads."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    html = (
        f'<form method="post" action="{target}/ui/items/{item_id}/decide">'
        f'<input name="decision" value="confirm"><input name="csrf_token" value="{csrf}">'
        "</form><script>document.forms[0].submit()</script>"
    )
    return Starlette(routes=[Route("/", lambda _r: HTMLResponse(html))])


def test_a_same_site_page_on_another_port_cannot_decide_for_a_signed_in_reviewer(tmp_path, store):
    """Issue 15: SameSite=Strict does not stop 127.0.0.1:other-port; the Origin check does,
    even when the attacker has somehow obtained the session's CSRF token."""
    from playwright.sync_api import sync_playwright

    item = add_item(store, traj=False)
    token = store.reviewers.add("ana", ReviewerRole.REVIEWER)
    app = create_app(
        Settings(home=tmp_path / "home"),
        store=store,
        artifacts=ArtifactStore(tmp_path / "a"),
        on_decision=store_only,
        on_seed=store_only,
    )
    with _serve(app) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(f"{base}/ui/login")
        page.fill("#token", token)
        page.keyboard.press("Enter")
        page.wait_for_url(f"{base}/ui/queue")
        page.goto(f"{base}/ui/items/{item.id}")
        csrf = page.locator('#decide input[name="csrf_token"]').get_attribute("value")
        with _serve(_attack_page(base, item.id, csrf or "")) as evil:
            with page.expect_response(f"{base}/ui/items/{item.id}/decide") as answer:
                page.goto(evil)
            assert answer.value.status == 403
            assert "cross-origin request refused" in answer.value.text()
        browser.close()
    assert store.reviews.get(item.id).state == ReviewState.OPEN
