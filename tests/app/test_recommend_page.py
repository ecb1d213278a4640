"""AppTest: the Recommend page draws the lint table and the recommendation, and hands the
recommended layout to Compare and to the step view."""

from __future__ import annotations

from functools import cache

from app_helpers import ROOT, new_app
from streamlit.testing.v1 import AppTest

from assembler.analysis.advice.recommendation import Recommendation, recommend
from assembler.analysis.advice.recorded_plan import recommend_recorded
from assembler.analysis.engine.layouts import builtin_layout
from assembler.sessions.loader import load_session
from ui.html import md

PAGE = "pages/6_Recommend.py"
MIDNIGHT = "coding_agent_midnight"


@cache
def _expected() -> Recommendation:
    """What the library recommends for the sample: the page must show these numbers."""
    session = load_session(ROOT / "sample_sessions" / f"{MIDNIGHT}.yaml")
    return recommend([session], builtin_layout("seed"))


def _money(usd: float) -> str:
    return f"${usd:,.4f}"


def _recommend_page(**query: str) -> AppTest:
    at = new_app(**query)
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_page_shows_the_lint_table_and_the_saving() -> None:
    at = _recommend_page(session=MIDNIGHT)
    assert not at.error
    assert "No error" in at.success[0].value
    table = at.dataframe[0].value
    date = table[table["component"] == "current_date"].iloc[0]
    assert date["across midnight"] == "changes" and date["every minute (clock)"] == ""
    assert table[table["component"] == "environment"].iloc[0]["verdict"] == "stable"
    metrics = {m.label: m.value for m in at.metric}
    rec = _expected()
    assert rec.after_usd < rec.before_usd
    assert metrics["Cost now"] == _money(rec.before_usd)
    assert metrics["Cost recommended"] == _money(rec.after_usd)
    assert metrics["Saving per month (1,000 sessions)"] == f"${rec.saving_per_month(1000):,.2f}"
    codes = [c.value for c in at.code]
    assert codes[0].startswith("name: seed") and codes[1].startswith("name: recommended")
    assert any("Breakpoints" in m.value for m in at.markdown)


def test_open_in_compare_puts_the_recommended_layout_on_the_head_side() -> None:
    at = _recommend_page(session=MIDNIGHT)
    text = at.code[1].value
    at.button(key="rec_compare").click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="base_choice").value == "seed"
    assert at.selectbox(key="head_choice").value == "Edit in the page…"
    assert at.text_area(key="head_text_seed").value.rstrip() == text.rstrip()
    costs = {m.label: m.value for m in at.metric}
    rec = _expected()
    assert costs["Cost, base"] == _money(rec.before_usd)
    assert costs["Cost, head"] == _money(rec.after_usd)


def test_open_in_the_step_view_selects_the_recommended_layout() -> None:
    at = _recommend_page(session=MIDNIGHT)
    at.button(key="rec_step").click().run()
    assert not at.exception, at.exception
    assert at.session_state["sel_layout"] == "Upload a file…"
    assert at.session_state["uploaded_layout"][0] == "recommended.yaml"
    assert not at.error


def test_an_imported_session_gets_a_marker_plan_instead_of_a_layout() -> None:
    """Recorded requests: the plan for their cache markers, priced as the CLI prices it."""
    at = _recommend_page(session="imported_claude_code")
    assert not at.error and not at.exception
    plan = recommend_recorded(
        [load_session(ROOT / "sample_sessions" / "imported_claude_code.yaml")]
    )
    assert any("every call is a recorded request" in c.value for c in at.caption)
    assert at.metric[0].value == f"${plan.recorded.usd:,.4f}"
    assert at.metric[1].value == f"${plan.plan.usd:,.4f}"
    said = [m.value for m in at.markdown]
    assert any(md(plan.lifetime) in m for m in said) and any(md(plan.keep_alive) in m for m in said)


def test_lifetimes_per_breakpoint_are_written_and_compare_bills_them() -> None:
    """On the research sample a lifetime per breakpoint bills less: the page shows the file
    with them, says so under it, and Compare reproduces the recommended cost."""
    session = load_session(ROOT / "sample_sessions" / "research_agent.yaml")
    rec = recommend([session], builtin_layout("seed"))
    at = _recommend_page(session="research_agent")
    text = at.code[1].value
    assert "ttl: 1h" in text and "ttl: 5m" in text
    notes = [c.value for c in at.caption if "A lifetime per breakpoint" in c.value]
    assert len(notes) == 1 and "1h after" in notes[0] and "billed at its own rate" in notes[0]
    at.button(key="rec_compare").click().run()
    assert not at.exception, at.exception
    costs = {m.label: m.value for m in at.metric}
    assert costs["Cost, head"] == _money(rec.after_usd)
