"""The current step drawn over a chart, outside the figure.

Streamlit identifies a selectable chart by its whole figure: a figure that
changes with the step (a line at the step, a star on its point) is a new chart
at every step, so the browser throws the old one away and draws the new one
from nothing, which took ~300 ms of a ~470 ms timeline click at 5,000 steps.
The figures are therefore the same at every step, and the page places the
marker itself: a dotted line at the step (or a star at a point) laid over the
plot area, from the axis ranges the chart drew, again after a zoom, a resize
or a redraw. It never takes a click (``pointer-events: none``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import streamlit as st

JS = """
export default function(component) {
  const { data } = component;
  const w = window;
  const m = (w.__caiMarks = w.__caiMarks || { marks: [], frame: 0, watched: new WeakSet() });
  m.marks = (data && data.marks) || [];
  const along = (axis, value) => {
    const r = axis && axis.range;
    if (!r || r.length !== 2 || r[0] === r[1]) return null;
    return (value - r[0]) / (r[1] - r[0]);
  };
  const star = (size) => {
    const pts = [];
    for (let i = 0; i < 10; i++) {
      const a = Math.PI / 2 + (i * Math.PI) / 5, r = i % 2 ? 0.42 : 1;
      pts.push((r * Math.cos(a)).toFixed(3) + "," + (-r * Math.sin(a)).toFixed(3));
    }
    return '<svg width="' + size + '" height="' + size + '" viewBox="-1.1 -1.1 2.2 2.2">'
      + '<polygon points="' + pts.join(" ") + '" fill="#3b5bdb" stroke="#1f2430" stroke-width="0.1"/></svg>';
  };
  const placeOne = (mark) => {
    const box = document.querySelector(".st-key-" + CSS.escape(mark.key));
    if (!box) return;
    let el = box.querySelector(":scope > .cai-mark");
    const gd = box.querySelector(".js-plotly-plot");
    const area = gd && gd.querySelector(".nsewdrag");
    const full = gd && (gd._fullLayout || gd.layout);
    if (!area || !full) { if (el) el.style.display = "none"; return; }
    if (!m.watched.has(gd) && typeof gd.on === "function") {
      m.watched.add(gd);
      gd.on("plotly_afterplot", schedule);  // a zoom, a pan, a resize: every redraw
    }
    if (getComputedStyle(box).position === "static") box.style.position = "relative";
    if (!el) {
      el = document.createElement("div");
      el.className = "cai-mark";
      el.setAttribute("aria-hidden", "true");
      el.style.cssText = "position:absolute;pointer-events:none;z-index:2;";
      box.appendChild(el);
    }
    const b = box.getBoundingClientRect(), a = area.getBoundingClientRect();
    const fx = along(full.xaxis, mark.x);
    const fy = mark.y === null ? 0.5 : along(full.yaxis, mark.y);
    if (fx === null || fy === null || fx < 0 || fx > 1 || fy < 0 || fy > 1) {
      el.style.display = "none";
      return;
    }
    const x = a.left - b.left + fx * a.width;
    el.style.display = "block";
    if (mark.y === null) {
      el.dataset.kind = "line";
      el.style.left = x - 1 + "px";
      el.style.top = a.top - b.top + "px";  // the label inside the plot: the title sits above
      el.style.width = "0";
      el.style.height = a.height + "px";
      el.style.borderLeft = "2px dotted #1f2430";
      el.innerHTML = '<span style="position:absolute;top:0;left:3px;font:12px sans-serif;'
        + 'color:#1f2430;white-space:nowrap;background:rgba(255,255,255,.85);padding:0 2px"></span>';
    } else {
      el.dataset.kind = "star";
      const size = 20;
      el.style.left = x - size / 2 + "px";
      el.style.top = a.bottom - b.top - fy * a.height - size / 2 + "px";
      el.style.width = size + "px";
      el.style.height = size + "px";
      el.style.borderLeft = "none";
      el.innerHTML = star(size);
    }
    const label = el.querySelector("span");
    if (label) label.textContent = mark.label;
    el.title = mark.label;
    el.dataset.x = String(mark.x);
  };
  function place() {
    m.frame = 0;
    for (const mark of m.marks) placeOne(mark);
  }
  function schedule() {
    if (!m.frame) m.frame = requestAnimationFrame(place);
  }
  m.schedule = schedule;
  schedule();
  // a chart drawn after this run (a first paint, a chart switch, a new session) is found
  // by its first redraw; until then, a few frames of looking
  let tries = 0;
  const look = () => {
    place();
    if (++tries < 60 && m.marks.some((k) => {
      const box = document.querySelector(".st-key-" + CSS.escape(k.key));
      return !box || !box.querySelector(".cai-mark");
    })) setTimeout(look, 50);
  };
  setTimeout(look, 0);
  if (!m.resize) {
    m.resize = true;
    w.addEventListener("resize", () => m.schedule && m.schedule());
  }
}
"""

_component: Any = None


@dataclass(frozen=True)
class Mark:
    """Where the step is on the chart keyed ``key``: a line at ``x``, or a star at (``x``, ``y``)."""

    key: str
    x: float
    label: str
    y: float | None = None


def place(marks: list[Mark]) -> None:
    """Draw each mark over its chart (charts drawn in this run, with their keys)."""
    global _component
    if _component is None:
        _component = st.components.v2.component("cai_chart_marker", js=JS)
    _component(key="chart_marks", data={"marks": [asdict(m) for m in marks]}, height=0)
