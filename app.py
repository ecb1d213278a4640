"""Context Assembly Inspector — the step view (home page).

Run: .venv/bin/python -m streamlit run app.py
Deep link: /?step=N&session=NAME&layout=NAME
"""

from __future__ import annotations

import streamlit as st

from assembler.analysis.app import header_sentence
from ui import html
from ui.frame import billing, page
from ui.frame.sidebar import Selection, sidebar
from ui.views import measured_panel, step, step_blocks

#: Blocks that hold the call tree: the seed's one block, or split-tree's two.
TREE_BLOCKS = ("call_tree", "call_structure", "call_io")


def _money(usd: float) -> str:
    return f"${usd:,.4f}" if usd < 1 else f"${usd:,.2f}"


def _lifetime(sel: Selection, ttl: str) -> str:
    """``ttl 5m``; ``ttl per breakpoint: 1h, 5m`` when breakpoints carry their own."""
    layout = sel.layout.layout
    if not layout.breakpoint_ttl:
        return f"ttl {ttl}"
    return f"ttl per breakpoint: {', '.join(layout.lifetimes(ttl))}"


def body() -> None:
    sel = sidebar()
    if sel is None:
        return
    a = sel.analysis()
    total = len(a.steps)
    n = step.follow(total, sel.query(), "This session has no LLM calls: there is no step to show.")
    if n is None:
        return
    s = a.steps[n - 1]
    approx = bool(a.approximate_tokens)

    head, meta = st.columns([3, 2], vertical_alignment="bottom")
    with head:
        st.caption(
            f"{html.md(sel.session.title)} · layout **{html.md(sel.layout.label)}** · "
            f"{html.md(a.provider)} · {html.md(a.model)} · {html.md(_lifetime(sel, a.ttl))}"
            + billing.scale_caption(sel, a)
        )
        st.subheader(f"Step {n} / {total}", anchor=False)
    with meta:
        label = f"{html.md(s.label)} · " if s.label else ""
        st.markdown(
            f"{label}**{html.md(s.function)}** · depth {s.depth} · {s.timestamp:%Y-%m-%d %H:%M:%S %Z}",
            help="Call path: " + " → ".join(html.md(p) for p in s.call_path),
        )
        if approx:
            st.caption(
                ":orange-badge[approximate] token counts: this provider's tokenizer is not public, "
                "o200k_base stands in for it."
            )
    step.controls(n, total)

    tok = "tokens ≈" if approx else "tokens"
    # two rows of three: every figure stays whole in a 1,000-px window
    m = [*st.columns(3), *st.columns(3)]
    m[0].metric(f"Total {tok}", f"{s.tokens.get('total', 0):,}")
    m[1].metric(f"Cached (read) {tok}", f"{s.read:,}")
    m[2].metric(f"Written to cache {tok}", f"{s.write:,}")
    m[3].metric("Hit ratio", f"{s.hit_ratio:.1%}")
    priced = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in s.price_context)
    m[4].metric(
        "Cost of this step",
        _money(s.usd),
        help=html.md(f"Priced in the recorded {priced}.") if priced else None,
    )
    m[5].metric(
        "Without caching",
        _money(s.usd_without_cache),
        delta=f"{_money(s.usd_without_cache - s.usd)} saved"
        if s.usd_without_cache > s.usd
        else None,
        delta_color="green",
        delta_arrow="off",
    )
    verdict = html.md(header_sentence(s, first=n == 1))
    if s.miss is not None:
        st.warning(verdict, icon=":material/link_off:")
    elif n > 1:
        st.success(verdict, icon=":material/link:")
    else:
        st.info(verdict, icon=":material/info:")
    for warning in s.warnings:  # a failed component or a request the provider rejects
        st.warning(html.literal(warning), icon=":material/error:")

    key = (sel.session_key, sel.layout.key, sel.provider, sel.model, sel.ttl)
    measured = measured_panel.comparisons(key, a).get(n)
    if measured is not None or s.diagnostic is not None:
        with st.container(border=True):
            if measured is not None:
                billing.show(sel, a)
                measured_panel.panel(measured)
            if s.diagnostic is not None:
                measured_panel.provider_verdict(s.diagnostic)

    left, right = st.container(key="step_columns").columns([3, 2], gap="medium")
    with left:
        st.markdown("#### :material/stacks: Assembled context, in wire order")
        step_blocks.stack(sel.session_key, sel.session, s, approx)
        changes: dict[str, list[str]] = {}
        for b in s.blocks:
            changes.setdefault(b.change, []).append(b.name)
        if n > 1:
            parts = [
                f"**{kind}**: {', '.join(html.md(c) for c in changes[kind])}"
                for kind in ("new", "changed", "released")
                if changes.get(kind)
            ]
            st.caption(
                "Since step "
                + str(n - 1)
                + ": "
                + ("; ".join(parts) if parts else "no block changed")
                + f"; {len(changes.get('unchanged', []))} unchanged."
            )
        detail = st.expander(
            "Block text and what changed",
            icon=":material/difference:",
            key=step_blocks.DETAIL_OPEN,
            on_change="rerun",
        )
        with detail:
            # Drawn only while open: a closed expander's content would still be built and sent
            # on every step, and a long call tree's diff is seconds at 20,000 steps.
            if detail.open:
                step_blocks.block_detail(a, s)
        with st.expander("The request as sent", icon=":material/data_object:"):
            step_blocks.wire_view(sel.session, sel.layout.layout, s, a.provider, sel.ttl, sel.model)
    with right:
        by_name = {b.name: b for b in s.blocks}
        st.markdown("#### :material/account_tree: Call tree")
        trees = [by_name[n] for n in TREE_BLOCKS if n in by_name]
        for tree in trees:
            if len(trees) > 1:
                st.caption(f"block `{tree.name}`")
            st.html(html.call_tree(tree.text))
        if trees:
            st.caption(
                "Highlighted: the running node. Struck through: finished subtrees whose io was released."
            )
        else:
            st.caption("No call tree at this step under this layout.")
        st.markdown("#### :material/my_location: Situation")
        situation = by_name.get("situation")
        if situation is not None:
            st.code(situation.text, language=None, wrap_lines=True)
        else:
            st.caption("No situation block at this step under this layout.")


page.setup("Step view", ":material/stacks:")
page.guarded(body)
