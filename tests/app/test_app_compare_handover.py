"""AppTest: Recommend hands the current layout, whatever it is, to Compare; Compare keeps an
edited layout across page switches and says why the first divergence costs more; the
sidebar names a layout handed over by a page; lint and step-view wording."""

from __future__ import annotations

from app_helpers import ROOT, new_app
from streamlit.testing.v1 import AppTest

from assembler.analysis.advice.lint import lint_session
from assembler.analysis.engine.layouts import builtin_layout
from assembler.sessions.loader import load_session

COMPARE = "pages/2_Compare_layouts.py"
RECOMMEND = "pages/6_Recommend.py"
EDIT = "Edit in the page…"
UPLOAD = "Upload a file…"
#: The QA's edit: the per-call timestamp moved into L0, ahead of cached content.
MOVED = "name: moved\ncomponents:\n  timestamp: {layer: L0, order: 11, placement: system}\n"
PER_BREAKPOINT = (
    "name: own-lifetimes\n"
    "breakpoints: [{at: tools, ttl: 1h}, {at: 'system:L0', ttl: 1h}, system:L1, history]\n"
)


def _plain(text: str) -> str:
    return text.replace("\\", "")


def _page(path: str, uploaded: tuple[str, str] | None = None, **query: str) -> AppTest:
    """``path`` opened after the step view, with ``uploaded`` (name, text) as the layout."""
    at = new_app(**query)
    if uploaded is not None:
        at.session_state["sel_layout"] = UPLOAD
        at.session_state["uploaded_layout"] = uploaded
    at.run()
    at.switch_page(path)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_open_in_compare_takes_an_uploaded_current_layout_as_the_base() -> None:
    at = _page(RECOMMEND, ("mine.yaml", MOVED), session="research_agent")
    now, recommended = _metrics(at)["Cost now"], _metrics(at)["Cost recommended"]
    at.button(key="rec_compare").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="base_choice").value == EDIT
    assert at.text_area(key="base_text_seed").value == MOVED
    costs = _metrics(at)
    assert (costs["Cost, base"], costs["Cost, head"]) == (now, recommended)


def test_an_edited_head_layout_survives_a_page_switch() -> None:
    at = _page(COMPARE, session="research_agent")
    at.selectbox(key="head_choice").select(EDIT).run()
    at.text_area(key="head_text_seed").input(MOVED).run()
    head = at.query_params["head"]
    assert head.startswith("text:")
    at.switch_page("app.py")
    at.run()
    at.switch_page(COMPARE)
    at.run()
    assert not at.exception and not at.error
    assert at.selectbox(key="head_choice").value == EDIT
    assert at.text_area(key="head_text_seed").value == MOVED
    assert at.query_params["head"] == head


def test_the_sidebar_names_a_layout_handed_over_by_a_page() -> None:
    at = _page("app.py", ("recommended.yaml", MOVED), session="research_agent")
    captions = [_plain(c.value) for c in at.sidebar.caption]
    assert any("recommended.yaml" in c and "moved" in c for c in captions), captions


def test_a_divergence_in_lifetime_alone_names_the_rate() -> None:
    at = _page(COMPARE, session="research_agent", base="seed", head="seed-1h")
    banner = _plain(at.warning[0].value)
    assert banner.startswith(
        "First divergence at step 1: the head layout writes the same 4,549 tokens at the 1h rate"
    ), banner
    assert "more" in banner and "costs more" not in banner


def test_recorded_requests_without_flags_say_no_block_changed() -> None:
    at = _page(RECOMMEND, session="imported_claude_code")
    note = next(c.value for c in at.caption if "every call is a recorded request" in c.value)
    assert "lint above lists" not in note
    assert "no block that changed" in note


def test_the_lint_banner_says_what_no_error_means_and_counts_the_costly() -> None:
    # date-in-l0 on a session that never crosses midnight: the date is a cost, not an error
    session = load_session(ROOT / "sample_sessions" / "research_agent.yaml")
    report = lint_session(session, builtin_layout("date-in-l0"))
    costly = sum(1 for c in report.components if c.changes and c.severity != "stable")
    assert report.errors == 0 and costly > 0
    at = _page(RECOMMEND, session="research_agent", layout="date-in-l0")
    verdict = at.success[0].value
    assert "changes on every call" in verdict
    assert f"{costly} volatile components in the cached prefix" in verdict


def test_the_lint_banner_is_an_error_for_the_date_in_l0_across_midnight() -> None:
    at = _page(RECOMMEND, session="coding_agent_midnight", layout="date-in-l0")
    assert any("1 error(s): a component changes within the session" in e.value for e in at.error), [
        e.value for e in at.error
    ]


def test_recommend_writes_a_hit_ratio_difference_in_points() -> None:
    at = _page(RECOMMEND, session="research_agent")
    delta = next(m.delta for m in at.metric if m.label == "Cost recommended")
    assert delta.endswith("points hit ratio") and "%" not in delta, delta


def test_an_invalid_edit_drops_its_layout_from_the_url() -> None:
    at = _page(COMPARE, session="research_agent")
    at.selectbox(key="head_choice").select(EDIT).run()
    at.text_area(key="head_text_seed").input(MOVED).run()
    assert at.query_params["head"].startswith("text:")
    at.text_area(key="head_text_seed").input("name: bad\ncomponents:\n  nope: {layer: L9}\n").run()
    assert at.error
    assert "head" not in at.query_params
    assert at.query_params["base"] == "seed"


def test_compare_on_recorded_requests_says_layouts_do_not_apply() -> None:
    at = _page(COMPARE, session="imported_claude_code")
    assert not at.success
    assert any("recorded request" in i.value for i in at.info)


def test_the_step_view_names_each_breakpoints_lifetime() -> None:
    at = _page("app.py", ("own.yaml", PER_BREAKPOINT), session="research_agent")
    caption = _plain(at.caption[0].value)
    assert "ttl per breakpoint: 1h, 1h, 5m, 5m" in caption, caption


def test_an_uploaded_layout_comes_back_as_edited_text_after_a_page_switch() -> None:
    at = _page(COMPARE, session="research_agent")
    at.selectbox(key="base_choice").select(UPLOAD).run()
    at.file_uploader(key="base_upload").upload("moved.yaml", MOVED.encode(), "application/x-yaml")
    at.run()
    base = _metrics(at)["Cost, base"]
    at.switch_page("app.py")
    at.run()
    at.switch_page(COMPARE)
    at.run()
    assert not at.exception and not at.error
    assert at.selectbox(key="base_choice").value == EDIT
    assert at.text_area(key="base_text_seed").value == MOVED
    assert _metrics(at)["Cost, base"] == base
