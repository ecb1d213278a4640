"""One Streamlit server per module and Debian's chromium, driven by Playwright's sync API."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def chromium_path() -> str:
    path = shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )
    if path is None:
        pytest.skip("Debian's chromium is not installed (make chromium)")
    return path


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A freshly started app server on a free port; its base URL."""
    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.headless=true",
                f"--server.port={port}",
                "--server.address=127.0.0.1",
                "--browser.gatherUsageStats=false",
                "--server.fileWatcherType=none",
            ],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen(f"{base}/_stcore/health", timeout=1) as r:
                        if r.read() == b"ok":
                            break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the app server did not start; see {log}")
                time.sleep(0.1)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=20_000)  # a loaded 2-core machine needs more than the 5 s default

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
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
