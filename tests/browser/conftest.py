"""One Streamlit server and one Debian chromium per test process, driven by Playwright's sync
API. Starting either costs seconds of CPU on a 2-core machine, so every module that needs
the app with its default settings shares them; a test that needs other settings (or a
server no request has reached yet) starts its own."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.app_server import CHROMIUM_ARGS, ROOT, chromium_path, running_app
from ui.state.work_budget import DEFAULT_SECONDS

# The shared server's settings are the defaults whatever the caller's environment says.
DEFAULTS = {"INSPECTOR_ANALYSIS_SECONDS": str(DEFAULT_SECONDS)}

ARTIFACTS = ROOT / "test-artifacts"


def installed_chromium() -> str:
    path = chromium_path()
    if path is None:
        pytest.skip("Debian's chromium is not installed (make chromium)")
    return path


def server_log(name: str) -> Path:
    """A log file of its own for each server, per xdist worker (they run side by side)."""
    ARTIFACTS.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return ARTIFACTS / (f"{name}-{worker}.log" if worker else f"{name}.log")


@pytest.fixture(scope="session")
def logged_server() -> Iterator[tuple[str, Path]]:
    """The shared app server with its default settings: its base URL and its log."""
    path = server_log("server")
    with path.open("wb") as log, running_app(log, env=DEFAULTS) as base:
        yield base, path


@pytest.fixture(scope="session")
def server(logged_server: tuple[str, Path]) -> str:
    """The shared app server's base URL."""
    return logged_server[0]


@pytest.fixture()
def fresh_server() -> Iterator[str]:
    """A server started for one test: nothing has reached it yet."""
    with server_log("server-fresh").open("wb") as log, running_app(log, env=DEFAULTS) as base:
        yield base


@pytest.fixture(scope="session")
def chromium() -> Iterator[object]:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=20_000)  # a loaded 2-core machine needs more than the 5 s default

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=installed_chromium(), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture()
def tab(chromium: object) -> Iterator[object]:
    """A new browser context and page at a desktop size."""
    context = chromium.new_context(viewport={"width": 1440, "height": 1000})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


#: A screenshot is kept for people to look at, not timed: a full-page one of a page of
#: charts made Chromium redraw them at the page's height past 20 s on a loaded machine.
SCREENSHOT_MS = 90_000


def keep_screenshot(page: Any, name: str, *, full_page: bool = False) -> Path:
    """Save the page as ``test-artifacts/NAME``; its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / name
    page.screenshot(path=str(out), full_page=full_page, timeout=SCREENSHOT_MS)
    return out


#: Each drawn chart: its key, the margins the figure asked for, the margins plotly drew it
#: with. Plotly grows a margin its tick labels, legend or colour bar do not fit in, and then
#: draws the whole chart a second time.
MARGINS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => {
  const key = [...gd.closest('[class*="st-key-"]').classList].find(c => c.startsWith('st-key-'));
  const asked = gd.layout.margin || {}, drawn = gd._fullLayout._size;
  return [key, ['l', 'r', 't', 'b'].map(s => [asked[s], drawn[s]])];
})"""


def charts_drawn_in_their_margins(page: Any, count: int) -> None:
    """Every one of ``count`` charts drew in the margins it asked for (within plotly's own
    1 px tolerance), so none was drawn twice."""
    page.wait_for_function(
        "n => { const gds = document.querySelectorAll('.js-plotly-plot');"
        " return gds.length === n && [...gds].every(gd => gd._fullLayout?._size); }",
        arg=count,
    )
    charts = page.evaluate(MARGINS_JS)
    assert len(charts) == count, charts
    grown = [(key, sides) for key, sides in charts if any(abs(a - d) > 1 for a, d in sides)]
    assert not grown, grown
