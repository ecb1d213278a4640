"""One Streamlit server per module and Debian's chromium, driven by Playwright's sync API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scripts.app_server import CHROMIUM_ARGS, ROOT, chromium_path, running_app

ARTIFACTS = ROOT / "test-artifacts"


def installed_chromium() -> str:
    path = chromium_path()
    if path is None:
        pytest.skip("Debian's chromium is not installed (make chromium)")
    return path


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A freshly started app server on a free port; its base URL."""
    ARTIFACTS.mkdir(exist_ok=True)
    with (ARTIFACTS / "server.log").open("wb") as log, running_app(log) as base:
        yield base


@pytest.fixture(scope="module")
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
