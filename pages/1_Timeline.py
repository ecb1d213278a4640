"""Timeline: the whole session as charts; selecting a point moves to that step."""

from __future__ import annotations

import streamlit as st

from ui import billing, charts, data, page, step
from ui.html import md
from ui.sidebar import sidebar


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
    info, link = st.columns([4, 1], vertical_alignment="center")
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

    left, right = st.columns(2)
    with left:
        charts.chart(charts.tokens_by_layer(frame, n), "chart_layers", steps, pick)
        charts.chart(charts.cumulative_cost(frame, n), "chart_cost", steps, pick)
    with right:
        charts.chart(charts.cache_per_step(frame, n, a), "chart_cache", steps, pick)
        charts.chart(charts.size_vs_depth(frame, n), "chart_depth", steps, pick, skip_curves=(1,))


page.setup("Timeline", ":material/timeline:")
page.guarded(body)
