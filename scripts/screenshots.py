"""Take one screenshot per page of the app into docs/screenshots/.

Starts the app on a free local port, drives Debian's chromium with Playwright
(sync API), and stops the server it started.

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
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
DONE = '[data-testid="stApp"][data-test-script-state="notRunning"]'

#: (file name, path and query)
SHOTS: tuple[tuple[str, str], ...] = (
    ("step-view", "/?step=5&session=research_agent&layout=seed"),
    ("timeline", "/Timeline?step=7&session=research_agent&layout=seed"),
    ("compare-layouts", "/Compare_layouts?session=coding_agent_midnight&base=seed&head=date-in-l0"),
    ("registry", "/Registry?step=5&session=research_agent&layout=seed"),
    ("savings", "/Savings?session=research_agent&layout=seed"),
    ("learn", "/Learn"),
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int) -> subprocess.Popen[bytes]:
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
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
                if r.read() == b"ok":
                    return proc
        except OSError:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit("the app server did not start")


def shoot(page: Page, url: str, out: Path, width: int = 1440) -> None:
    page.set_viewport_size({"width": width, "height": 1000})
    page.goto(url)
    page.wait_for_selector(
        '[data-testid="stMainBlockContainer"] h1, [data-testid="stMainBlockContainer"] h3'
    )
    page.wait_for_selector(DONE)
    page.wait_for_timeout(1200)  # charts and lazily loaded widgets settle
    # The page scrolls inside Streamlit's main container: grow the viewport to its content.
    height = page.evaluate(
        '() => Math.max(...[...document.querySelectorAll(\'[data-testid="stMain"], '
        '[data-testid="stMainBlockContainer"]\')].map(e => e.scrollHeight), 900)'
    )
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 4000)})
    page.wait_for_timeout(600)
    page.screenshot(path=str(out), full_page=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="screenshots of every page")
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    args = parser.parse_args(argv)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    port = free_port()
    server = start_server(port)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.set_default_timeout(30_000)
            for name, path in SHOTS:
                target = out_dir / f"{name}.png"
                shoot(page, f"http://127.0.0.1:{port}{path}", target)
                print(
                    f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}"
                )
            browser.close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
