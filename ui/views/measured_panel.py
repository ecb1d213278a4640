"""Measured beside simulated for one step: read / write / uncached, the class, the reason."""

from __future__ import annotations

import streamlit as st

from assembler.analysis.bill import MeasuredComparison, compare_measured
from assembler.analysis.engine import DiagnosticCheck, SessionAnalysis
from ui.html import esc


@st.cache_resource(show_spinner=False, max_entries=12)
def _by_step(key: tuple[object, ...], _a: SessionAnalysis) -> dict[int, MeasuredComparison]:
    return {c.step: c for c in compare_measured(_a)}


def comparisons(key: tuple[object, ...], a: SessionAnalysis) -> dict[int, MeasuredComparison]:
    """Each measured step's comparison, computed once per analysis."""
    return _by_step(key, a)


def table(c: MeasuredComparison) -> str:
    """Two rows (simulated, measured) and the difference, as escaped HTML."""
    rows = []
    for label, side, cls in (
        ("simulated", c.simulated, c.simulated_class),
        ("measured", c.measured, c.measured_class),
    ):
        rows.append(
            f"<tr><th>{label}</th><td>{side.read:,}</td><td>{side.write:,}</td>"
            f"<td>{side.uncached:,}</td><td>{esc(cls)}</td></tr>"
        )
    d = (
        c.measured.read - c.simulated.read,
        c.measured.write - c.simulated.write,
        c.measured.uncached - c.simulated.uncached,
    )
    rows.append(
        "<tr class='cai-diff'><th>measured − simulated</th>"
        + "".join(f"<td>{v:+,}</td>" for v in d)
        + "<td></td></tr>"
    )
    return (
        "<table class='cai-measured'><thead><tr><th></th><th>read</th><th>written</th>"
        "<th>uncached</th><th>class</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


STYLE = """<style>
.cai-measured{border-collapse:collapse;font-size:.85rem;font-variant-numeric:tabular-nums;margin:.2rem 0 .4rem}
.cai-measured th,.cai-measured td{padding:.15rem .6rem;border-bottom:1px solid #eef0f5;text-align:right}
.cai-measured th:first-child{text-align:left;font-weight:600}
.cai-measured thead th{color:#666;font-size:.76rem;text-transform:uppercase}
.cai-measured .cai-diff td,.cai-measured .cai-diff th{color:#666;font-weight:400}
</style>"""


def panel(c: MeasuredComparison) -> None:
    """The comparison of one step, its agreement and (when they differ) the reason."""
    st.markdown("#### :material/fact_check: Measured beside simulated")
    st.html(STYLE + table(c))
    if c.agree:
        st.caption(f":green-badge[agree] {esc_md(c.sentence)}")
    else:
        reason = c.reason or "unexplained"  # one of measured.py's fixed reasons, not user text
        st.caption(f":orange-badge[differ · {reason}] {esc_md(c.sentence)}")


def provider_verdict(d: DiagnosticCheck) -> None:
    """The provider's own diagnostic beside our cause, and whether they agree."""
    if d.agrees is None:
        badge = ":gray-badge[provider: no verdict]"
    elif d.agrees:
        badge = ":green-badge[provider agrees]"
    else:
        badge = ":orange-badge[provider differs]"
    st.caption(f"{badge} {esc_md(d.sentence)}")


def esc_md(text: str) -> str:
    from ui.html import md

    return md(text)
