"""Markdown images in hostile inputs, in Debian's chromium: shown as text, never fetched."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.hostile.build import HOSTILE_URL, IMAGE, session_json

pytestmark = pytest.mark.browser

DONE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
HOST = HOSTILE_URL.split("/")[2]


def _watch(page: Page) -> list[str]:
    """Every request the page makes to the host the hostile text names, in order.

    The page's own requests (Streamlit's icon font from its content host, blob URLs)
    are the app's, not the input's: what must never happen is a fetch of a URL the
    uploaded text chose.
    """
    seen: list[str] = []
    page.on(
        "request",
        lambda request: (
            seen.append(request.url) if urlsplit(request.url).hostname == HOST else None
        ),
    )
    return seen


def _upload(page: Page, widget: str, uploader: str, name: str, raw: bytes) -> None:
    combo = page.locator(f".st-key-{widget} input")
    combo.wait_for(timeout=30_000)
    combo.click()
    page.get_by_role("option", name="Upload a file…").click()
    chooser = page.locator(f".st-key-{uploader} input[type=file]")
    chooser.wait_for(state="attached", timeout=30_000)
    chooser.set_input_files(files=[{"name": name, "mimeType": "text/plain", "buffer": raw}])


def _shown_literally(page: Page, seen: list[str]) -> None:
    error = page.locator('[data-testid="stAlertContentError"]').first
    expect(error).to_contain_text(IMAGE)
    page.wait_for_selector(DONE, timeout=30_000)
    expect(page.locator(f'img[src*="{HOST}"]')).to_have_count(0)
    expect(page.locator(f'a[href*="{HOST}"]')).to_have_count(0)
    assert not seen, seen


CASES = {
    "unknown-key": session_json().replace('"id"', f'"{IMAGE}": 1, "id"'),
    "model-name": session_json(model=IMAGE),
    "enum-value": session_json(memory={"state": IMAGE}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_session_upload_shows_markdown_as_text(case: str, server: str, tab: Any) -> None:
    seen = _watch(tab)
    tab.goto(server)
    tab.wait_for_selector(DONE, timeout=30_000)
    _upload(tab, "w_sel_session", "upload_session", "s.json", CASES[case].encode())
    _shown_literally(tab, seen)


def test_layout_ttl_shows_markdown_as_text(server: str, tab: Any) -> None:
    seen = _watch(tab)
    tab.goto(server)
    tab.wait_for_selector(DONE, timeout=30_000)
    _upload(tab, "w_sel_layout", "upload_layout", "l.yaml", f"ttl: '{IMAGE}'\n".encode())
    _shown_literally(tab, seen)


def test_step_in_the_url_shows_markdown_as_text(server: str, tab: Any) -> None:
    seen = _watch(tab)
    tab.goto(f"{server}/?step={quote(IMAGE)}")
    toast = tab.locator('[data-testid="stToast"]').first
    expect(toast).to_contain_text(IMAGE)
    expect(tab.locator(f'img[src*="{HOST}"]')).to_have_count(0)
    assert not seen, seen
