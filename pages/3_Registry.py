"""Registry: every registered component, what it did at the current step, and how to add one."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from assembler.design.components import default_registry
from ui.frame import billing, page
from ui.frame.sidebar import sidebar
from ui.views import step

EXAMPLE = '''\
from assembler import Layer, default_registry

registry = default_registry()


# L0 stable · L1 project/session · L2 this call;
# order sorts within the layer, more stable first.
@registry.component(
    "open_pull_requests",
    Layer.L1,
    order=45,
    condition=lambda ctx: ctx.profile.environment.git_repo,
    condition_text="in a git repository",
    template="<open_pull_requests>one line per PR</...>",
)
def open_pull_requests(ctx) -> str | None:
    """Open pull requests of the current repository."""
    prs = fetch_open_prs(ctx.profile.environment.cwd)
    if not prs:
        return None  # no block this time
    lines = "\\n".join(f"- #{p.number} {p.title}" for p in prs)
    return f"<open_pull_requests>\\n{lines}\\n</open_pull_requests>"
'''


def body() -> None:
    sel = sidebar()
    if sel is None:
        return
    a = sel.analysis()
    total = len(a.steps)
    n = step.current(max(1, total))
    step.write_query(n, sel.query())
    s = a.steps[n - 1] if total else None
    blocks = {b.name: b for b in s.blocks} if s else {}

    st.title(":material/widgets: Registry", anchor=False)
    st.caption(
        f"The components registered under layout **{sel.layout.label}**, in wire order. "
        "A feature adds context by registering a component; the assembler never names one."
    )
    billing.show(sel, a)
    st.subheader(f"Step {n} / {total}", anchor=False)
    if total > 1:
        step.controls(n, total)  # what each component did, step by step
    registry = sel.layout.layout.apply(default_registry())
    rows = []
    for c in registry:
        b = blocks.get(c.name)
        rows.append(
            {
                "component": c.name,
                "layer": c.layer.value,
                "order": c.order,
                "placement": c.where.value,
                "condition": c.condition_text,
                "cacheable": c.cacheable,
                "emitted now": b is not None,
                "tokens now": b.tokens if b else 0,
                "cache now": b.cache if b else "",
            }
        )
    frame = pd.DataFrame(rows)
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        height=min(38 + 35 * len(frame), 1000),
        column_config={
            "tokens now": st.column_config.NumberColumn(format="localized"),
            "emitted now": st.column_config.CheckboxColumn(),
            "cacheable": st.column_config.CheckboxColumn(),
        },
    )
    left, right = st.columns(2, gap="medium")
    with left:
        st.markdown("#### :material/description: Template and text")
        names = [c.name for c in registry]
        if st.session_state.get("registry_component") not in names:
            st.session_state["registry_component"] = (
                "call_tree" if "call_tree" in names else names[0]
            )
        chosen = st.selectbox("Component", names, key="registry_component")
        comp = registry.get(chosen)
        if comp.description:
            st.caption(comp.description)
        st.markdown("**Template** (what the build produces; never sent to a model)")
        st.code(comp.template or "(no template given)", language=None, wrap_lines=True)
        b = blocks.get(chosen)
        st.markdown(f"**Text at step {n}**")
        if b is not None:
            st.code(b.text, language=None, wrap_lines=True, height=360)
        else:
            st.caption("Not emitted at this step (condition false or empty).")
    with right:
        st.markdown("#### :material/add_box: Registering a new component")
        st.code(EXAMPLE, language="python")
        st.caption(
            "Registration validates the name, layer, order and placement at once; a "
            "component whose build raises is shown on its own record, the others still assemble."
        )


page.setup("Registry", ":material/widgets:")
page.guarded(body)
