"""Take one screenshot per page of the app into docs/screenshots/.

Starts the app on a free local port, drives Debian's chromium with Playwright
(sync API), and stops the server it started.

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from playwright.sync_api import FilePayload, Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from app_server import CHROMIUM_ARGS, ROOT, chromium_path, running_app

DONE = '[data-testid="stApp"][data-test-script-state="notRunning"]'

#: (file name, path and query)
SHOTS: tuple[tuple[str, str], ...] = (
    ("step-view", "/?step=5&session=research_agent&layout=seed"),
    ("timeline", "/Timeline?step=7&session=research_agent&layout=seed"),
    ("compare-layouts", "/Compare_layouts?session=coding_agent_midnight&base=seed&head=date-in-l0"),
    ("registry", "/Registry?step=5&session=research_agent&layout=seed"),
    ("savings", "/Savings?session=research_agent&layout=seed"),
    ("learn", "/Learn"),
    ("recommend", "/Recommend?session=coding_agent_midnight"),
)


#: Widths every page is shot at: a wide desktop window and a narrow one.
WIDE, NARROW = 1500, 1000
FIXTURES = ROOT / "tests" / "sessions" / "importers" / "fixtures" / "claude_code"


def upload_transcript(page: Page, base: str) -> str:
    """Upload the Claude Code fixture and its subagent file; the URL the app then shows."""
    page.set_viewport_size({"width": WIDE, "height": 1000})
    page.goto(f"{base}/")
    combo = page.locator(".st-key-w_sel_session input")
    combo.wait_for()
    combo.click()
    page.get_by_role("option", name="Upload a file…").click()
    chooser = page.locator(".st-key-upload_session input[type=file]")
    chooser.wait_for(state="attached")
    files = [FIXTURES / "session.jsonl", FIXTURES / "subagents" / "agent-a1b2c3.jsonl"]
    payloads: list[FilePayload] = [
        {"name": f.name, "mimeType": "application/x-ndjson", "buffer": f.read_bytes()}
        for f in files
    ]
    chooser.set_input_files(files=payloads)
    page.get_by_text("Measured beside simulated").first.wait_for()
    page.wait_for_selector(DONE)
    return str(page.evaluate("() => window.location.search"))


def shoot(page: Page, url: str, out: Path, width: int = WIDE) -> None:
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
    parser.add_argument("--only", nargs="*", help="shot names to take (default: all)")
    args = parser.parse_args(argv)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    chromium = chromium_path()
    if chromium is None:
        raise SystemExit("Debian's chromium is not installed (make chromium)")
    with running_app() as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(30_000)
        query = upload_transcript(page, base)  # "?step=1&session=upload:<hash>&layout=seed"
        link = query.replace("step=1", "step=3")
        shots = [
            *SHOTS,
            ("imported-step-view", f"/{link}"),
            ("imported-timeline", f"/Timeline{link}"),
            ("imported-savings", f"/Savings{query.replace('step=1&', '')}"),
        ]
        for name, path in shots:
            if args.only and name not in args.only:
                continue
            for width, suffix in ((WIDE, ""), (NARROW, "-1000")):
                target = out_dir / f"{name}{suffix}.png"
                shoot(page, f"{base}{path}", target, width)
                print(
                    f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}"
                )
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
