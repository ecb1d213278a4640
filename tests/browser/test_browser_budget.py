"""Compare and Recommend on a pathological upload, in Debian's chromium: the work stops
at the app's time budget with one line, and stops as soon as its browser session ends.

The upload is a valid generated session whose comparison alone takes about 8 s on this
two-core machine (measured: 7.8 s quiet, 2.6 s at 3,000 steps). The budget test's server
has a budget of one second (``INSPECTOR_ANALYSIS_SECONDS``), far below the work on any
machine CI may run on; the session-end test's server keeps the default budget, so that
only the browser session's end can stop the work early. When the work stops, and why,
is read from the server's own log line.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ARTIFACTS
from playwright.sync_api import expect

from assembler.sessions.generator import generate_session, write_session
from scripts.app_server import running_app
from tests.browser.test_browser import upload_session

pytestmark = pytest.mark.browser

BUDGET = 1.0
STEPS = 10_000  # about 17 MB, under the upload limit
STOPPED = re.compile(
    r"(the [\w ]+) stopped after ([\d.]+) s: (the time budget|its browser session ended)"
)


def _server(name: str, env: dict[str, str]) -> Iterator[tuple[str, Path]]:
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / f"server-{name}.log"
    with log_path.open("wb") as log, running_app(log, env=env) as base:
        yield base, log_path


@pytest.fixture(scope="module")
def budget_server() -> Iterator[tuple[str, Path]]:
    yield from _server("budget", {"INSPECTOR_ANALYSIS_SECONDS": str(BUDGET)})


@pytest.fixture(scope="module")
def unhurried_server(logged_server: tuple[str, Path]) -> tuple[str, Path]:
    return logged_server  # the shared server keeps the default budget (conftest.DEFAULTS)


@pytest.fixture(scope="module")
def pathological(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("budget") / "long.jsonl"
    write_session(generate_session(STEPS, 0), path)
    return path


def _stops(log: Path, seen: int, timeout: float) -> list[tuple[str, float, str]]:
    """The stop lines the server logged after the first ``seen``, waiting for one."""
    deadline = time.monotonic() + timeout
    while True:
        found = STOPPED.findall(log.read_text("utf-8", errors="replace"))[seen:]
        if found or time.monotonic() > deadline:
            return [(what, float(s), why) for what, s, why in found]
        time.sleep(0.25)


def _count(log: Path) -> int:
    return len(STOPPED.findall(log.read_text("utf-8", errors="replace")))


@pytest.mark.parametrize(
    ("page", "working"),
    [("Compare_layouts", "Analysing both layouts…"), ("Recommend", "Perturbing every component…")],
)
def test_the_work_stops_at_the_budget_with_one_line(
    budget_server: tuple[str, Path], tab: Any, pathological: Path, page: str, working: str
) -> None:
    base, log = budget_server
    seen = _count(log)
    tab.goto(f"{base}/{page}")
    upload_session(tab, "long.jsonl", pathological)
    message = tab.get_by_text(re.compile(rf"stopped after {BUDGET:g} s, the app's limit"))
    # The working line lives for the one-second budget only: a poll may fall after it, so
    # the page shows either the work under way or its stop, never nothing.
    expect(tab.get_by_text(working).or_(message).first).to_be_visible(timeout=60_000)
    expect(message.first).to_be_visible(timeout=(BUDGET + 30) * 1000)
    assert "python -m assembler" in message.first.inner_text()
    stops = _stops(log, seen, timeout=5)
    assert stops and stops[0][2] == "the time budget", stops
    assert stops[0][1] < BUDGET + 2.0, stops  # stopped at its budget, not minutes later


def test_the_work_stops_when_the_browser_session_ends(
    unhurried_server: tuple[str, Path], chromium: Any, pathological: Path
) -> None:
    base, log = unhurried_server
    seen = _count(log)
    context = chromium.new_context(viewport={"width": 1440, "height": 1000})
    tab = context.new_page()
    tab.goto(f"{base}/Compare_layouts")
    upload_session(tab, "long.jsonl", pathological)
    expect(tab.get_by_text("Analysing both layouts…").first).to_be_visible(timeout=60_000)
    context.close()  # the browser session ends with its tab
    stops = _stops(log, seen, timeout=BUDGET + 10)
    assert stops and stops[0][2] == "its browser session ended", stops
    # long before the work would have ended by itself (about 8 s here) or at its budget
    assert stops[0][1] < 5.0, stops
