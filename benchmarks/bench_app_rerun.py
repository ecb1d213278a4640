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
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    raise SystemExit(main())
