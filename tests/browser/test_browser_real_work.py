"""The app in Debian's chromium for real work: raw transcripts uploaded and kept across a
reload, arrow keys that keep every press, a 1,000-px window where every figure is whole."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import ARTIFACTS, charts_drawn_in_their_margins, keep_screenshot
from playwright.sync_api import Page, expect

from tests.app.app_helpers import ROOT

pytestmark = pytest.mark.browser

DONE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
FIX = ROOT / "tests" / "sessions" / "importers" / "fixtures" / "claude_code"


def indicator(page: Page, text: str) -> None:
    expect(page.get_by_text(text, exact=True)).to_be_visible(timeout=30_000)


def settle(page: Page) -> None:
    page.wait_for_selector(DONE, timeout=30_000)


def test_ten_presses_150_ms_apart_move_ten_steps(server: str, tab: Any) -> None:
    tab.goto(f"{server}/?step=1&session=research_agent&layout=seed")
    indicator(tab, "Step 1 / 21")
    settle(tab)
    # the key listener mounts with the page: presses before it exists are not seen
    tab.wait_for_function("() => window.__caiStepKeys && window.__caiStepKeys.active")
    for _ in range(10):
        tab.keyboard.press("ArrowRight")
        tab.wait_for_timeout(150)
    indicator(tab, "Step 11 / 21")
    settle(tab)
    tab.wait_for_timeout(800)  # no late move arrives
    indicator(tab, "Step 11 / 21")
    for _ in range(3):
        tab.keyboard.press("ArrowLeft")
        tab.wait_for_timeout(150)
    indicator(tab, "Step 8 / 21")


def test_arrow_works_right_after_a_sidebar_choice(server: str, tab: Any) -> None:
    tab.goto(f"{server}/?step=4&session=research_agent&layout=seed")
    indicator(tab, "Step 4 / 21")
    settle(tab)
    combo = tab.locator(".st-key-w_sel_layout input")
    combo.click()
    tab.get_by_role("option", name="date-in-l0").click()
    expect(tab.get_by_text("date-in-l0", exact=False).first).to_be_visible()
    settle(tab)
    tab.keyboard.press("ArrowRight")  # focus is still in the closed select
    indicator(tab, "Step 5 / 21")


def test_a_raw_transcript_upload_is_imported_and_survives_a_reload(server: str, tab: Any) -> None:
    tab.goto(f"{server}/")
    indicator(tab, "Step 1 / 21")
    settle(tab)
    combo = tab.locator(".st-key-w_sel_session input")
    combo.click()
    tab.get_by_role("option", name="Upload a file…").click()
    chooser = tab.locator(".st-key-upload_session input[type=file]")
    chooser.wait_for(state="attached")
    files = [FIX / "session.jsonl", FIX / "subagents" / "agent-a1b2c3.jsonl"]
    chooser.set_input_files(
        files=[
            {"name": f.name, "mimeType": "application/x-ndjson", "buffer": f.read_bytes()}
            for f in files
        ]
    )
    indicator(tab, "Step 1 / 12")
    expect(
        tab.get_by_text(
            "Claude Code transcript, 12 requests, 1 subagent, 1 compaction", exact=False
        ).first  # the sidebar's line (a toast may say it too)
    ).to_be_visible()
    expect(tab.get_by_text("Measured beside simulated")).to_be_visible()
    settle(tab)
    tab.keyboard.press("ArrowRight")  # right after the upload, without clicking the page
    indicator(tab, "Step 2 / 12")
    settle(tab)
    assert "session=upload%3A" in tab.url or "session=upload:" in tab.url
    tab.reload()
    indicator(tab, "Step 2 / 12")
    expect(
        tab.get_by_text("Claude Code transcript, 12 requests", exact=False).first
    ).to_be_visible()
    tab.get_by_role("link", name="Timeline").click()
    expect(tab.get_by_text("Billed, whole session")).to_be_visible()
    expect(
        tab.get_by_text("Claude Code transcript, 12 requests", exact=False).first
    ).to_be_visible()
    charts_drawn_in_their_margins(tab, 4)  # the measured overlay's legend among them


def test_a_sample_that_opens_with_comments_uploads_and_shows_its_first_step(
    server: str, tab: Any
) -> None:
    sample = ROOT / "sample_sessions" / "coding_agent_midnight.yaml"
    assert sample.read_bytes().index(b"format:") > 400  # past the old sniffing window
    tab.goto(f"{server}/?session=research_agent")
    indicator(tab, "Step 1 / 21")
    settle(tab)
    tab.locator(".st-key-w_sel_session input").click()
    tab.get_by_role("option", name="Upload a file…").click()
    chooser = tab.locator(".st-key-upload_session input[type=file]")
    chooser.wait_for(state="attached")
    chooser.set_input_files(
        files=[
            {"name": sample.name, "mimeType": "application/x-yaml", "buffer": sample.read_bytes()}
        ]
    )
    indicator(tab, "Step 1 / 28")
    settle(tab)
    expect(tab.get_by_text("session file", exact=False).first).to_be_visible()
    expect(tab.get_by_text("not a format the inspector reads", exact=False)).to_have_count(0)
    assert "session=upload%3A" in tab.url or "session=upload:" in tab.url
    keep_screenshot(tab, "upload-commented-sample.png")


def test_everything_important_is_whole_at_1000_px(server: str, tab: Any) -> None:
    tab.set_viewport_size({"width": 1000, "height": 800})
    tab.goto(f"{server}/?step=5&session=research_agent&layout=seed")
    indicator(tab, "Step 5 / 21")
    settle(tab)
    cut = tab.evaluate(
        """() => [...document.querySelectorAll(
            '[data-testid="stMetricValue"] div, [data-testid="stMetricLabel"] p, .st-key-prev button p, .st-key-next button p')]
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"""
    )
    assert cut == []
    # every column of the block stack is on screen, inside the page
    for header in ("cache", "change", "bp"):
        cell = tab.locator(".cai-row.cai-head span", has_text=header).first
        box = cell.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1000
    ARTIFACTS.mkdir(exist_ok=True)
    keep_screenshot(tab, "step-view-1000.png", full_page=True)
