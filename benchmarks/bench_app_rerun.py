"""Server-side rerun time of the step view on a 5,000-step generated session.

Measured, not asserted. The app runs headless in Streamlit's AppTest harness,
in this process: the session (``generate_session(5000, 1)``, JSON Lines) is
uploaded through the sidebar like a user would, the analysis runs once, then
the step is moved to 1, 2,500 and 5,000 with the slider, and with the Next
button from the step before. Each figure is the wall time of one rerun (the
whole script: sidebar, cached analysis lookup, step view), median and max over
repeated moves. AppTest's own bookkeeping is included, so these are upper
bounds of the script time a real server spends.

    .venv/bin/python benchmarks/bench_app_rerun.py [--steps 5000] [--repeat 7]
    .venv/bin/python benchmarks/bench_app_rerun.py --browser   # click-to-paint in chromium
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

import streamlit.runtime.scriptrunner_utils.script_run_context as script_run_context
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from assembler.sessions.generator import generate_session, write_session  # noqa: E402


def _quiet() -> None:
    for name in (script_run_context.__name__, "streamlit.runtime.caching.cache_data_api"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _indicator(at: AppTest) -> str:
    return str(at.subheader[0].value) if at.subheader else "(none)"


def _timed(at: AppTest) -> float:
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception or at.error:
        raise SystemExit(f"the app failed: {[e.value for e in (*at.exception, *at.error)]}")
    return elapsed * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--browser", action="store_true", help="click-to-paint in chromium on a real server"
    )
    args = parser.parse_args(argv)
    if args.browser:
        return browser(args.steps, args.seed, args.repeat)
    _quiet()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"generated-{args.steps}.jsonl"
        write_session(generate_session(args.steps, args.seed), path)
        raw = path.read_bytes()

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    _quiet()
    at.selectbox(key="w_sel_session").select("Upload a file…").run()
    at.file_uploader(key="upload_session").upload(path.name, raw, "application/x-ndjson")
    first = _timed(at)  # parse + analysis of every step, once
    total = args.steps
    assert _indicator(at) == f"Step 1 / {total}", _indicator(at)
    again = _timed(at)  # the same step, everything cached

    rows: list[tuple[str, list[float]]] = []
    for target in (1, total // 2, total):
        slider: list[float] = []
        button: list[float] = []
        away = target + 1 if target < total else target - 1
        for _ in range(args.repeat):
            at.slider[0].set_value(away)
            _timed(at)
            at.slider[0].set_value(target)
            slider.append(_timed(at))
            assert _indicator(at) == f"Step {target} / {total}", _indicator(at)
            if target > 1:
                at.slider[0].set_value(target - 1)
                _timed(at)
                at.button(key="next").click()
                button.append(_timed(at))
                assert _indicator(at) == f"Step {target} / {total}", _indicator(at)
        rows.append((f"step {target:,}: slider", slider))
        if button:
            rows.append((f"step {target:,}: Next from {target - 1:,}", button))

    print(
        f"Step view rerun, {total:,}-step session ({len(raw) / 1e6:.1f} MB JSONL), AppTest, {args.repeat} moves each"
    )
    print(
        f"first run with upload, parse and analysis: {first:,.0f} ms; rerun with everything cached: {again:.1f} ms"
    )
    print()
    print(f"| {'move':<30} | {'median ms':>9} | {'max ms':>7} |")
    print(f"|{'-' * 32}|{'-' * 10}:|{'-' * 8}:|")
    for name, values in rows:
        print(f"| {name:<30} | {statistics.median(values):>9.1f} | {max(values):>7.1f} |")
    return 0


# --- in a real browser ----------------------------------------------------------------


def browser(steps: int, seed: int, repeat: int) -> int:
    """Click-to-paint in Debian's chromium on a real server: a step switch and a timeline click.

    The clock starts just before the key press or the click and stops when the new
    step's indicator is on screen and the run has finished drawing.
    """
    from playwright.sync_api import FilePayload, Page, sync_playwright

    sys.path.insert(0, str(ROOT / "scripts"))
    from app_server import CHROMIUM_ARGS, chromium_path, running_app

    chromium = chromium_path()
    if chromium is None:
        raise SystemExit("Debian's chromium is not installed (make chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"generated_{steps}.jsonl"
        write_session(generate_session(steps, seed), path)
        raw = path.read_bytes()
    done = '[data-testid="stApp"][data-test-script-state="notRunning"]'

    def shown(page: Page) -> int:
        text = page.evaluate(
            "() => [...document.querySelectorAll('h2, h3')].map(e => e.textContent)"
            ".find(t => /^Step [0-9]+ \\//.test(t)) || ''"
        )
        return int(text.split()[1].replace(",", "")) if text else 0

    def wait_step(page: Page, n: int) -> None:
        page.wait_for_function(
            "n => [...document.querySelectorAll('h2, h3')].some(e => e.textContent.startsWith('Step ' + n + ' /'))",
            arg=f"{n:,}",
            timeout=120_000,
        )
        page.wait_for_selector(done, timeout=120_000)

    with running_app() as base, sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = b.new_page(viewport={"width": 1440, "height": 1000})
        page.set_default_timeout(120_000)
        page.goto(f"{base}/")
        page.wait_for_selector(done)
        page.locator(".st-key-w_sel_session input").click()
        page.get_by_role("option", name="Upload a file…").click()
        chooser = page.locator(".st-key-upload_session input[type=file]")
        chooser.wait_for(state="attached")
        payload: FilePayload = {
            "name": path.name,
            "mimeType": "application/x-ndjson",
            "buffer": raw,
        }
        start = time.perf_counter()
        chooser.set_input_files(files=[payload])
        wait_step(page, 1)
        first = (time.perf_counter() - start) * 1000
        page.wait_for_timeout(500)

        keys: list[float] = []
        for _ in range(repeat):
            n = shown(page)
            start = time.perf_counter()
            page.keyboard.press("ArrowRight")
            wait_step(page, n + 1)
            keys.append((time.perf_counter() - start) * 1000)
            page.wait_for_timeout(300)

        query = str(page.evaluate("() => window.location.search"))
        page.goto(f"{base}/Timeline{query}")
        page.wait_for_function(
            "() => [...document.querySelectorAll('h2, h3')].some(e => /^Step [0-9,]+ \\//.test(e.textContent))",
            timeout=120_000,
        )
        page.wait_for_selector(done)
        page.wait_for_timeout(1500)  # WebGL traces drawn
        page.screenshot(path=str(ROOT / "test-artifacts" / "bench-timeline.png"))
        clicks: list[float] = []
        plot = page.locator(".st-key-chart_cache .nsewdrag").first
        box = plot.bounding_box()
        if box is None:
            raise SystemExit("the timeline chart did not draw")
        for i in range(repeat):
            before = shown(page)
            x = box["x"] + box["width"] * (0.15 + 0.1 * i % 0.7)
            y = (
                box["y"] + box["height"] * 0.97
            )  # the foot of the stacked areas: a point of every step drawn
            start = time.perf_counter()
            page.mouse.click(x, y)
            try:
                page.wait_for_function(
                    "b => { const t = [...document.querySelectorAll('h2, h3')].map(e => e.textContent)"
                    ".find(t => /^Step [0-9,]+ \\//.test(t)) || ''; return t && !t.startsWith('Step ' + b + ' /'); }",
                    arg=f"{before:,}",
                    timeout=20_000,
                )
                page.wait_for_selector(done, timeout=120_000)
            except Exception:  # the click hit no point: measured as a miss, not a time
                continue
            clicks.append((time.perf_counter() - start) * 1000)
            page.wait_for_timeout(500)
        b.close()

    print(
        f"In Chromium, {steps:,}-step session ({len(raw) / 1e6:.1f} MB JSONL), a real server on 2 cores"
    )
    print(f"upload, parse, analysis and first paint: {first:,.0f} ms")
    print()
    print(f"| {'action':<32} | {'median ms':>9} | {'max ms':>7} | {'n':>2} |")
    print(f"|{'-' * 34}|{'-' * 10}:|{'-' * 8}:|{'-' * 3}:|")
    for name, values in (("→ key, step view", keys), ("click on the timeline chart", clicks)):
        if values:
            print(
                f"| {name:<32} | {statistics.median(values):>9.0f} | {max(values):>7.0f} | {len(values):>2} |"
            )
        else:
            print(f"| {name:<32} | {'—':>9} | {'—':>7} |  0 |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
