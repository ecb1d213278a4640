"""Learn: the design in four steps of the bundled research session, each one click from the step view."""

from __future__ import annotations

import streamlit as st

from ui import data, page

SESSION = "research_agent"

WALK = (
    (
        "①",
        "Everything in its layer",
        "The first walkthrough point shows every component. **L0** (blue) is what stays the same "
        "for the whole session: tools, identity, rules, skills, global memory, environment. "
        "**L1** (green) is the project and the session: project files and memory, the user "
        "profile, the date, and the call tree that grows by appending. **L2** (orange) is this "
        "call only: the situation, the input and the output contract. The wire puts them in that "
        "order, so everything that changes least sits at the front, where a prefix cache can keep it.",
    ),
    (
        "②",
        "The tree grows by appending",
        "One level deeper, `seed_surveys` runs inside `literature`. L0 is byte-for-byte the same "
        "and is read from the cache; the call tree only gained lines at its end, so the cached "
        "prefix reaches into L1. Only the tail of the tree and the L2 blocks are written or "
        "uncached. Breakpoints ①–④ sit after the tools, after L0, after the L1 project part and "
        "after the call tree: each is a place a cache entry can end.",
    ),
    (
        "③",
        "io release",
        "Back in the main loop, `literature` has finished. Its subtree is *released*: the "
        "finished children collapse to one line each (`{function: …, status: done}`) and "
        "`literature` keeps only its key output. The tree gets shorter, so the call-tree block "
        "changes and the cache is rewritten from there — but everything before it, tools, L0 "
        "and the L1 project part, is still read. Context length follows call depth, not step count.",
    ),
    (
        "④",
        "Deep recursion, still a stable prefix",
        "Round two goes five levels down, to `check_novelty` inside `generate_ideas` inside "
        "`idea`. The running path is shown in full; finished work stays collapsed. The prefix "
        "up to the call tree is unchanged, so the cost of this deep call is mostly the new tail.",
    ),
)

DATE = (
    "**Why the date sits at the tail of L1.** A date changes once a day. Placed in L0, the "
    "first call after midnight would change a block near the very front of the prompt and "
    "invalidate everything after it — tools aside, the whole cached prefix. At the tail of L1, "
    "last before the call tree, the rollover costs only the call tree behind it. The "
    "`date-in-l0` layout keeps the old placement so you can see the difference: compare it with "
    "`seed` on a session that crosses midnight."
)


def body() -> None:
    st.title(":material/school: Learn the design", anchor=False)
    st.markdown(
        "Four points of the bundled research session walk through the design: three layers "
        "ordered by how long their content lives, a call tree that releases finished work, "
        "and a cached prefix that holds while the agent goes deep."
    )
    available = SESSION in data.bundled_sessions()
    steps: dict[str, int] = {}
    if available:
        _, session = data.parse_session_bytes(data.bundled_bytes(SESSION), SESSION)
        from assembler.sessions.replay import replay

        steps = {s.label: s.number for s in replay(session) if s.label}
    for mark, title, text in WALK:
        with st.container(border=True):
            st.markdown(f"#### {mark} {title}")
            st.markdown(text)
            n = steps.get(mark)
            if n is not None:
                st.page_link(
                    "app.py",
                    label=f"Open step {n} ({mark}) in the step view",
                    icon=":material/arrow_forward:",
                    query_params={"step": str(n), "session": SESSION, "layout": "seed"},
                )
    with st.container(border=True):
        st.markdown("#### :material/calendar_today: " + "The date")
        st.markdown(DATE)
        c1, c2 = st.columns(2)
        c1.page_link(
            "pages/2_Compare_layouts.py",
            label="Compare seed with date-in-l0",
            icon=":material/compare_arrows:",
            query_params={"base": "seed", "head": "date-in-l0"}
            | (
                {"session": "coding_agent_midnight"}
                if "coding_agent_midnight" in data.bundled_sessions()
                else {}
            ),
        )
        c2.page_link(
            "app.py",
            label="Step view under date-in-l0",
            icon=":material/stacks:",
            query_params={"step": "1", "layout": "date-in-l0"},
        )


page.setup("Learn", ":material/school:")
page.guarded(body)
