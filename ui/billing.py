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

from assembler.analysis.bill import billed_cost
from assembler.analysis.engine import SessionAnalysis
from assembler.cache.prices.pricing import PricingError

if TYPE_CHECKING:
    from ui.sidebar import Selection


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
        help="The cache simulator's cost of the session.",
    )
    cols[2].metric("Without caching, whole session", money(c.without_cache))
    if c.note:
        st.caption(c.note)


def show(sel: Selection, a: SessionAnalysis) -> Costs:
    """The strip for the sidebar's choice (nothing for a session without measured usage)."""
    key = (sel.session_key, sel.layout.key, sel.provider, sel.model, sel.ttl)
    c = costs(key, a, sel.recorded)
    strip(c)
    return c
