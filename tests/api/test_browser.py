"""The review pages in real headless Chromium (Debian's `chromium`, driven by playwright):
sign in, find the item from the keyboard, confirm it, see the decision reach the pipeline
seam. A screenshot is kept under test-artifacts/ for the record."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from envfactory.core.models import ReviewState

from .conftest import Api, add_item

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(api: Api) -> Iterator[str]:
    port = _free_port()
    srv = uvicorn.Server(
        uvicorn.Config(api.client.app, host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(100):
        if srv.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)


def test_a_reviewer_signs_in_and_confirms_an_item_from_the_keyboard(api: Api, server: str):
    from playwright.sync_api import sync_playwright

    item = add_item(api.store)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(f"{server}/ui/queue")
        assert "/ui/login" in page.url  # strangers are sent to sign in
        page.fill("#token", api.tokens["ana"])
        page.keyboard.press("Enter")
        page.wait_for_url(f"{server}/ui/queue")
        page.keyboard.press("j")  # select the first item, focus its link
        page.keyboard.press("Enter")
        page.wait_for_url(f"{server}/ui/items/{item.id}")
        assert page.locator("text=After (suspicious state)").is_visible()
        page.keyboard.press("c")
        assert page.locator("#d-confirm").is_checked()
        page.focus("#comment")
        page.keyboard.type("rewrites the tests to pass")
        page.keyboard.press("Control+Enter")
        page.wait_for_selector("text=Decision recorded.")
        assert page.locator("#item-state").inner_text() == "confirmed"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "review-item-confirmed.png"), full_page=True)
        browser.close()
    assert api.store.reviews.get(item.id).state == ReviewState.CONFIRMED
    assert [(i.id, i.state, i.comment) for i in api.sink.told] == [
        (item.id, ReviewState.CONFIRMED, "rewrites the tests to pass")]  # fmt: skip
