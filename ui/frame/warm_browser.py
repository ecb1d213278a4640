"""The browser's half of the warm-up: the chart and table code loaded while the page idles.

Streamlit's frontend loads the code of a chart or a table the first time a page draws
one. Plotly's is 4.7 MB: on two cores, measured in Chromium on a 156-request transcript,
the Timeline took 1.5 s to paint on its first visit and 0.65 s on its second, and about
0.7 s of the difference is the module's evaluation on the page's one thread (its
download and compile, 0.13 s). So once a page has finished drawing and has run nothing
for a second (a person reading it), and the browser is idle, this component imports
those modules itself, by the very address the frontend imports them from: a module is
evaluated once per address, so when the Timeline asks for it, it is there. It runs once
per browser tab; the tab is busy for that second instead of the first chart page.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import streamlit as st

#: The frontend modules of the elements the other pages draw: plotly charts and data frames.
ELEMENTS = ("PlotlyChart", "DataFrame")
#: How long a page must have run nothing before the tab loads: a person who acts at once (a
#: click right after the paint) is not made to wait on a second of loading.
QUIET_MS = 1000
#: A built module's file name: element, content hash, ``.js``; nothing else reaches the page.
_NAME = re.compile(r"[A-Za-z]+\.[\w-]+\.js")

JS = """
export default function(component) {
  const { data } = component;
  const w = window;
  if (w.__caiWarm) return;  // once per tab: every page's run renders this
  const names = (data && data.modules) || [];
  const QUIET = (data && data.quiet) || 0;
  // the frontend's entry module: the lazy modules are imported relative to it
  const entry = [...document.querySelectorAll('script[type="module"][src]')]
    .map((e) => e.src).find((s) => /\\/static\\/js\\/index\\.[\\w-]+\\.js$/.test(s));
  if (!entry || !names.length) { w.__caiWarm = "none"; return; }
  w.__caiWarm = "waiting";
  const idle = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !!app && app.getAttribute("data-test-script-state") === "notRunning";
  };
  const later = (f) => (w.requestIdleCallback ? w.requestIdleCallback(f, { timeout: 2000 }) : setTimeout(f, 50));
  // each module once the page has had no run for QUIET ms: a person reading, not clicking on
  let quiet = null;
  const next = (i) => {
    if (i >= names.length) { w.__caiWarm = "done"; return; }
    const now = performance.now();
    if (!idle()) quiet = null;
    else if (quiet === null) quiet = now;
    if (quiet === null || now - quiet < QUIET) { setTimeout(() => next(i), 100); return; }
    later(() => import(new URL(names[i], entry).href).catch(() => {}).finally(() => next(i + 1)));
  };
  next(0);
}
"""

_component: Any = None


@cache
def modules() -> tuple[str, ...]:
    """The installed frontend's module file for each element, where exactly one is found."""
    folder = Path(st.__file__).parent / "static" / "static" / "js"
    found: list[str] = []
    for element in ELEMENTS:
        names = [p.name for p in folder.glob(f"{element}.*.js")]
        if len(names) == 1 and _NAME.fullmatch(names[0]):
            found.append(names[0])
    return tuple(found)


def place() -> None:
    """Render the (invisible) loader in the sidebar; it does its work once per tab."""
    global _component
    if _component is None:
        _component = st.components.v2.component("cai_warm_browser", js=JS)
    with st.sidebar:
        _component(
            key="warm_browser", data={"modules": list(modules()), "quiet": QUIET_MS}, height=0
        )
