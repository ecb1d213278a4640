"""Arrow-key stepping that keeps every press.

A button shortcut is a click; a click that arrives while the previous rerun is
still drawing replaces it, so fast presses were lost. Here the page counts
presses itself: a document-level listener adds ±1 to a running total kept in
the browser window and sends the total; Python applies the difference from the
total it last applied. However runs coalesce, the sum of the moves is the
number of presses. The listener also works with focus left on a closed sidebar
select (after a choice or an upload), and leaves text fields, open selects,
sliders and charts alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

KEY = "step_keys"
APPLIED = "_step_keys_applied"

JS = """
export default function(component) {
  const { setStateValue, data } = component;
  const w = window;
  const k = (w.__caiStepKeys = w.__caiStepKeys || { net: 0, sent: 0, bound: false, timer: null });
  k.send = setStateValue;
  k.active = true;
  // A rerun may mount the new instance before the old one is cleaned up: only the latest
  // instance's cleanup switches the listener off.
  const me = (k.instance = (k.instance || 0) + 1);
  // What this run applied: a total sent while a run was drawing may have been dropped.
  if (data && typeof data.applied === "number") k.sent = data.applied;
  const idle = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !app || app.getAttribute("data-test-script-state") !== "running";
  };
  // Send the running total only while no run is drawing, so no value is lost in a rerun:
  // at once when the page is idle, else at the first 40 ms tick that finds it idle.
  const tick = () => {
    if (!k.active) return;
    if (k.net === k.sent) {
      if (k.timer !== null) { clearInterval(k.timer); k.timer = null; }
      return;
    }
    if (!idle()) return;
    k.sent = k.net;
    k.send("net", k.net);
  };
  const flush = () => {
    if (k.timer !== null) return;
    tick();
    if (k.net !== k.sent) k.timer = setInterval(tick, 40);
  };
  k.flush = flush;
  if (k.net !== k.sent) flush();
  if (!k.bound) {
    k.bound = true;
    document.addEventListener("keydown", (e) => {
      if (!k.active || (e.key !== "ArrowRight" && e.key !== "ArrowLeft")) return;
      if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
      const t = e.target;
      if (t && t.closest) {
        if (t.closest('textarea, [contenteditable="true"], [role="slider"], .js-plotly-plot')) return;
        if (t.tagName === "INPUT") {
          const select = t.getAttribute("role") === "combobox" || t.closest('[data-baseweb="select"]');
          if (!select || t.getAttribute("aria-expanded") === "true") return;
        }
      }
      e.preventDefault();
      k.net += e.key === "ArrowRight" ? 1 : -1;
      k.flush();
    }, true);
  }
  return () => { if (k.instance === me) k.active = false; };
}
"""

_component: Any = None


def _mount() -> Any:
    global _component
    if _component is None:
        _component = st.components.v2.component("cai_step_keys", js=JS)
    return _component


def _value(state: Any) -> int | None:
    """The total in the component's state (a mapping or an object with ``net``)."""
    try:
        value = state["net"]
    except (KeyError, TypeError):
        value = getattr(state, "net", None)
    return int(value) if isinstance(value, int | float) else None


def listen(on_move: Callable[[int], None]) -> None:
    """Mount the listener; each new total calls ``on_move(delta)`` before the page runs."""

    def changed() -> None:
        net = _value(st.session_state.get(KEY))
        if net is None:
            return
        delta = net - int(st.session_state.get(APPLIED, 0))
        st.session_state[APPLIED] = net
        if delta:
            on_move(delta)

    _mount()(
        key=KEY,
        data={"applied": int(st.session_state.get(APPLIED, 0))},
        on_net_change=changed,
        height=0,
    )
