"""Compare layouts: one session under two layouts, side by side, and where they part."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from assembler.analysis.layouts import BUILTIN_LAYOUTS, LayoutError
from ui import billing, data, page, step
from ui.html import md
from ui.sidebar import Selection, sidebar

UPLOAD = "Upload a file…"
EDIT = "Edit in the page…"


def _side(title: str, prefix: str, default: str) -> data.LayoutChoice | None:
    """A layout picker: built-in, uploaded, or edited in a text area."""
    options = [*BUILTIN_LAYOUTS, UPLOAD, EDIT]
    qp = st.query_params.get(prefix)
    if qp in BUILTIN_LAYOUTS and st.session_state.get(f"_qp_{prefix}") != qp:
        st.session_state[f"{prefix}_choice"] = qp
        st.session_state[f"_qp_{prefix}"] = qp
    st.session_state.setdefault(f"{prefix}_choice", default)
    choice = st.selectbox(title, options, key=f"{prefix}_choice")
    try:
        if choice == UPLOAD:
            up = st.file_uploader(
                "Layout file",
                type=["yaml", "yml"],
                key=f"{prefix}_upload",
                max_upload_size=data.MAX_LAYOUT_MB,
            )
            if up is None:
                st.caption("Upload a layout YAML file.")
                return None
            return data.layout_choice(up.getvalue().decode("utf-8"), up.name)
        if choice == EDIT:
            start = st.selectbox("Start from", BUILTIN_LAYOUTS, key=f"{prefix}_start")
            text_key = f"{prefix}_text_{start}"
            if text_key not in st.session_state:
                st.session_state[text_key] = data.builtin_layout_text(start)
            text = st.text_area("Layout YAML", key=text_key, height=220)
            return data.layout_choice(text, f"{prefix} (edited)")
        return data.layout_choice(choice)
    except LayoutError as exc:
        st.error(str(exc), icon=":material/error:")
    except UnicodeDecodeError as exc:
        st.error(f"the layout file is not UTF-8 text (byte {exc.start})", icon=":material/error:")
    return None


def _chart(
    frame: pd.DataFrame, column: str, title: str, y: str, base: str, head: str, split: int | None
) -> go.Figure:
    fig = go.Figure()
    for side, name, colour in (("base", base, "#3b5bdb"), ("head", head, "#e8590c")):
        fig.add_scatter(
            x=frame["step"],
            y=frame[f"{column}_{side}"],
            name=f"{side}: {name}",
            mode="lines+markers" if len(frame) <= 200 else "lines",
            line={"color": colour},
        )
    if split is not None:
        fig.add_vline(x=split, line_width=2, line_dash="dot", line_color="#c92a2a")
        fig.add_annotation(
            x=split, y=1, yref="paper", text=f"diverges at {split}", showarrow=False, yshift=8
        )
    fig.update_layout(
        title={"text": title, "font": {"size": 14}},
        height=290,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        xaxis_title="step",
        yaxis_title=y,
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


def body() -> None:
    sel: Selection | None = sidebar()
    if sel is None:
        return
    st.title(":material/compare_arrows: Compare layouts", anchor=False)
    st.caption(
        f"{md(sel.session.title)} · {md(sel.provider_label)}. Each layout runs against its own cache; "
        "the first step where the cache numbers differ, and the component behind it, are named."
    )
    c1, c2 = st.columns(2, gap="medium")
    with c1:
        base = _side("Base layout", "base", "seed")
    with c2:
        head = _side("Head layout", "head", "situation-first")
    if base is None or head is None:
        return
    params = {**sel.query()}
    if base.key in BUILTIN_LAYOUTS:
        params["base"] = base.key
    if head.key in BUILTIN_LAYOUTS:
        params["head"] = head.key
    step.write_query(None, params)
    for side in ("base", "head"):
        st.session_state[f"_qp_{side}"] = params.get(side)

    cmp = data.comparison(
        sel.session_key, sel.session, base, head, sel.provider, sel.model, sel.ttl
    )
    b, h = cmp.base, cmp.head
    billing.strip(
        billing.costs(
            (sel.session_key, base.key, sel.provider, sel.model, sel.ttl), b, sel.provider is None
        )
    )
    if cmp.first_divergent_step is None:
        st.success(
            "The two layouts give the same cache numbers at every step.",
            icon=":material/check_circle:",
        )
    else:
        where = (
            f"**{md(cmp.breaking_component)}** ({md(cmp.breaking_layer)})"
            if cmp.breaking_component
            else "an unnamed block"
        )
        st.warning(
            f"First divergence at **step {cmp.first_divergent_step}**: {where} breaks the prefix under the head layout.",
            icon=":material/call_split:",
        )
        if cmp.sentence:
            st.caption(md(cmp.sentence))
        st.page_link(
            "app.py",
            label=f"Open step {cmp.first_divergent_step} under the head layout in the step view",
            icon=":material/stacks:",
            query_params={
                "step": str(cmp.first_divergent_step),
                "session": sel.session_name,
                **({"layout": head.key} if head.key in BUILTIN_LAYOUTS else {}),
            },
        )
    m = st.columns(4)
    m[0].metric("Hit ratio, base", f"{b.totals['hit_ratio']:.1%}")
    m[1].metric(
        "Hit ratio, head",
        f"{h.totals['hit_ratio']:.1%}",
        delta=f"{-cmp.hit_ratio_drop_points:+.1f} points"
        if abs(cmp.hit_ratio_drop_points) >= 0.05
        else None,
        delta_color="normal",
    )
    m[2].metric("Cost, base", f"${b.totals['usd']:,.4f}")
    m[3].metric(
        "Cost, head",
        f"${h.totals['usd']:,.4f}",
        delta=f"{cmp.cost_increase_percent:+.1f} %"
        if abs(cmp.cost_increase_percent) >= 0.05
        else None,
        delta_color="inverse",
    )
    frame = pd.DataFrame(
        {
            "step": [s.step for s in b.steps],
            "function": [s.function for s in b.steps],
            "hit_ratio_base": [s.hit_ratio for s in b.steps],
            "hit_ratio_head": [s.hit_ratio for s in h.steps],
            "usd_base": [s.usd for s in b.steps],
            "usd_head": [s.usd for s in h.steps],
            "miss_head": [s.miss.component if s.miss else "" for s in h.steps],
        }
    )
    split = cmp.first_divergent_step
    left, right = st.columns(2)
    left.plotly_chart(
        _chart(
            frame, "hit_ratio", "Hit ratio per step", "hit ratio", base.label, head.label, split
        ),
        key="cmp_hit",
    )
    right.plotly_chart(
        _chart(frame, "usd", "Cost per step", "USD", base.label, head.label, split), key="cmp_usd"
    )
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        height=min(38 + 35 * len(frame), 420),
        column_config={
            "hit_ratio_base": st.column_config.NumberColumn("hit ratio (base)", format="percent"),
            "hit_ratio_head": st.column_config.NumberColumn("hit ratio (head)", format="percent"),
            "usd_base": st.column_config.NumberColumn("USD (base)", format="%.5f"),
            "usd_head": st.column_config.NumberColumn("USD (head)", format="%.5f"),
            "miss_head": "miss under head",
        },
    )


page.setup("Compare layouts", ":material/compare_arrows:")
page.guarded(body)
