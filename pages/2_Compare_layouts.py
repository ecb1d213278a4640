"""Compare layouts: one session under two layouts, side by side, and where they part."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from assembler.analysis.advice import banner, first_divergence, only_recorded, pairs, side_sentence
from assembler.analysis.engine import (
    BUILTIN_LAYOUTS,
    LayoutError,
    SessionAnalysis,
    full_layout_text,
)
from assembler.limits import clip, one_line
from ui.frame import billing, page
from ui.frame.sidebar import Selection, error, sidebar
from ui.html import literal, md
from ui.state import data, layout_store
from ui.views import charts, step

UPLOAD = "Upload a file…"
EDIT = "Edit in the page…"
#: The pickers are widgets, whose state Streamlit drops once another page runs: a copy
#: under this key brings the edited layouts back when the user returns.
KEPT = "_cmp_kept"


def _picker_keys() -> list[str]:
    return [
        key
        for prefix in ("base", "head")
        for key in (
            f"{prefix}_choice",
            f"{prefix}_start",
            *(f"{prefix}_text_{name}" for name in BUILTIN_LAYOUTS),
        )
    ]


def _restore_pickers() -> None:
    state = st.session_state
    kept = state.get(KEPT, {})
    returning = [p for p in ("base", "head") if f"{p}_choice" not in state]
    for key, value in kept.items():
        if key not in state:
            state[key] = value
    for prefix in returning:
        uploaded = state.get(f"_{prefix}_uploaded")
        if state.get(f"{prefix}_choice") == UPLOAD and uploaded is not None:
            # a file uploader cannot be refilled: the file comes back as edited text
            state[f"{prefix}_choice"] = EDIT
            state[f"{prefix}_start"] = "seed"
            state[f"{prefix}_text_seed"] = uploaded[1]


def _remember_pickers() -> None:
    state = st.session_state
    state[KEPT] = {key: state[key] for key in _picker_keys() if key in state}


def _side(title: str, prefix: str, default: str) -> data.LayoutChoice | None:
    """A layout picker: built-in, uploaded, or edited in a text area."""
    options = [*BUILTIN_LAYOUTS, UPLOAD, EDIT]
    _from_url(prefix, default)
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
                st.session_state.pop(f"_{prefix}_uploaded", None)
                st.caption("Upload a layout YAML file.")
                return None
            text = up.getvalue().decode("utf-8")
            st.session_state[f"_{prefix}_uploaded"] = (up.name, text)
            return layout_store.keep(text, up.name)
        if choice == EDIT:
            start = st.selectbox("Start from", BUILTIN_LAYOUTS, key=f"{prefix}_start")
            text_key = f"{prefix}_text_{start}"
            if text_key not in st.session_state:
                own = data.builtin_layout_text(start)
                st.session_state[text_key] = full_layout_text(data.layout_choice(start).layout, own)
            text = st.text_area(
                "Layout YAML",
                key=text_key,
                height=420,
                help="Every component in wire order with its layer, order, placement and enabled; "
                "then the breakpoints and the lifetime. Move a component by editing its layer "
                "or order; the comparison reruns when you leave the field (Ctrl+Enter).",
            )
            return layout_store.keep(text, f"edited {prefix} layout")
        return data.layout_choice(choice)
    except LayoutError as exc:
        error(str(exc))
    except UnicodeDecodeError as exc:
        st.error(f"the layout file is not UTF-8 text (byte {exc.start})", icon=":material/error:")
    return None


def _from_url(prefix: str, default: str) -> None:
    """The URL's ``base``/``head`` when it changed: a built-in name, or ``text:<hash>`` of a
    layout this server keeps (brought back as edited text); anything else is named in a warning."""
    qp = st.query_params.get(prefix)
    if qp is None or st.session_state.get(f"_qp_{prefix}") == qp:
        return
    st.session_state[f"_qp_{prefix}"] = qp
    if qp in BUILTIN_LAYOUTS:
        st.session_state[f"{prefix}_choice"] = qp
    elif (kept := layout_store.find(qp)) is not None:
        st.session_state[f"{prefix}_choice"] = EDIT
        st.session_state[f"{prefix}_start"] = "seed"
        st.session_state[f"{prefix}_text_seed"] = kept[1]
    else:
        shown = st.session_state.get(f"{prefix}_choice", default)
        expected = (
            "a layout this server keeps (upload it again)"
            if qp.startswith(layout_store.PREFIX)
            else f"a built-in layout ({', '.join(BUILTIN_LAYOUTS)})"
        )
        st.warning(
            f"The link's {literal(one_line(f'{prefix}={clip(qp)}'))} is not {md(expected)}: "
            f"showing {md(shown)}.",
            icon=":material/link_off:",
        )


def _name(choice: data.LayoutChoice, prefix: str) -> str:
    """A layout's name in a link label: built-in, the uploaded file's, or the edited one's."""
    if choice.key in BUILTIN_LAYOUTS:
        return choice.key
    if st.session_state.get(f"{prefix}_choice") == EDIT:
        return f"{choice.layout.name}, edited here"
    return choice.label


def _chart(
    frame: pd.DataFrame, column: str, title: str, y: str, base: str, head: str, split: int | None
) -> go.Figure:
    fig = go.Figure()
    full = len(frame)
    frame = charts.thin(frame, [f"{column}_base", f"{column}_head"])  # extremes kept
    if len(frame) < full:
        title += f" ({len(frame):,} of {full:,} steps: extremes kept)"
    # thinned: SVG, as the Timeline's (WebGL traces started a software WebGL context here)
    trace = charts.THINNED_TRACE
    for side, name, colour in (("base", base, "#3b5bdb"), ("head", head, "#e8590c")):
        fig.add_trace(
            trace(
                x=frame["step"],
                y=frame[f"{column}_{side}"],
                name=charts.label(f"{side}: {name}"),
                mode="lines+markers" if len(frame) <= 200 else "lines",
                line={"color": colour},
            )
        )
    if split is not None:
        fig.add_vline(x=split, line_width=2, line_dash="dot", line_color="#c92a2a")
        fig.add_annotation(
            x=split, y=1, yref="paper", text=f"diverges at {split}", showarrow=False, yshift=8
        )
    return charts.layout(fig, title, y)


def body() -> None:
    sel: Selection | None = sidebar()
    if sel is None:
        return
    st.title(":material/compare_arrows: Compare layouts", anchor=False)
    st.caption(
        f"{md(sel.session.title)} · {md(sel.provider_label)}. Each layout runs against its own cache; "
        "the first step where the cache numbers differ, and the component behind it, are named."
    )
    _restore_pickers()
    c1, c2 = st.columns(2, gap="medium")
    with c1:
        base = _side("Base layout", "base", "seed")
    with c2:
        head = _side("Head layout", "head", "situation-first")
    _remember_pickers()
    params = {**sel.query()}
    for side, choice in (("base", base), ("head", head)):
        # a side without a usable layout (an invalid edit) drops the one its link named
        if choice is not None and (
            choice.key in BUILTIN_LAYOUTS or layout_store.find(layout_store.link(choice))
        ):
            params[side] = layout_store.link(choice)
    step.write_query(None, params)
    for side in ("base", "head"):
        st.session_state[f"_qp_{side}"] = params.get(side)
    if base is None or head is None:
        return

    cmp = data.comparison(
        sel.session_key, sel.session, base, head, sel.provider, sel.model, sel.ttl
    )
    b, h = cmp.base, cmp.head
    billing.strip(
        billing.costs(
            (sel.session_key, base.key, sel.provider, sel.model, sel.ttl), b, sel.recorded
        )
    )
    steps = pairs(b, h)
    first = first_divergence(steps)
    if first is None and only_recorded(sel.session):
        st.info(
            "The two layouts give the same numbers at every step: every call of this session"
            " is a recorded request, sent as recorded, so a layout changes nothing in it.",
            icon=":material/info:",
        )
    elif first is None:
        st.success(
            "The two layouts give the same read, write, uncached tokens and cost at every step.",
            icon=":material/check_circle:",
        )
    else:
        st.warning(
            md(banner(first, b.steps[first.step - 1], h.steps[first.step - 1], (b.ttl, h.ttl))),
            icon=":material/call_split:",
        )
        st.caption(md(side_sentence("Base:", first.base)))
        st.caption(md(side_sentence("Head:", first.head)))
        for side, choice in (("base", base), ("head", head)):
            st.page_link(
                "app.py",
                label=f"Open step {first.step} under the {side} layout ({_name(choice, side)})",
                icon=":material/stacks:",
                query_params={
                    "step": str(first.step),
                    "session": sel.session_name,
                    "layout": layout_store.link(choice),
                },
            )
    _money(b, h)
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
            "step": [p.step for p in steps],
            "function": [s.function for s in b.steps[: len(steps)]],
            "read_base": [p.base.read for p in steps],
            "write_base": [p.base.write for p in steps],
            "uncached_base": [p.base.uncached for p in steps],
            "read_head": [p.head.read for p in steps],
            "write_head": [p.head.write for p in steps],
            "uncached_head": [p.head.uncached for p in steps],
            "hit_ratio_base": [s.hit_ratio for s in b.steps[: len(steps)]],
            "hit_ratio_head": [s.hit_ratio for s in h.steps[: len(steps)]],
            "usd_base": [p.base.usd for p in steps],
            "usd_head": [p.head.usd for p in steps],
            "usd_diff": [p.usd_difference for p in steps],
            "miss_base": [p.base.miss_component or "" for p in steps],
            "miss_head": [p.head.miss_component or "" for p in steps],
        }
    )
    split = first.step if first else None
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
            "read_base": "read (base)",
            "write_base": "written (base)",
            "uncached_base": "uncached (base)",
            "read_head": "read (head)",
            "write_head": "written (head)",
            "uncached_head": "uncached (head)",
            "hit_ratio_base": st.column_config.NumberColumn("hit ratio (base)", format="percent"),
            "hit_ratio_head": st.column_config.NumberColumn("hit ratio (head)", format="percent"),
            "usd_base": st.column_config.NumberColumn("USD (base)", format="%.5f"),
            "usd_head": st.column_config.NumberColumn("USD (head)", format="%.5f"),
            "usd_diff": st.column_config.NumberColumn("USD head − base", format="%+.6f"),
            "miss_base": "miss under base",
            "miss_head": "miss under head",
        },
    )


def _money(b: SessionAnalysis, h: SessionAnalysis) -> None:
    """The change in dollars per session and per month at the user's session count."""
    st.markdown("#### :material/payments: In money")
    c1, c2 = st.columns([1, 3], vertical_alignment="bottom")
    per_day = c1.number_input(
        "Sessions per day", min_value=0, max_value=10_000_000, value=1, key="cmp_sessions_per_day"
    )
    diff = h.totals["usd"] - b.totals["usd"]
    month = diff * per_day * 30
    c2.markdown(
        f"Head − base: **{_signed(diff)} per session**, **{_signed(month)} per month** "
        f"at {per_day:,} session{'s' if per_day != 1 else ''} a day (30 days)."
    )
    if b.steps and h.steps:
        same = (b.steps[0].usd, b.steps[0].write) == (h.steps[0].usd, h.steps[0].write)
        sides = (("both layouts", b),) if same else (("the base layout", b), ("the head layout", h))
        for name, a in sides:
            s1 = a.steps[0]
            if s1.usd > s1.usd_without_cache:
                st.caption(
                    f"Step 1 under {name} costs \\${s1.usd:,.5f} with caching and "
                    f"\\${s1.usd_without_cache:,.5f} without: writing {s1.write:,} tokens to the "
                    "cache is billed above the plain input price (the write premium); later "
                    "steps that read them pay it back."
                )


def _signed(usd: float) -> str:
    sign = "+" if usd >= 0 else "−"
    return f"{sign}\\${abs(usd):,.4f}" if abs(usd) < 1 else f"{sign}\\${abs(usd):,.2f}"


page.setup("Compare layouts", ":material/compare_arrows:")
page.guarded(body)
