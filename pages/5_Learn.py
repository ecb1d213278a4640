"""Learn: the design in four steps of the bundled research session, each one click from the step view.

The prose explains the design; every sentence about what the cache did is computed from the
analysis of that step, under each lifetime it is shown for (assembler.analysis.app.walkthrough).
"""

from __future__ import annotations

import streamlit as st

from assembler.analysis.app import LIFETIMES, POINTS, SESSION, date_lines, learn_points
from assembler.analysis.engine import SessionAnalysis
from ui.frame import page, sidebar
from ui.state import data

#: The Learn text is about the recorded prices and each layout's own lifetime: its links say so,
#: whatever the sidebar holds.
AS_WRITTEN = {"provider": sidebar.RECORDED_QUERY, "ttl": sidebar.LAYOUT_QUERY}

MIDNIGHT = "coding_agent_midnight"
#: The label of the midnight session's first call after midnight (as date_lines reads it).
AFTER_MIDNIGHT = "after-midnight"


def _analyses(name: str, lifetimes: tuple[tuple[str, str], ...]) -> dict[str, SessionAnalysis]:
    key, session = data.parse_session_bytes(data.bundled_bytes(name), name)
    return {
        ttl: data.analysis(key, session, data.layout_choice(layout), None, None, None)
        for ttl, layout in lifetimes
    }


def body() -> None:
    # No sidebar here, but the choice made on the other pages stays in the URL.
    sidebar.keep_in_url()
    st.title(":material/school: Learn the design", anchor=False)
    st.markdown(
        "Four points of the bundled research session walk through the design: three layers "
        "ordered by how long their content lives, a call tree that releases finished work, "
        "and a cached prefix whose life depends on the time between calls."
    )
    if SESSION not in data.bundled_sessions():
        st.info("The bundled research session is not installed.")
        return
    analyses = _analyses(SESSION, LIFETIMES)
    steps = {s.label: s.step for s in next(iter(analyses.values())).steps if s.label}
    for label, title, lines in learn_points(analyses):
        with st.container(border=True):
            st.markdown(f"#### {title} (`{label}`)")
            for line in lines:
                st.markdown(line)
            n = steps[label]
            for ttl, layout in LIFETIMES if label == POINTS[-1].label else LIFETIMES[:1]:
                st.page_link(
                    "app.py",
                    label=f"Open step {n} ({label}) in the step view, lifetime {ttl}",
                    icon=":material/arrow_forward:",
                    query_params={"step": str(n), "session": SESSION, "layout": layout}
                    | AS_WRITTEN,
                )
    with st.container(border=True):
        st.markdown("#### :material/calendar_today: " + "The date")
        if MIDNIGHT not in data.bundled_sessions():
            st.markdown(date_lines(None, MIDNIGHT)[0])
            return
        midnight = _analyses(MIDNIGHT, LIFETIMES[:1])["5m"]
        for line in date_lines(midnight, MIDNIGHT):
            st.markdown(line)
        c1, c2 = st.columns(2)
        c1.page_link(
            "pages/2_Compare_layouts.py",
            label=f"Compare seed with date-in-l0 on {MIDNIGHT}",
            icon=":material/compare_arrows:",
            query_params={"base": "seed", "head": "date-in-l0", "session": MIDNIGHT} | AS_WRITTEN,
        )
        after = next((s.step for s in midnight.steps if s.label == AFTER_MIDNIGHT), None)
        if after is not None:
            c2.page_link(
                "app.py",
                label=f"Open step {after} ({AFTER_MIDNIGHT}) under date-in-l0",
                icon=":material/stacks:",
                query_params={"step": str(after), "session": MIDNIGHT, "layout": "date-in-l0"}
                | AS_WRITTEN,
            )


page.setup("Learn", ":material/school:")
page.guarded(body)
