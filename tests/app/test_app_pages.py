"""AppTest: every page renders, and the step view's interactions work."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
import pytest
from app_helpers import PAGES, hostile_session_bytes, new_app
from streamlit.testing.v1 import AppTest

from assembler.analysis.engine.results import BlockAnalysis
from ui import html as ui_html
from ui.views import charts

BAD_SESSION = b"format: context-session/1\nsession:\n  id: broken\nevents: []\n"


def _texts(at: AppTest) -> list[str]:
    return [e.value for e in at.subheader]


def _no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("page", ["app.py", *PAGES])
def test_every_page_renders(page: str) -> None:
    at = new_app()
    at.run()
    if page != "app.py":
        at.switch_page(page)
        at.run()
    _no_errors(at)
    assert at.title or at.subheader


def test_step_view_first_load_shows_step_one() -> None:
    at = new_app()
    at.run()
    _no_errors(at)
    assert _texts(at)[0] == "Step 1 / 21"
    labels = [m.label for m in at.metric]
    assert any(label.startswith("Total tokens") for label in labels)
    assert "Hit ratio" in labels and "Cost of this step" in labels
    assert at.query_params["step"] == "1"


def test_stepping_with_buttons_and_slider() -> None:
    at = new_app()
    at.run()
    at.button(key="next").click().run()
    assert _texts(at)[0] == "Step 2 / 21"
    at.button(key="next").click().run()
    at.button(key="prev").click().run()
    assert _texts(at)[0] == "Step 2 / 21"
    at.slider[0].set_value(9).run()
    assert _texts(at)[0] == "Step 9 / 21"
    assert at.query_params["step"] == "9"
    # ← / → go through the page's own key listener (every press counts), not button
    # shortcuts, which lose presses that arrive while a rerun draws (browser test)
    assert at.button(key="prev").proto.shortcut == ""
    assert at.button(key="next").proto.shortcut == ""


def test_prev_disabled_on_first_step_next_on_last() -> None:
    at = new_app(step="21")
    at.run()
    assert _texts(at)[0] == "Step 21 / 21"
    assert at.button(key="next").disabled
    at.slider[0].set_value(1).run()
    assert at.button(key="prev").disabled


def test_deep_link_to_step_session_and_layout() -> None:
    at = new_app(step="5", session="research_agent", layout="date-in-l0")
    at.run()
    _no_errors(at)
    assert _texts(at)[0] == "Step 5 / 21"
    assert at.selectbox(key="w_sel_layout").value == "date-in-l0"
    assert any("date-in-l0" in c.value.replace("\\", "") for c in at.caption)


def test_deep_link_out_of_range_is_clamped() -> None:
    at = new_app(step="999")
    at.run()
    _no_errors(at)
    assert _texts(at)[0] == "Step 21 / 21"


def test_miss_sentence_names_a_component() -> None:
    at = new_app(step="5")
    at.run()
    assert at.warning, "step 5 has a miss under seed"
    assert "call_tree" in at.warning[0].value.replace("\\", "")


def test_layout_switch_reanalyses() -> None:
    at = new_app(step="3")
    at.run()
    before = [m.value for m in at.metric]
    at.selectbox(key="w_sel_layout").select("expose-full").run()
    _no_errors(at)
    assert _texts(at)[0] == "Step 3 / 21"
    assert any("expose-full" in c.value.replace("\\", "") for c in at.caption)
    at.selectbox(key="w_sel_layout").select("no-breakpoints").run()
    _no_errors(at)
    assert [m.value for m in at.metric] != before


def test_provider_switch_to_openai() -> None:
    at = new_app(step="4")
    at.run()
    at.selectbox(key="w_sel_provider").select("openai").run()
    _no_errors(at)
    assert at.selectbox(key="w_sel_model").value == "gpt-5"
    assert any("gpt-5" in c.value.replace("\\", "") for c in at.caption)


def test_malformed_upload_shows_the_field() -> None:
    at = new_app()
    at.run()
    at.selectbox(key="w_sel_session").select("Upload a file…").run()
    at.file_uploader(key="upload_session").upload("broken.yaml", BAD_SESSION, "application/x-yaml")
    at.run()
    assert not at.exception
    messages = [e.value.strip("` ") for e in at.error]  # shown as code, never as Markdown
    assert messages == ["broken.yaml:3: session.agent: required field is missing"]


def test_valid_upload_is_analysed() -> None:
    at = new_app()
    at.run()
    at.selectbox(key="w_sel_session").select("Upload a file…").run()
    at.file_uploader(key="upload_session").upload(
        "hostile.yaml", hostile_session_bytes(), "application/x-yaml"
    )
    at.run()
    _no_errors(at)
    assert _texts(at)[0] == "Step 1 / 21"


def test_unexpected_error_becomes_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from ui.state import data

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("simulated failure\nwith a second line")

    monkeypatch.setattr(data, "analysis", boom)
    at = new_app()
    at.run()
    assert not at.exception
    (message,) = [e.value for e in at.error]
    assert "RuntimeError: simulated failure" in message
    assert "second line" not in message and "Traceback" not in message


def _values(field: object) -> list[float]:
    """A plotly array as numbers: a list, or a typed array (``{"dtype", "bdata"}``)."""
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"]).tolist()
    assert isinstance(field, list)
    return field


def _timeline_at(step: str) -> tuple[list[str], list[dict[str, object]]]:
    """The Timeline at ``step``: its charts' specs and the marks laid over them."""
    at = new_app(step=step)
    at.run()
    at.switch_page("pages/1_Timeline.py")
    at.run()
    _no_errors(at)
    assert _texts(at)[0] == f"Step {step} / 21"
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    marker = [
        e.proto for e in at.main if getattr(e.proto, "component_name", None) == "cai_chart_marker"
    ]
    assert len(marker) == 1
    return specs, json.loads(marker[0].json)["marks"]


def test_timeline_charts_mark_the_current_step() -> None:
    specs, marks = _timeline_at("6")
    assert len(specs) == 4
    spec = json.loads(specs[0])
    assert [t["name"] for t in spec["data"]] == ["tools (L0)", "L0 system", "L1", "L2"]
    by_key = {m["key"]: m for m in marks}
    assert set(by_key) == {"chart_layers", "chart_cost", "chart_cache", "chart_depth"}
    assert by_key["chart_cache"] == {"key": "chart_cache", "x": 6, "label": "step 6", "y": None}
    # the star sits on step 6's own point of the size-against-depth chart
    depth = json.loads(specs[3])["data"][0]
    xy = zip(_values(depth["x"]), _values(depth["y"]), strict=True)
    points = dict(zip(_values(depth["customdata"]), xy, strict=True))
    star = by_key["chart_depth"]
    assert (star["x"], star["y"]) == points[6] and star["label"] == "step 6"
    # a moved step changes the marks, never a figure: the browser keeps every chart it drew
    specs_7, marks_7 = _timeline_at("7")
    assert specs_7 == specs
    assert {m["key"]: m["x"] for m in marks_7}["chart_cache"] == 7
    assert "shapes" not in spec["layout"]


def test_chart_selection_resolves_the_step() -> None:
    steps = [1, 2, 3, 4]
    assert charts.selected_step({"selection": {"points": [{"customdata": [3]}]}}, steps) == 3
    assert (
        charts.selected_step(
            {"selection": {"points": [{"point_index": 1, "curve_number": 0}]}}, steps
        )
        == 2
    )
    assert charts.selected_step(None, steps) is None


def test_compare_page_shows_divergence() -> None:
    at = new_app()
    at.run()
    at.switch_page("pages/2_Compare_layouts.py")
    at.run()
    _no_errors(at)
    assert at.selectbox(key="base_choice").value == "seed"
    assert at.selectbox(key="head_choice").value == "situation-first"
    warning = at.warning[0].value
    assert warning.replace("\\", "").startswith("First divergence at step 1")
    assert "situation (L1)" in warning.replace("\\", "")
    at.selectbox(key="head_choice").select("seed").run()
    assert at.success and "same read, write, uncached tokens and cost" in at.success[0].value


def test_compare_page_edited_layout_error_names_the_field() -> None:
    at = new_app()
    at.run()
    at.switch_page("pages/2_Compare_layouts.py")
    at.run()
    at.selectbox(key="head_choice").select("Edit in the page…").run()
    at.text_area(key="head_text_seed").input("name: x\nttl: 3h\n").run()
    assert not at.exception
    assert any("ttl" in e.value for e in at.error)


def test_registry_lists_components() -> None:
    at = new_app(step="5")
    at.run()
    at.switch_page("pages/3_Registry.py")
    at.run()
    _no_errors(at)
    frame = at.dataframe[0].value
    assert {"call_tree", "situation", "current_date", "tools"} <= set(frame["component"])
    assert bool(frame.set_index("component").loc["call_tree", "emitted now"])


def test_savings_scales_with_sessions_per_day() -> None:
    at = new_app()
    at.run()
    at.switch_page("pages/4_Savings.py")
    at.run()

    def per_day() -> str:
        (m,) = [m for m in at.metric if m.label == "Per day, with caching"]
        return str(m.value)

    first = per_day()
    assert at.number_input(key="sessions_per_day").value == 1  # starts from one session
    at.number_input(key="sessions_per_day").set_value(2000).run()
    _no_errors(at)
    assert per_day() != first
    assert len(at.get("download_button")) == 2


def test_learn_links_to_the_four_steps() -> None:
    at = new_app()
    at.run()
    at.switch_page("pages/5_Learn.py")
    at.run()
    _no_errors(at)
    links = at.get("page_link")
    labels = [link.proto.label for link in links]
    for mark in ("walk-1", "walk-2", "walk-3", "walk-4"):
        assert any(mark in label for label in labels)
    # the fourth point links both lifetimes (reading 9)
    assert sum("walk-4" in label for label in labels) == 2


def test_block_stack_and_tree_escape_session_text() -> None:
    class B:
        name = "<script>alert(1)</script>"
        layer = "L1"
        section = "messages"
        tokens = 5
        cache = "read"
        change = "new"
        breakpoint = 1
        text = '<img src=x onerror="window.__pwned=1">'
        cacheable = True
        marker_ttl = None

    out = ui_html.block_stack([B()], 5, approximate=True)
    assert "<script>" not in out and "<img" not in out
    assert "&lt;script&gt;" in out and "cached prefix: 5 tokens" in out and "①" in out
    tree = ui_html.call_tree(
        '<call_tree>\n- function: a\n  input: "<script>x</script>"\n  status: running\n</call_tree>'
    )
    assert "<script>x" not in tree and "running now" in tree


def test_a_breakpoint_with_its_own_lifetime_shows_it() -> None:
    def block(name: str, ttl: str | None) -> BlockAnalysis:
        return BlockAnalysis(name, "L0", "system", 5, "read", "unchanged", 1, name, True, ttl)

    own = ui_html.block_stack([block("system", "1h")], 5, approximate=False)
    assert "①<small> 1h</small>" in own and "its own lifetime 1h" in own
    plain = ui_html.block_stack([block("system", None)], 5, approximate=False)
    assert "①<small>" not in plain and "own lifetime" not in plain


def test_long_runs_of_released_nodes_are_folded() -> None:
    done = [f"    - {{function: f{i}, status: done}}" for i in range(500)]
    text = "\n".join(
        [
            "<call_tree>",
            "- function: root",
            "  status: running",
            "  children:",
            *done,
            "</call_tree>",
        ]
    )
    out = ui_html.call_tree(text)
    assert "492 lines of finished work folded" in out
    assert "f0," in out and "f499," in out and "f250," not in out
    assert "running now" in out


def test_very_long_trees_keep_head_tail_and_running_path() -> None:
    body = [f"    - function: t{i}\n      output: done {i}" for i in range(2000)]
    text = "\n".join(
        [
            "<call_tree>",
            "- function: root",
            "  status: running",
            "  children:",
            *body,
            "    - function: last",
            "      status: running",
            "</call_tree>",
        ]
    )
    out = ui_html.call_tree(text)
    assert "lines of finished work folded" in out
    assert "running now" in out and "t1999" in out and "function: t5\n" in out
    assert "function: t1000\n" not in out
    assert out.count("\n") < 700
