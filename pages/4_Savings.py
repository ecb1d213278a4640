"""Savings: what caching saves per day and per month at a given traffic."""

from __future__ import annotations

import json
from collections.abc import Callable

import pandas as pd
import streamlit as st

from assembler.analysis.bill import BillFirst, size_scales
from assembler.analysis.reports import analysis_json, analysis_rows
from assembler.safe_text import csv_cell
from ui.frame import billing, page
from ui.frame.sidebar import sidebar
from ui.html import md
from ui.views import step


def _usd(x: float) -> str:
    return f"${x:,.2f}" if abs(x) >= 1 else f"${x:,.4f}"


def _based_on(bill: BillFirst | None) -> str:
    """What the per-day and per-month figures multiply."""
    if bill is None:
        return (
            "Per day and per month (30 days): the simulated cost of this session, times the "
            "count; uncached, the simulated cost without caching."
        )
    if bill.billed_steps == bill.steps:
        steps = "the step" if bill.steps == 1 else f"all {bill.steps:,} steps"
        return (
            f"Per day and per month (30 days): the bill, the provider's usage for {steps} priced "
            "per request, times the count; uncached, the same billed tokens with nothing cached."
        )
    rest = bill.steps - bill.billed_steps
    return (
        f"Per day and per month (30 days): the bill for the {bill.billed_steps:,} of "
        f"{bill.steps:,} steps with the provider's usage, and the simulated cost of the {rest:,} "
        f"step{'' if rest == 1 else 's'} without it, times the count; uncached, the billed "
        "tokens with nothing cached and the simulated cost of the rest."
    )


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
        f"{md(a.model)} · lifetime {md(a.ttl)}{billing.scale_caption(sel, a)}. "
        "Prices from genai-prices (offline)."
        + (" Token counts are approximate for this provider." if a.approximate_tokens else "")
    )
    found = billing.billed_first(sel, a)
    if isinstance(found, str):  # a bill that cannot be priced: said, the simulation stands
        st.caption(md(found))
        found = None
    # the bill comes first for an imported session; a sample of usage on a step or two is beside
    bill = found if found is not None and found.comes_first else None
    sample = found if found is not None and not found.comes_first else None
    if bill is not None:
        billing.bill_section(sel, bill)
    else:
        billing.show(sel, a)  # at another provider: why there is no bill
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
    # the projection starts from the bill where there is one: it is what the session cost
    base, base_without = (
        (bill.per_session, bill.per_session_without_cache) if bill else (with_cache, without)
    )
    saved = base_without - base
    kind = "as billed" if bill else "with caching"
    # short labels: four figures stay whole in a 1,000-px window
    m = st.columns(4)
    m[0].metric(f"Per day, {kind}", _usd(base * per_day))
    m[1].metric("Per day, uncached", _usd(base_without * per_day))
    m[2].metric(f"Per month, {kind}", _usd(base * per_day * 30))
    m[3].metric(
        "Saved per month",
        _usd(saved * per_day * 30),
        delta=f"{saved / base_without:.0%} of uncached" if base_without else None,
        delta_color="green",
        delta_arrow="off",
    )
    st.caption(_based_on(bill))
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

    sim = ", simulated" if bill else ""
    lines: list[tuple[str, float, Callable[[float], str], bool]] = []
    if bill is not None:
        lines += [
            ("cost as billed", base, _usd, True),
            ("cost without caching, as billed", base_without, _usd, True),
            ("saved by caching, as billed", saved, _usd, True),
        ]
    lines += [
        (f"tokens read from cache{sim}", float(t.get("read", 0)), tok, True),
        (f"tokens written to cache{sim}", float(t.get("write", 0)), tok, True),
        (f"tokens uncached{sim}", float(t.get("uncached", 0)), tok, True),
        (f"all input tokens{sim}", float(t.get("tokens", 0)), tok, True),
        (f"hit ratio{sim}", float(t.get("hit_ratio", 0.0)), lambda v: f"{v:.1%}", False),
        (f"cost with caching{sim}", with_cache, _usd, True),
        (f"cost without caching{sim}", without, _usd, True),
        (f"saved by caching{sim}", without - with_cache, _usd, True),
    ]
    if sample is not None:
        covered = f", {sample.billed_steps:,} of {sample.steps:,} steps"
        lines.append((f"cost as billed (measured usage{covered})", sample.billed, _usd, True))
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
    # every row in sight: a header and 35 px a row
    st.dataframe(breakdown, hide_index=True, width="stretch", height=38 + 35 * len(lines))
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
        lambda: frame.map(csv_cell).to_csv(index=False).encode("utf-8"),  # no cell a formula
        file_name=f"{stem}.csv",
        mime="text/csv",
        icon=":material/download:",
        key="download_csv",
    )
    d2.download_button(
        "Full analysis (JSON)",
        lambda: json.dumps(
            analysis_json(a, sel.recorded, size_scales(sel.session, a, sel.provider, sel.model)),
            indent=2,
            ensure_ascii=False,
        ).encode("utf-8"),
        file_name=f"{stem}.json",
        mime="application/json",
        icon=":material/download:",
        key="download_json",
    )


page.setup("Savings", ":material/savings:")
page.guarded(body)
