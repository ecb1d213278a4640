"""The step view's speed on generated sessions of several sizes, measured, never asserted.

Without ``--browser``: server-side rerun time in Streamlit's AppTest harness, in
this process. Each session (``generate_session(steps, 1)``, JSON Lines) is
uploaded through the sidebar like a user would, the analysis runs once, then
the step is moved to 1, the middle and the last step with the slider, and with
the Next button from the step before. Each figure is the wall time of one rerun
(the whole script: sidebar, cached analysis lookup, step view), AppTest's own
bookkeeping included, so an upper bound of the script time a real server spends.

With ``--browser``: what a user sees, in Debian's chromium on a freshly started
server per session. The file is uploaded through the sidebar's uploader; then
→ is pressed at step 1 and the Next button clicked, the page's link is opened in a new browser session at a
late step and → pressed there, and the Timeline chart is clicked. It reports
click-to-paint (best, median, max), the time from the upload to the painted
step 1 (upload, parse, analysis, drawing) and from opening the link to its
painted step (the analysis cached), and the server's resident memory before
the upload and after the analysis was built (``/proc``: VmRSS, VmHWM).

    .venv/bin/python benchmarks/bench_app_rerun.py [--steps 5000 20000] [--repeat 7]
    .venv/bin/python benchmarks/bench_app_rerun.py --browser --steps 5000 20000
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit.runtime.scriptrunner_utils.script_run_context as script_run_context
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from assembler.sessions.generator import generate_session, write_session  # noqa: E402


def _quiet() -> None:
    for name in (script_run_context.__name__, "streamlit.runtime.caching.cache_data_api"):
        logging.getLogger(name).setLevel(logging.ERROR)


def session_file(steps: int, seed: int, folder: Path) -> Path:
    """The generated session, written once into ``folder`` and reused by later runs."""
    path = folder / f"generated-{steps}-{seed}.jsonl"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".part")
        write_session(generate_session(steps, seed), partial)
        partial.rename(path)
    return path


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
    parser.add_argument("--steps", type=int, nargs="+", default=[5000])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path("/tmp/bench-app"),
        help="where generated sessions are kept between runs",
    )
    parser.add_argument(
        "--browser", action="store_true", help="click-to-paint in chromium on a real server"
    )
    args = parser.parse_args(argv)
    files = [session_file(n, args.seed, args.dir) for n in args.steps]
    if args.browser:
        return browser(list(zip(args.steps, files, strict=True)), args.repeat)
    for path in files:
        rerun(path, args.repeat)
    return 0


def rerun(path: Path, repeat: int) -> None:
    """Server-side rerun times of the step view in AppTest for one session file."""
    _quiet()
    raw = path.read_bytes()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    _quiet()
    at.selectbox(key="w_sel_session").select("Upload a file…").run()
    at.file_uploader(key="upload_session").upload(path.name, raw, "application/x-ndjson")
    first = _timed(at)  # parse + analysis of every step, once
    total = int(_indicator(at).split("/")[1])
    again = _timed(at)  # the same step, everything cached

    rows: list[tuple[str, list[float]]] = []
    for target in (1, total // 2, total):
        slider: list[float] = []
        button: list[float] = []
        away = target + 1 if target < total else target - 1
        for _ in range(repeat):
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
        f"Step view rerun, {total:,}-step session ({len(raw) / 1e6:.1f} MB JSONL), AppTest, {repeat} moves each"
    )
    print(
        f"first run with upload, parse and analysis: {first:,.0f} ms; rerun with everything cached: {again:.1f} ms"
    )
    print()
    print(f"| {'move':<30} | {'median ms':>9} | {'max ms':>7} |")
    print(f"|{'-' * 32}|{'-' * 10}:|{'-' * 8}:|")
    for name, values in rows:
        print(f"| {name:<30} | {statistics.median(values):>9.1f} | {max(values):>7.1f} |")
    print()


# --- in a real browser ----------------------------------------------------------------

DONE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
#: The step indicator's text ("Step 1 / 5000"), as the page shows it.
SHOWN_JS = (
    "() => [...document.querySelectorAll('h2, h3')].map(e => e.textContent)"
    ".find(t => /^Step [0-9,]+ \\//.test(t)) || ''"
)


@dataclass
class BrowserRun:
    """What one session size measured in the browser, on its own freshly started server."""

    steps: int
    file_bytes: int
    idle_rss: int = 0
    rss: int = 0
    peak_rss: int = 0
    open_upload: float = 0.0
    open_link: float = 0.0
    moves: dict[str, list[float]] = field(default_factory=dict)


def _server_pid() -> int:
    """The Streamlit server this process started (a child whose command line runs streamlit)."""
    me = str(os.getpid())
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and b"streamlit\0run" in cmdline:
            return int(proc.name)
    raise SystemExit("the app server's process was not found")


def _memory(pid: int) -> tuple[int, int]:
    """(resident, peak resident) bytes of a process."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]


def browser(files: list[tuple[int, Path]], repeat: int) -> int:
    """Click-to-paint in Debian's chromium on a real server: step switches and timeline clicks.

    Each session gets a freshly started server, so its memory is that session's.
    The clock starts just before the key press or the click and stops when the
    new step's indicator is on screen and the run has finished drawing.
    """
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "scripts"))
    from app_server import CHROMIUM_ARGS, chromium_path

    chromium = chromium_path()
    if chromium is None:
        raise SystemExit("Debian's chromium is not installed (make chromium)")
    runs: list[BrowserRun] = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for steps, path in files:
            runs.append(_browser_session(b, steps, path, repeat))
        b.close()
    _browser_report(runs, repeat)
    return 0


def _shown(page: Any) -> int:
    text = str(page.evaluate(SHOWN_JS))
    return int(text.split()[1].replace(",", "")) if text else 0


def _wait_step(page: Any, n: int) -> None:
    page.wait_for_function(
        "n => [...document.querySelectorAll('h2, h3')].some(e => e.textContent.startsWith('Step ' + n + ' /'))",
        arg=str(n),
        timeout=300_000,
    )
    page.wait_for_selector(DONE, timeout=300_000)


def _keys(page: Any, repeat: int) -> list[float]:
    """→ pressed ``repeat`` times, each timed to its painted step."""
    page.wait_for_function("() => window.__caiStepKeys && window.__caiStepKeys.active")
    times: list[float] = []
    for _ in range(repeat):
        n = _shown(page)
        start = time.perf_counter()
        page.keyboard.press("ArrowRight")
        _wait_step(page, n + 1)
        times.append((time.perf_counter() - start) * 1000)
        page.wait_for_timeout(300)
    return times


def _next_clicks(page: Any, repeat: int) -> list[float]:
    """The Next button clicked ``repeat`` times, each timed to its painted step."""
    button = page.locator(".st-key-next button").first
    times: list[float] = []
    for _ in range(repeat):
        n = _shown(page)
        start = time.perf_counter()
        button.click()
        _wait_step(page, n + 1)
        times.append((time.perf_counter() - start) * 1000)
        page.wait_for_timeout(300)
    return times


def _browser_session(b: Any, steps: int, path: Path, repeat: int) -> BrowserRun:
    sys.path.insert(0, str(ROOT / "scripts"))
    from app_server import running_app

    run = BrowserRun(steps, path.stat().st_size)
    with running_app(timeout=60) as base:
        pid = _server_pid()
        context = b.new_context(viewport={"width": 1440, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(300_000)
        page.goto(f"{base}/")
        _wait_step(page, 1)  # the bundled default session, drawn
        run.idle_rss = _memory(pid)[0]
        page.locator(".st-key-w_sel_session input").click()
        page.get_by_role("option", name="Upload a file…").click()
        chooser = page.locator(".st-key-upload_session input[type=file]")
        chooser.wait_for(state="attached")
        start = time.perf_counter()
        chooser.set_input_files(path)
        page.wait_for_function(
            "n => [...document.querySelectorAll('h2, h3')].some(e => e.textContent === 'Step 1 / ' + n)",
            arg=str(steps),
            timeout=300_000,
        )
        page.wait_for_selector(DONE, timeout=300_000)
        run.open_upload = (time.perf_counter() - start) * 1000
        run.rss, run.peak_rss = _memory(pid)
        page.wait_for_timeout(500)
        run.moves["→ key at step 1"] = _keys(page, repeat)
        run.moves[f"Next button at step {repeat + 1}"] = _next_clicks(page, repeat)
        query = str(page.evaluate("() => window.location.search"))
        late = steps - repeat - 1
        link = re.sub(r"step=[0-9]+", f"step={late}", query)
        context.close()

        # The page's link in a new browser session: the analysis is cached on the server.
        context = b.new_context(viewport={"width": 1440, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(300_000)
        start = time.perf_counter()
        page.goto(f"{base}/{link}")
        _wait_step(page, late)
        run.open_link = (time.perf_counter() - start) * 1000
        page.wait_for_timeout(500)
        run.moves[f"→ key at step {late:,}"] = _keys(page, repeat)

        query = str(page.evaluate("() => window.location.search"))
        page.goto(f"{base}/Timeline{query}")
        page.wait_for_function(f"() => ({SHOWN_JS})() !== ''", timeout=300_000)
        page.wait_for_selector(DONE)
        page.wait_for_timeout(1500)
        (ROOT / "test-artifacts").mkdir(exist_ok=True)
        page.screenshot(path=str(ROOT / "test-artifacts" / f"bench-timeline-{steps}.png"))
        run.moves["click on the timeline chart"] = _timeline_clicks(page, repeat)
        context.close()
    return run


def _timeline_clicks(page: Any, repeat: int) -> list[float]:
    plot = page.locator(".st-key-chart_cache .nsewdrag").first
    box = plot.bounding_box()
    if box is None:
        raise SystemExit("the timeline chart did not draw")
    times: list[float] = []
    for i in range(repeat):
        before = _shown(page)
        x = box["x"] + box["width"] * (0.15 + 0.1 * i % 0.7)
        y = box["y"] + box["height"] * 0.97  # the foot of the bars: a point of every step drawn
        start = time.perf_counter()
        page.mouse.click(x, y)
        try:
            page.wait_for_function(
                f"b => {{ const t = ({SHOWN_JS})(); return t && !t.startsWith('Step ' + b + ' /'); }}",
                arg=str(before),
                timeout=20_000,
            )
            page.wait_for_selector(DONE, timeout=300_000)
        except Exception:  # the click hit no point: counted as a miss, not a time
            continue
        times.append((time.perf_counter() - start) * 1000)
        page.wait_for_timeout(500)
    return times


def _browser_report(runs: list[BrowserRun], repeat: int) -> None:
    load = os.getloadavg()
    print(
        f"In Chromium, a real server per session on {os.cpu_count()} cores "
        f"(load average at the end {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}); "
        f"{repeat} moves each, ms from the key press or click to the painted step"
    )
    print()
    print(
        f"| {'session':<22} | {'action':<30} | {'best':>5} | {'median':>6} | {'max':>5} | {'n':>2} |"
    )
    print(f"|{'-' * 24}|{'-' * 32}|{'-' * 6}:|{'-' * 7}:|{'-' * 6}:|{'-' * 3}:|")
    for run in runs:
        name = f"{run.steps:,} steps, {run.file_bytes / 1e6:.1f} MB"
        for action, values in run.moves.items():
            if values:
                cells = (
                    f"{min(values):>5.0f} | {statistics.median(values):>6.0f} | {max(values):>5.0f}"
                )
            else:
                cells = f"{'—':>5} | {'—':>6} | {'—':>5}"
            print(f"| {name:<22} | {action:<30} | {cells} | {len(values):>2} |")
            name = ""
    print()
    print(
        f"| {'session':<22} | {'upload to step 1':>16} | {'link to step':>12} | {'idle RSS':>8} | {'RSS':>6} | {'peak RSS':>8} |"
    )
    print(f"|{'-' * 24}|{'-' * 17}:|{'-' * 13}:|{'-' * 9}:|{'-' * 7}:|{'-' * 9}:|")
    for run in runs:
        name = f"{run.steps:,} steps, {run.file_bytes / 1e6:.1f} MB"
        print(
            f"| {name:<22} | {run.open_upload / 1000:>14.1f} s | {run.open_link / 1000:>10.1f} s "
            f"| {run.idle_rss / 2**20:>5.0f} MB | {run.rss / 2**20:>3.0f} MB | {run.peak_rss / 2**20:>5.0f} MB |"
        )


if __name__ == "__main__":
    raise SystemExit(main())
