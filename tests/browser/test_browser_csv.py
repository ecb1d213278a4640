"""The Savings page's CSV, downloaded in Debian's chromium: a label that would start a
formula arrives as text (a leading ``'``), the numbers as numbers."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_browser import settle, upload_session
from tests.hostile.build import T, header

pytestmark = pytest.mark.browser


def _session() -> bytes:
    doc = {
        **header(id="formulas"),
        "events": [
            {"type": "enter", "function": "main", "at": T},
            {"type": "llm", "input": "q", "output": "a", "at": T, "label": "=HYPERLINK(1)"},
            {"type": "llm", "input": "q", "output": "a", "at": T, "label": "@SUM(A1)"},
            {"type": "exit", "function": "main", "output": "d", "at": T},
        ],
    }
    return json.dumps(doc).encode()


def test_the_savings_csv_keeps_formulas_as_text(server: str, tab: Any) -> None:
    tab.goto(f"{server}/Savings")
    upload_session(tab, "f.json", _session())
    # The page had a CSV button before the upload (the sample session's), and the upload
    # takes two runs of the page; each run registers the button's on-click data under a new
    # id and drops the last run's, so a click on the old button asks for a dropped id and
    # no download comes (CI saw this under load). Click once the upload's page has finished.
    tab.wait_for_url(re.compile(r"session=upload"), timeout=60_000)
    settle(tab)
    button = tab.get_by_role("button", name="Per-step table (CSV)")
    expect(button).to_be_visible()
    with tab.expect_download() as download:
        button.click()
    text = Path(download.value.path()).read_text("utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["label"] for r in rows] == ["'=HYPERLINK(1)", "'@SUM(A1)"]
    assert int(rows[0]["total"]) > 0
