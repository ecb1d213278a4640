"""Savings: what caching saves per day and per month at a given traffic."""

from __future__ import annotations

import json
from collections.abc import Callable

import pandas as pd
import streamlit as st

from assembler.analysis.reports import analysis_json, analysis_rows
from ui import billing, page, step
from ui.html import md
from ui.sidebar import sidebar


def _usd(x: float) -> str:
    return f"${x:,.2f}" if abs(x) >= 1 else f"${x:,.4f}"


def body() -> None:
    sel = sidebar()
    if sel is None:
        return
    a = sel.analysis()
    step.write_query(None, sel.query())
    t = a.totals
    st.title(":material/savings: Savings", anchor=False)
    st.caption(
        f"{md(sel.session.title)} · layout **{md(sel.layout.label)}** · {md(a.provider)} · "
        f"{md(a.model)} · lifetime {md(a.ttl)}. Prices from genai-prices (offline)."
        + (" Token counts are approximate for this provider." if a.approximate_tokens else "")
    )
    costs = billing.show(sel, a)
    c1, c2 = st.columns([1, 3], vertical_alignment="bottom")
    per_day = c1.number_input(
        "Sessions per day",
        min_value=0,
        max_value=10_000_000,
        value=1,
        step=1,
        key="sessions_per_day",
        help="How many sessions like this one run per day; set your own count.",
    )
    c2.caption(
        "Provider, model and lifetime are in the sidebar. One session here is this recorded "
        f"session: {len(a.steps):,} LLM calls. The figures start from one session a day: "
        "set the count your team runs."
    )
    with_cache = float(t.get("usd", 0.0))
    without = float(t.get("usd_without_cache", 0.0))
    saved = without - with_cache
    m = st.columns(4)
    m[0].metric("Per day, with caching", _usd(with_cache * per_day))
    m[1].metric("Per day, without caching", _usd(without * per_day))
    m[2].metric("Per month (30 days), with caching", _usd(with_cache * per_day * 30))
    m[3].metric(
        "Saved per month",
        _usd(saved * per_day * 30),
        delta=f"{saved / without:.0%} of the uncached cost" if without else None,
        delta_color="green",
        delta_arrow="off",
    )
    if a.steps and a.steps[0].usd > a.steps[0].usd_without_cache:
        s1 = a.steps[0]
        st.caption(
            f"Step 1 costs \\${s1.usd:,.5f} with caching and \\${s1.usd_without_cache:,.5f} "
            f"without: writing {s1.write:,} tokens to the cache is billed above the plain input "
            "price (the write premium); the steps that read them pay it back."
        )
    st.markdown("#### :material/table_chart: Breakdown")

    def tok(v: float) -> str:
        return f"{v:,.0f}"

    lines: list[tuple[str, float, Callable[[float], str], bool]] = [
        ("tokens read from cache", float(t.get("read", 0)), tok, True),
        ("tokens written to cache", float(t.get("write", 0)), tok, True),
        ("tokens uncached", float(t.get("uncached", 0)), tok, True),
        ("all input tokens", float(t.get("tokens", 0)), tok, True),
        ("hit ratio", float(t.get("hit_ratio", 0.0)), lambda v: f"{v:.1%}", False),
        ("cost with caching", with_cache, _usd, True),
        ("cost without caching", without, _usd, True),
        ("saved by caching", saved, _usd, True),
    ]
    if costs.billed is not None:
        # a bill only for the steps that carry measured usage: said, beside whole-session costs
        steps = len(a.steps)
        covered = (
            "" if costs.billed_steps == steps else f", {costs.billed_steps:,} of {steps:,} steps"
        )
        lines.append((f"cost as billed (measured usage{covered})", costs.billed, _usd, True))
    breakdown = pd.DataFrame(
        [
            {
                "": name,
                "per session": fmt(v),
                "per day": fmt(v * per_day if scales else v),
                "per month (30 days)": fmt(v * per_day * 30 if scales else v),
            }
            for name, v, fmt, scales in lines
        ]
    )
    st.dataframe(breakdown, hide_index=True, width="stretch")
    st.markdown("#### :material/list: Per step")
    rows = analysis_rows(a)
    # in a column of numbers a step without the figure (measured usage) is an empty cell: None,
    # so the column stays numbers for the table (an empty string among them fails its
    # conversion); text columns keep their empty strings. The CSV is the same either way.
    frame = pd.DataFrame(rows)
    numbers = [
        c
        for c in frame.columns
        if frame[c].map(lambda v: v == "" or isinstance(v, int | float)).all()
        and (frame[c] != "").any()
    ]
    frame[numbers] = frame[numbers].replace({"": None})
    # as tall as its rows (a header and 35 px a row), at most 320 px: no empty grid under a few steps
    st.dataframe(frame, hide_index=True, width="stretch", height=min(320, 38 + 35 * len(frame)))
    stem = f"{a.session}-{a.layout}-{a.model}".replace("/", "_")
    d1, d2, _ = st.columns([1, 1, 3])
    d1.download_button(
        "Per-step table (CSV)",
        lambda: frame.to_csv(index=False).encode("utf-8"),
        file_name=f"{stem}.csv",
        mime="text/csv",
        icon=":material/download:",
        key="download_csv",
    )
    d2.download_button(
        "Full analysis (JSON)",
        lambda: json.dumps(analysis_json(a, sel.recorded), indent=2, ensure_ascii=False).encode(
            "utf-8"
        ),
        file_name=f"{stem}.json",
        mime="application/json",
        icon=":material/download:",
        key="download_json",
    )


page.setup("Savings", ":material/savings:")
page.guarded(body)
