"""Billed beside simulated beside no-cache: the one place the app prices measured usage.

An imported session carries what the provider reported per request; priced by the
library (``assembler.analysis.bill.billed_cost``: the request's own platform and
model, at the price in force when it was sent) it is the bill. Every page calls
:func:`costs` and :func:`strip`, so the figures are computed once per analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import streamlit as st

from assembler.analysis.bill import (
    BillFirst,
    bill_first,
    billed_cost,
    divergence_clause,
    scale_note,
    size_scales,
    sizes_sentence,
    split_sentence,
)
from assembler.analysis.engine import SessionAnalysis
from assembler.cache.prices.pricing import PricingError
from ui.html import md

if TYPE_CHECKING:
    from ui.frame.sidebar import Selection


@dataclass(frozen=True)
class Costs:
    """A session's cost three ways (USD); ``billed`` is None without measured usage."""

    simulated: float
    without_cache: float
    billed: float | None
    billed_steps: int  # steps that carry measured usage
    per_step_billed: tuple[float | None, ...]
    note: str = ""


def compute(a: SessionAnalysis, recorded_provider: bool) -> Costs:
    simulated = sum(s.usd for s in a.steps)
    plain = sum(s.usd_without_cache for s in a.steps)
    measured = [s for s in a.steps if s.measured is not None]
    if not measured:
        return Costs(simulated, plain, None, 0, tuple(None for _ in a.steps))
    if not recorded_provider:
        return Costs(
            simulated,
            plain,
            None,
            len(measured),
            tuple(None for _ in a.steps),
            "the billed cost is shown under the recorded provider (Pricing: as recorded)",
        )
    try:  # each request priced by its platform, at the price in force when it was sent
        per = [billed_cost(s) for s in a.steps]
    except PricingError as exc:
        return Costs(simulated, plain, None, len(measured), tuple(None for _ in a.steps), str(exc))
    return Costs(simulated, plain, sum(p for p in per if p is not None), len(measured), tuple(per))


@st.cache_resource(show_spinner=False, max_entries=12)
def _costs(key: tuple[object, ...], recorded_provider: bool, _a: SessionAnalysis) -> Costs:
    return compute(_a, recorded_provider)


def costs(key: tuple[object, ...], a: SessionAnalysis, recorded_provider: bool) -> Costs:
    """:func:`compute`, once per analysis (``key`` names the analysis's inputs)."""
    return _costs(key, recorded_provider, a)


def money(usd: float) -> str:
    return f"${usd:,.4f}" if abs(usd) < 1 else f"${usd:,.2f}"


def strip(c: Costs) -> None:
    """Billed / simulated / without caching, for a session with measured usage."""
    if c.billed_steps == 0 or c.billed_steps < len(c.per_step_billed):
        return  # a bill covers an imported session, not a sample with one measured step
    # whole-session figures: labelled so, beside a step's own cost on the step view
    cols = st.columns(3)
    total = len(c.per_step_billed)
    label = "Billed, whole session"
    if c.billed is not None:
        cols[0].metric(
            label,
            money(c.billed),
            help=f"What the provider reported for all {total:,} requests, priced per request "
            "at its own model, 5-minute and 1-hour writes apart.",
        )
    else:
        cols[0].metric(label, "—", help=c.note)
    cols[1].metric(
        "Simulated, whole session",
        money(c.simulated),
        delta=_off(c.simulated, c.billed),
        delta_color="off",
        delta_arrow="off",
        help="The cache simulator's cost of the session.",
    )
    cols[2].metric("Without caching, whole session", money(c.without_cache))
    if c.note:
        st.caption(c.note)


def _off(simulated: float, billed: float | None) -> str | None:
    """``-12.4% from the bill``; None without a bill to measure from."""
    return f"{simulated / billed - 1:+.1%} from the bill" if billed else None


def show(sel: Selection, a: SessionAnalysis) -> Costs:
    """The strip for the sidebar's choice (nothing for a session without measured usage)."""
    key = (sel.session_key, sel.layout.key, sel.provider, sel.model, sel.ttl)
    c = costs(key, a, sel.recorded)
    strip(c)
    return c


# --- the bill first: the Savings page ---------------------------------------------------


@st.cache_resource(show_spinner=False, max_entries=12)
def _bill_first(key: tuple[object, ...], _a: SessionAnalysis) -> BillFirst | str | None:
    from ui.views import measured_panel

    try:  # the comparisons the step view already made, in step order
        return bill_first(_a, list(measured_panel.comparisons(key, _a).values()))
    except PricingError as exc:
        return str(exc)


def billed_first(sel: Selection, a: SessionAnalysis) -> BillFirst | str | None:
    """The bill and the simulation beside it, once per analysis: None without a bill (or at
    another provider or model than the recorded one), a message when it cannot be priced."""
    if not sel.recorded:
        return None
    return _bill_first((sel.session_key, sel.layout.key, sel.provider, sel.model, sel.ttl), a)


def scale_caption(sel: Selection, a: SessionAnalysis) -> str:
    """`` · sizes scaled to the bill: ×1.25`` for a caption, escaped; "" when none were."""
    note = scale_note(size_scales(sel.session, a, sel.provider, sel.model))
    return f" · {md(note)}" if note else ""


def _covered(b: BillFirst) -> str:
    if b.billed_steps == b.steps:
        return f"all {b.steps:,} steps"
    return f"{b.billed_steps:,} of {b.steps:,} steps"


def bill_section(sel: Selection, b: BillFirst) -> None:
    """Billed, simulated beside it with its difference, and, above 5 %, where it first read
    differently, linked to that step."""
    cols = st.columns(3)
    cols[0].metric(
        "Billed",
        money(b.billed),
        help=f"The provider's usage for {_covered(b)}, priced per request at its own model, "
        "5-minute and 1-hour writes apart.",
    )
    cols[1].metric(
        "Simulated",
        money(b.simulated),
        delta=_off(b.simulated, b.billed),
        delta_color="off",
        delta_arrow="off",
        help=f"The cache simulator's cost of the same steps ({_covered(b)}).",
    )
    cols[2].metric(
        "Without caching",
        money(b.billed_without_cache),
        help=f"The billed tokens of the same steps ({_covered(b)}) priced with nothing read "
        "from or written to a cache.",
    )
    d = b.difference
    if d is None:
        return
    if not b.far:
        st.caption("The simulation is within 5% of the bill.")
        return
    c = b.divergence
    where = "above" if d > 0 else "below"
    if c is not None:
        st.warning(
            f"The simulation is {abs(d):.1%} {where} the bill. It first read differently from "
            f"the bill at step {c.step}: {md(divergence_clause(c))}",
            icon=":material/call_split:",
        )
        st.page_link(
            "app.py",
            label=f"Open step {c.step} in the step view",
            icon=":material/stacks:",
            query_params={"step": str(c.step)} | sel.query(),
        )
    else:
        st.warning(
            f"The simulation is {abs(d):.1%} {where} the bill.", icon=":material/call_split:"
        )
    st.caption(f"{_sentence(split_sentence(b))}  \n{_sentence(sizes_sentence(b))}")


def _sentence(text: str) -> str:
    """A clause as a sentence, escaped: capital first letter, full stop."""
    return md(text[:1].upper() + text[1:] + ".")
