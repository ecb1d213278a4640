"""Timeline: the whole session as charts; selecting a point moves to that step."""

from __future__ import annotations

from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st

from assembler.analysis.app import MAX_POINTS
from ui.frame import billing, page
from ui.frame.sidebar import sidebar
from ui.html import md
from ui.state import data
from ui.views import chart_marker, charts, step


def body() -> None:
    sel = sidebar()
    if sel is None:
        return
    a = sel.analysis()
    total = len(a.steps)
    n = step.follow(total, sel.query(), "This session has no LLM calls: there is nothing to chart.")
    if n is None:
        return
    frame = data.step_frame(sel.session_key, sel.layout, sel.provider, sel.model, sel.ttl, a)
    steps = frame["step"].tolist()
    s = a.steps[n - 1]

    st.title(":material/timeline: Timeline", anchor=False)
    st.caption(
        f"{md(sel.session.title)} · layout **{md(sel.layout.label)}** · {md(a.provider)} · {md(a.model)}"
        + (" · token counts approximate" if a.approximate_tokens else "")
        + ". Click a point or a bar to move to that step."
        + (
            " Dashed lines: the usage the provider measured, over the simulated bars."
            if any(x.measured is not None for x in a.steps)
            else ""
        )
    )
    billing.show(sel, a)
    info, link = st.columns([3, 2], vertical_alignment="center")
    info.subheader(f"Step {n} / {total}", anchor=False)
    info.caption(
        f"**{md(s.function)}** · depth {s.depth} · {s.tokens.get('total', 0):,} tokens · "
        f"hit ratio {s.hit_ratio:.1%} · \\${s.usd:,.4f}"
    )
    link.page_link(
        "app.py",
        label="Open in the step view",
        icon=":material/stacks:",
        query_params={"step": str(n), **sel.query()},
    )

    def pick(chosen: int) -> None:
        step.set_step(chosen, total)

    figures: dict[str, Callable[[], go.Figure]] = {
        "Cache": lambda: charts.cache_per_step(frame, a),
        "Tokens by layer": lambda: charts.tokens_by_layer(frame),
        "Cumulative cost": lambda: charts.cumulative_cost(frame),
        "Size against depth": lambda: charts.size_vs_depth(frame),
    }
    keys = {
        "Cache": "chart_cache",
        "Tokens by layer": "chart_layers",
        "Cumulative cost": "chart_cost",
        "Size against depth": "chart_depth",
    }
    # The figures are the same at every step (a changed figure is a new chart to the browser,
    # drawn from nothing); the step is marked over them (ui/views/chart_marker.py).
    marks: list[chart_marker.Mark] = []

    def draw(name: str) -> None:
        charts.chart(figures[name](), keys[name], steps, pick)
        mark = charts.step_mark(frame, n, keys[name], at_point=name == "Size against depth")
        if mark is not None:
            marks.append(mark)

    if len(frame) > MAX_POINTS:
        # A long session: one chart at a time, so a click redraws one figure, not four.
        names = list(figures)
        picked = st.segmented_control(
            "Chart", names, default=names[0], key="timeline_chart", label_visibility="collapsed"
        )
        draw(picked or names[0])
    else:
        left, right = st.columns(2)
        with left:
            draw("Tokens by layer")
            draw("Cumulative cost")
        with right:
            draw("Cache")
            draw("Size against depth")
    chart_marker.place(marks)


page.setup("Timeline", ":material/timeline:")
page.guarded(body)
