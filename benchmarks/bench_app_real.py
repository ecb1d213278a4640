"""The app on real transcripts, in Chromium on a real server: upload to painted step, page switches.

Run by hand (``bench_real.py`` covers the command line; this is its app part)::

    .venv/bin/python benchmarks/bench_app_real.py                    # every real transcript, best of 3
    .venv/bin/python benchmarks/bench_app_real.py --only 258c7280 --repeat 5
    .venv/bin/python benchmarks/bench_app_real.py --server-only      # the in-process phases alone

On every Claude Code transcript (with its subagent files) and Codex rollout in
``../shared/real-traffic`` (skipped with one line when it is absent), each repetition
on a freshly started server (nothing cached) in Debian's chromium:

- background load: from the first painted page (the bundled session) to the end of the
  tab's own load of the chart and table code (``ui/frame/warm_browser.py``); the tour
  starts after it, as a person's does, who takes longer than that to pick a file;
- upload to painted step: the files given (by path, as a person's choice) to the
  sidebar's uploader until ``Step 1 / N`` is on screen and the run has finished drawing;
- each page switched to from the sidebar, in the order a user tours them (Timeline,
  Compare layouts, Registry, Savings, Recommend, Learn, back to the step view, and the
  Timeline again, its data now cached by the server), from
  the click until the page's title is on screen, the run has finished and every chart
  and table on it has drawn.

Each figure is the best of ``--repeat`` servers; the load average is printed with the
table (the machine is shared: wall-clock time moves with it). Before the browser part,
the server's own work is measured in this process (CPU seconds, best of ``--repeat``),
so the figures say what is import and what is app: the import of the raw files
(``read_upload``), parsing the session it wrote, the replay check, the analysis of
step 1 alone and of the whole session.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "real-traffic"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

#: The pages a user tours after an upload: (sidebar label, what marks it painted).
PAGES: tuple[tuple[str, str], ...] = (
    ("Timeline", "Timeline"),
    ("Compare layouts", "Compare layouts"),
    ("Registry", "Registry"),
    ("Savings", "Savings"),
    ("Recommend", "Recommend"),
    ("Learn", "Learn the design"),
    ("Step view", "Step 1 /"),
)
#: The Timeline visited a second time, at the end of the tour.
AGAIN = "Timeline again"
#: From the first painted page to the end of the tab's background load of the chart code.
WARM = "background load"
WARMED_JS = "() => window.__caiWarm === 'done' || window.__caiWarm === 'none'"
DONE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
#: True once the run has ended and every chart and table on the page has drawn.
PAINTED_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stSkeleton"], [data-testid="stSpinner"]')) return false;
  for (const c of document.querySelectorAll('[data-testid="stPlotlyChart"]'))
    if (!c.querySelector('.main-svg')) return false;
  for (const d of document.querySelectorAll('[data-testid="stDataFrame"]'))
    if (!d.querySelector('canvas')) return false;
  return true;
}"""
#: The error an upload the app refuses is answered with.
REFUSED = '[data-testid="stAlertContentError"]'
#: The heading that names the page (h1 title, or the step view's indicator).
HEADING_JS = """m => [...document.querySelectorAll('h1, h2, h3')]
  .some(e => e.textContent.includes(m) && !e.closest('[data-stale="true"]'))"""


def transcripts(corpus: Path, only: str | None) -> list[tuple[str, list[Path]]]:
    """(kind, files) per real transcript: a Claude Code one with its subagent files."""
    found: list[tuple[str, list[Path]]] = []
    for path in sorted((corpus / "claude-code").glob("*/*.jsonl")):
        folder = path.parent / path.stem / "subagents"
        beside = sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
        found.append(("claude-code", [path, *beside]))
    for path in sorted((corpus / "codex").glob("*/*.jsonl")):
        found.append(("codex", [path]))
    return [(k, f) for k, f in found if only is None or only in f[0].name]


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# --- in this process: what is import and what is app --------------------------------------


@dataclass
class Phases:
    """CPU seconds of each phase of opening one upload in this process (best of N)."""

    name: str
    mb: float
    summary: str = ""
    steps: int = 0
    cpu: dict[str, float] = field(default_factory=dict)
    refused: str = ""


def _replayed(session: Any) -> int:
    from assembler.sessions.replay import iter_steps

    return sum(1 for _ in iter_steps(session))


def server_phases(files: list[Path], repeat: int) -> Phases:
    from assembler.analysis.app import UploadError, read_upload
    from assembler.analysis.engine import analyze, builtin_layout, freeze_for_reuse
    from assembler.sessions.loader import parse_bytes
    from assembler.sessions.model import SessionError

    raw = [(p.name, p.read_bytes()) for p in files]
    out = Phases(files[0].name, sum(len(b) for _, b in raw) / 1e6)
    layout = builtin_layout("seed")

    def timed(name: str, work: Callable[[], Any]) -> Any:
        start = _cpu()
        result = work()
        spent = _cpu() - start
        out.cpu[name] = min(out.cpu.get(name, spent), spent)
        return result

    for _ in range(repeat):
        try:
            upload = timed("import", lambda: read_upload(raw))
            session = timed("parse", partial(parse_bytes, upload.raw, upload.name))
            timed("replay check", partial(_replayed, session))
            whole = timed("analysis", partial(analyze, session, layout))
            freeze_for_reuse(whole)
        except (UploadError, SessionError, ValueError) as exc:
            out.refused = str(exc).splitlines()[0][:90]
            return out
        out.summary, out.steps = upload.summary, len(whole.steps)
    return out


def print_phases(rows: list[Phases]) -> None:
    names = ("import", "parse", "replay check", "analysis")
    print(f"In-process CPU seconds, best of N (load {_load()}):")
    print()
    print(
        f"| {'transcript':<44} | {'MB':>4} | {'steps':>5} | "
        + " | ".join(f"{n:>12}" for n in names)
        + " |"
    )
    print(f"|{'-' * 46}|{'-' * 5}:|{'-' * 6}:|" + "|".join(f"{'-' * 13}:" for _ in names) + "|")
    for r in rows:
        cells = " | ".join(f"{r.cpu[n]:>12.2f}" if n in r.cpu else f"{'—':>12}" for n in names)
        print(f"| {r.name[:44]:<44} | {r.mb:>4.1f} | {r.steps:>5} | {cells} |")
        if r.refused:
            print(f"|   refused: {r.refused}")
    print()


# --- in the browser -------------------------------------------------------------------------


@dataclass
class Paints:
    """Milliseconds from the action to the painted page, one list per action (one per server)."""

    name: str
    mb: float
    shown: str = ""
    times: dict[str, list[float]] = field(default_factory=dict)

    def add(self, action: str, ms: float) -> None:
        self.times.setdefault(action, []).append(ms)


def _painted(page: Any, heading: str, timeout: float = 300_000) -> None:
    page.wait_for_function(HEADING_JS, arg=heading, timeout=timeout)
    page.wait_for_function(PAINTED_JS, timeout=timeout)


def _upload(page: Any, files: list[Path]) -> float | None:
    """Choose "Upload a file…", give the files to the uploader; ms until step 1 is painted
    (None when the app refuses the upload)."""
    page.locator(".st-key-w_sel_session input").click()
    page.get_by_role("option", name="Upload a file…").click()
    chooser = page.locator(".st-key-upload_session input[type=file]")
    chooser.wait_for(state="attached")
    page.wait_for_selector(DONE)
    start = time.perf_counter()
    # by path, as a person's choice: the browser reads the files from disk (given as bytes,
    # Playwright first sends them through its protocol: 0.45 s of the 1 s at 3 MB, measured)
    chooser.set_input_files(files)
    # a refused upload (a rollout naming no model) says so in an alert: no tour then
    page.wait_for_function(
        f"m => ({HEADING_JS})(m) || !!document.querySelector('{REFUSED}')", arg="Step 1 /"
    )
    if page.locator(REFUSED).count():
        return None
    _painted(page, "Step 1 /")
    return (time.perf_counter() - start) * 1000


def _switch(page: Any, label: str, heading: str) -> float:
    link = page.locator('[data-testid="stSidebar"] a', has_text=label).first
    start = time.perf_counter()
    link.click()
    _painted(page, heading)
    return (time.perf_counter() - start) * 1000


def browser_run(browser: Any, files: list[Path], paints: Paints, shots: Path | None) -> None:
    """One repetition on a freshly started server."""
    from app_server import running_app

    with running_app(timeout=60) as base:
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(300_000)
        page.goto(f"{base}/")
        _painted(page, "Step 1 / 21")  # the bundled default session, drawn
        # the tour starts once the tab has loaded the chart and table code in the background
        # (ui/frame/warm_browser.py), as it has by the time a person has picked a file
        start = time.perf_counter()
        page.wait_for_function(WARMED_JS, timeout=60_000)
        paints.add(WARM, (time.perf_counter() - start) * 1000)
        upload = _upload(page, files)
        if upload is None:
            paints.shown = "refused"
            context.close()
            return
        paints.add("upload to painted step 1", upload)
        indicator = page.evaluate(
            "() => [...document.querySelectorAll('h3')].map(e => e.textContent)"
            ".find(t => t.startsWith('Step 1 /')) || ''"
        )
        paints.shown = str(indicator)
        if shots is not None:
            page.screenshot(path=str(shots / f"{files[0].stem[:8]}-step.png"), full_page=True)
        for label, heading in PAGES:
            page.wait_for_timeout(300)
            paints.add(label, _switch(page, label, heading))
            if shots is not None:
                name = label.lower().replace(" ", "-")
                page.screenshot(path=str(shots / f"{files[0].stem[:8]}-{name}.png"), full_page=True)
        # once the browser holds the chart library and the page's data is cached
        page.wait_for_timeout(300)
        paints.add(AGAIN, _switch(page, "Timeline", "Timeline"))
        context.close()


def print_paints(rows: list[Paints], repeat: int) -> None:
    actions = [WARM, "upload to painted step 1", *(label for label, _ in PAGES), AGAIN]
    print(
        f"In Chromium, a freshly started server per repetition, best of {repeat} "
        f"(median in brackets), seconds from the action to the painted page; "
        f"{os.cpu_count()} cores, load average at the end {_load()}"
    )
    print()
    print(
        f"| {'transcript':<30} | {'steps':>13} | "
        + " | ".join(f"{a[:14]:>14}" for a in actions)
        + " |"
    )
    print(f"|{'-' * 32}|{'-' * 15}:|" + "|".join(f"{'-' * 15}:" for _ in actions) + "|")
    for r in rows:
        cells = []
        for a in actions:
            v = sorted(r.times.get(a, []))
            cells.append(
                f"{v[0] / 1000:>5.2f} ({v[len(v) // 2] / 1000:.2f})" if v else f"{'—':>14}"
            )
        print(
            f"| {r.name[:30]:<30} | {r.shown[-13:]:>13} | "
            + " | ".join(f"{c:>14}" for c in cells)
            + " |"
        )
    print()


def _load() -> str:
    load = os.getloadavg()
    return f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--only", help="only the transcripts whose file name contains this")
    parser.add_argument("--repeat", type=int, default=3, help="servers per transcript (best of)")
    parser.add_argument("--server-only", action="store_true", help="the in-process phases alone")
    parser.add_argument("--browser-only", action="store_true", help="the browser part alone")
    parser.add_argument("--screenshots", type=Path, help="save a screenshot of every page here")
    args = parser.parse_args(argv)
    if not (args.corpus / "claude-code").is_dir():
        print(f"skipped: {args.corpus} is absent (the real corpus lives beside the checkout)")
        return 0
    found = transcripts(args.corpus, args.only)
    if not args.browser_only:
        print_phases([server_phases(files, args.repeat) for _, files in found])
    if args.server_only:
        return 0
    from app_server import CHROMIUM_ARGS, chromium_path
    from playwright.sync_api import sync_playwright

    chromium = chromium_path()
    if chromium is None:
        print("skipped: Debian's chromium is not installed (make chromium)")
        return 0
    if args.screenshots is not None:
        args.screenshots.mkdir(parents=True, exist_ok=True)
    rows: list[Paints] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for _, files in found:
            paints = Paints(files[0].name, sum(f.stat().st_size for f in files) / 1e6)
            for i in range(args.repeat):
                browser_run(browser, files, paints, args.screenshots if i == 0 else None)
                if paints.shown == "refused":
                    break
            rows.append(paints)
            print_paints(rows[-1:], args.repeat)
        browser.close()
    print_paints(rows, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
