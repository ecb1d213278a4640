"""The Savings page in Debian's chromium for a session whose bill and simulation part: the
bill comes first, the simulation is beside it with its difference, and the link to the first step
that reads differently opens that step in the step view. The page is kept as a screenshot."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import keep_screenshot
from playwright.sync_api import expect

from tests.app.app_helpers import ROOT
from tests.browser.test_browser import indicator, settle, upload_session

pytestmark = pytest.mark.browser


def _billed_miss() -> bytes:
    """The bundled imported session with step 6 billed as a miss (the simulation reads it)."""
    text = (ROOT / "sample_sessions" / "imported_claude_code.yaml").read_text("utf-8")
    billed = "    cache_read: 12188\n    cache_write: 33\n"
    assert text.count(billed) == 1
    return text.replace(billed, "    cache_read: 0\n    cache_write: 12221\n").encode()


def test_the_savings_page_links_the_first_step_that_reads_differently(
    server: str, tab: Any
) -> None:
    tab.goto(f"{server}/Savings")
    upload_session(tab, "billed-miss.yaml", _billed_miss())
    warning = tab.get_by_text("The simulation is 16.3% below the bill.", exact=False)
    expect(warning).to_be_visible(timeout=60_000)
    expect(tab.get_by_text("-16.3% from the bill")).to_be_visible()
    expect(
        tab.get_by_text("at step 6: simulated full hit, measured miss", exact=False)
    ).to_be_visible()
    settle(tab)
    tab.wait_for_timeout(500)  # metrics and tables paint after the run ends
    keep_screenshot(tab, "savings-bill-first.png", full_page=True)
    tab.get_by_role("link", name="Open step 6 in the step view").click()
    indicator(tab, "Step 6 / 12")
    expect(tab.get_by_text("simulated full hit, measured miss", exact=False).first).to_be_visible()
