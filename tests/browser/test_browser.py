"""The app in Debian's chromium: deep links, keyboard stepping, uploads, screenshots."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import charts_drawn_in_their_margins, keep_screenshot
from playwright.sync_api import Page, expect

from tests.app.app_helpers import hostile_session_bytes

pytestmark = pytest.mark.browser

DONE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
BAD_SESSION = b"format: context-session/1\nsession:\n  id: broken\nevents: []\n"
PAGES = ("Timeline", "Compare_layouts", "Registry", "Savings", "Learn", "Recommend")
CHARTS = {"Timeline": 4, "Compare_layouts": 2}  # the pages' plotly charts


def settle(page: Page) -> None:
    page.wait_for_selector(DONE, timeout=30_000)


def indicator(page: Page, text: str) -> None:
    expect(page.get_by_text(text, exact=True)).to_be_visible(timeout=30_000)


def focus_page(page: Page) -> None:
    """Wait until the step buttons (and their shortcuts) are live; focus the page, not a widget."""
    expect(page.locator(".st-key-next button").first).to_be_visible()
    expect(page.locator(".st-key-prev button").first).to_be_visible()
    # the key listener mounts with the page, after its buttons: presses before it are not seen
    page.wait_for_function("() => window.__caiStepKeys && window.__caiStepKeys.active")
    page.locator('[data-testid="stCaptionContainer"]').first.click()


def upload_session(page: Page, name: str, raw: bytes | Path) -> None:
    """Upload ``raw`` as ``name``: bytes, or a file named so that the browser reads itself,
    as a user's browser does. Bytes first travel through the test driver's own protocol,
    as base64 in JSON: 6.4 s of the driver's and the browser's time for 17 MB, measured,
    where the file takes 0.03 s."""
    combo = page.locator(".st-key-w_sel_session input")
    combo.wait_for(timeout=30_000)  # the widget loads lazily: a skeleton first
    combo.click()
    page.get_by_role("option", name="Upload a file…").click()
    chooser = page.locator(".st-key-upload_session input[type=file]")
    chooser.wait_for(state="attached", timeout=30_000)
    if isinstance(raw, Path):
        assert raw.name == name, (raw, name)
        chooser.set_input_files(files=str(raw))
    else:
        chooser.set_input_files(
            files=[{"name": name, "mimeType": "application/x-yaml", "buffer": raw}]
        )


def test_deep_links_on_a_fresh_server(fresh_server: str, tab: Any) -> None:
    # The first requests this server ever sees.
    server = fresh_server
    tab.goto(f"{server}/?step=6&session=research_agent&layout=seed")
    indicator(tab, "Step 6 / 21")
    expect(tab.get_by_text("cached prefix:", exact=False).first).to_be_visible()
    tab.goto(f"{server}/Timeline?step=4")
    indicator(tab, "Step 4 / 21")
    # The shared sidebar ran: a sub-page opened directly still has the selectors.
    expect(tab.locator(".st-key-w_sel_layout")).to_be_visible()


def test_first_load(server: str, tab: Any) -> None:
    tab.goto(server)
    indicator(tab, "Step 1 / 21")
    settle(tab)
    expect(tab.locator('[data-testid="stException"]')).to_have_count(0)
    expect(tab.get_by_text("call_tree", exact=True).first).to_be_visible()
    expect(tab.get_by_text("running now")).to_be_visible()
    assert "step=1" in tab.url


def test_keyboard_stepping(server: str, tab: Any) -> None:
    tab.goto(f"{server}/?step=3")
    indicator(tab, "Step 3 / 21")
    settle(tab)
    focus_page(tab)
    tab.keyboard.press("ArrowRight")
    indicator(tab, "Step 4 / 21")
    settle(tab)
    tab.keyboard.press("ArrowRight")
    indicator(tab, "Step 5 / 21")
    settle(tab)
    tab.keyboard.press("ArrowLeft")
    indicator(tab, "Step 4 / 21")
    settle(tab)
    assert "step=4" in tab.url


def test_malformed_upload_shows_its_error(server: str, tab: Any) -> None:
    tab.goto(server)
    indicator(tab, "Step 1 / 21")
    settle(tab)
    upload_session(tab, "broken.yaml", BAD_SESSION)
    alert = tab.locator('[data-testid="stAlertContentError"] p')
    expect(alert).to_have_text(
        "broken.yaml:3: session.agent: required field is missing", timeout=30_000
    )
    expect(tab.locator('[data-testid="stException"]')).to_have_count(0)


def test_hostile_upload_runs_no_script(server: str, tab: Any) -> None:
    tab.goto(server)
    indicator(tab, "Step 1 / 21")
    settle(tab)
    upload_session(tab, "hostile.yaml", hostile_session_bytes())
    tree = tab.get_by_test_id("call-tree")
    expect(tree).to_contain_text("<script>window.__pwned=1</script>", timeout=30_000)
    focus_page(tab)
    tab.keyboard.press("ArrowRight")
    indicator(tab, "Step 2 / 21")
    expect(tab.get_by_test_id("call-tree")).to_contain_text(
        '<img src=x onerror=\\"window.__pwned=1\\">'
    )
    expect(
        tab.get_by_text('<img src=x onerror="window.__pwned=1"> Research agent', exact=False)
    ).to_be_visible()
    tab.wait_for_timeout(300)
    assert tab.evaluate("typeof window.__pwned") == "undefined"
    expect(tab.locator('[data-testid="stException"]')).to_have_count(0)


@pytest.mark.parametrize("name", ["Step_view", *PAGES])
def test_screenshot_of_each_page(server: str, tab: Any, name: str) -> None:
    path = "/?step=5" if name == "Step_view" else f"/{name}?step=5"
    tab.goto(server + path)
    tab.wait_for_selector(
        '[data-testid="stMainBlockContainer"] h1, [data-testid="stMainBlockContainer"] h3',
        timeout=30_000,
    )
    settle(tab)
    expect(tab.locator('[data-testid="stException"]')).to_have_count(0)
    expect(tab.locator('[data-testid="stAlertContentError"]')).to_have_count(0)
    tab.wait_for_timeout(400)
    if name in CHARTS:
        charts_drawn_in_their_margins(tab, CHARTS[name])
    out = keep_screenshot(tab, f"{name}.png", full_page=True)
    assert out.stat().st_size > 10_000


def test_selecting_a_chart_point_moves_to_that_step(server: str, tab: Any) -> None:
    tab.goto(f"{server}/Timeline")
    indicator(tab, "Step 1 / 21")
    bars = tab.locator(".st-key-chart_layers g.point")
    expect(bars.nth(7)).to_be_attached()
    box = bars.nth(7).bounding_box()  # the tools bar of step 8
    assert box is not None
    tab.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    indicator(tab, "Step 8 / 21")
    settle(tab)
    assert "step=8" in tab.url


MARK_JS = """key => {
  const box = document.querySelector('.st-key-' + key);
  const mark = box && box.querySelector('.cai-mark');
  return mark && mark.style.display !== 'none'
    ? [mark.dataset.x, mark.getBoundingClientRect().left + 1] : null;
}"""


def test_a_chart_click_keeps_the_chart_and_moves_the_marker(server: str, tab: Any) -> None:
    """The figures do not change with the step, so a click redraws no chart: the same
    plot element stays, and the step's marker moves to the clicked bar."""
    tab.goto(f"{server}/Timeline?step=3")
    indicator(tab, "Step 3 / 21")
    settle(tab)
    tab.wait_for_function(f"() => ({MARK_JS})('chart_layers') !== null")
    tab.evaluate(
        "() => { document.querySelector('.st-key-chart_layers .js-plotly-plot').__kept = 1; }"
    )
    bars = tab.locator(".st-key-chart_layers g.point")
    box = bars.nth(11).bounding_box()  # the tools bar of step 12
    assert box is not None
    tab.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    indicator(tab, "Step 12 / 21")
    settle(tab)
    tab.wait_for_function(f"() => ({MARK_JS})('chart_layers')?.[0] === '12'")
    kept = tab.evaluate(
        "() => document.querySelector('.st-key-chart_layers .js-plotly-plot').__kept === 1"
    )
    assert kept, "the chart was drawn again from nothing"
    _, left = tab.evaluate(f"() => ({MARK_JS})('chart_layers')")
    assert abs(left - (box["x"] + box["width"] / 2)) < 3  # on the clicked bar's centre
    # the keys move it too, on every chart of the page
    tab.locator('[data-testid="stCaptionContainer"]').first.click()
    tab.keyboard.press("ArrowRight")
    indicator(tab, "Step 13 / 21")
    for key in ("chart_layers", "chart_cost", "chart_cache"):
        tab.wait_for_function(f"() => ({MARK_JS})('{key}')?.[0] === '13'")


def test_a_reload_keeps_the_session_and_pricing(server: str, tab: Any) -> None:
    tab.goto(f"{server}/?step=14&session=coding_agent_midnight&provider=openai&model=gpt-5&ttl=1h")
    indicator(tab, "Step 14 / 28")
    settle(tab)
    cost = tab.locator('[data-testid="stMetric"]', has_text="Cost of this step")
    # openai gpt-5 with 1h: $0.0011825 (the CLI's figure); the recorded provider's is $0.0026
    expect(cost).to_contain_text("$0.0012")
    # A page switch from the sidebar drops the query; the page writes the choice back.
    tab.locator('[data-testid="stSidebar"] a', has_text="Recommend").click()
    expect(tab).to_have_url(re.compile(r"/Recommend\?.*session=coding_agent_midnight"))
    settle(tab)
    assert "provider=openai" in tab.url and "ttl=1h" in tab.url, tab.url
    tab.reload()
    settle(tab)
    expect(tab.locator(".st-key-w_sel_session input")).to_have_value("coding_agent_midnight")
    expect(tab.locator(".st-key-w_sel_provider input")).to_have_value("openai")
    tab.locator('[data-testid="stSidebar"] a', has_text="Learn").click()
    expect(tab).to_have_url(re.compile(r"/Learn\?.*session=coding_agent_midnight"))
    settle(tab)
    tab.reload()
    settle(tab)
    tab.locator('[data-testid="stSidebar"] a', has_text="Step view").click()
    indicator(tab, "Step 1 / 28")  # the step is the step view's own, not the sidebar's choice
    expect(tab.locator(".st-key-w_sel_session input")).to_have_value("coding_agent_midnight")
    expect(tab.locator(".st-key-w_sel_ttl input")).to_have_value("1h")
    keep_screenshot(tab, "reload-keeps-choices.png")


def test_open_in_the_step_view_opens_at_the_top(server: str, tab: Any) -> None:
    tab.set_viewport_size({"width": 1440, "height": 900})
    tab.goto(f"{server}/Recommend?session=coding_agent_midnight")
    button = tab.locator(".st-key-rec_step button")
    button.scroll_into_view_if_needed()
    settle(tab)
    main = '[data-testid="stMain"]'
    assert tab.evaluate(f"document.querySelector('{main}').scrollTop") > 200
    button.click()
    indicator(tab, "Step 1 / 28")
    settle(tab)
    tab.wait_for_timeout(700)
    assert tab.evaluate(f"document.querySelector('{main}').scrollTop") == 0
    keep_screenshot(tab, "recommend-to-step-view.png")


def _metric(page: Page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]', has_text=label).first
    return str(box.locator('[data-testid="stMetricValue"]').inner_text()).strip()


def test_an_edited_layout_goes_from_compare_to_recommend_and_back(server: str, tab: Any) -> None:
    """Compare's edited head opens in the step view (the sidebar names it), Recommend hands it
    back to Compare as the base at the same cost, and the edit survives a page switch."""
    moved = "name: moved\ncomponents:\n  timestamp: {layer: L0, order: 11, placement: system}\n"
    tab.goto(f"{server}/Compare_layouts?session=research_agent")
    settle(tab)
    combo = tab.locator(".st-key-head_choice input")
    combo.wait_for(timeout=30_000)
    combo.click()
    tab.get_by_role("option", name="Edit in the page…").click()
    area = tab.locator(".st-key-head_text_seed textarea")
    area.wait_for(timeout=30_000)
    area.fill(moved)
    area.press("Control+Enter")
    expect(tab).to_have_url(re.compile(r"head=text%3A|head=text:"))
    settle(tab)
    tab.get_by_role("link", name=re.compile(r"Open step \d+ under the head layout")).click()
    indicator(tab, "edited head layout")
    settle(tab)
    keep_screenshot(tab, "edited-layout-step-view.png")
    tab.locator('[data-testid="stSidebar"] a', has_text="Recommend").click()
    expect(tab.get_by_text("Cost now")).to_be_visible(timeout=60_000)
    settle(tab)
    now = _metric(tab, "Cost now")
    tab.locator(".st-key-rec_compare button").click()
    expect(tab.locator('[data-testid="stMetric"]', has_text="Cost, base")).to_be_visible()
    settle(tab)
    expect(tab.locator('[data-testid="stMetric"]', has_text="Cost, base")).to_contain_text(now)
    keep_screenshot(tab, "recommend-to-compare-edited-base.png")
    tab.locator('[data-testid="stSidebar"] a', has_text="Step view").click()
    indicator(tab, "Step 1 / 21")
    tab.locator('[data-testid="stSidebar"] a', has_text="Compare layouts").click()
    expect(tab.locator(".st-key-head_choice input")).to_have_value("Edit in the page…")
    expect(tab.locator(".st-key-base_choice input")).to_have_value("Edit in the page…")
    settle(tab)
    assert "head=text" in tab.url, tab.url
    expect(tab.locator('[data-testid="stMetric"]', has_text="Cost, base")).to_contain_text(now)


def test_the_tab_loads_the_chart_code_while_the_step_view_idles(server: str, tab: Any) -> None:
    asked: list[str] = []
    tab.on("request", lambda r: asked.append(r.url.rsplit("/", 1)[-1]))
    tab.goto(server)
    indicator(tab, "Step 1 / 21")
    settle(tab)
    tab.wait_for_function("() => window.__caiWarm === 'done'", timeout=30_000)
    expect(tab.locator('[data-testid="stPlotlyChart"]')).to_have_count(0)  # none drawn here
    assert len([n for n in asked if n.startswith("PlotlyChart.")]) == 1
    assert len([n for n in asked if n.startswith("DataFrame.")]) == 1
    tab.locator('[data-testid="stSidebar"] a', has_text="Timeline").first.click()
    charts = tab.locator('[data-testid="stPlotlyChart"] .main-svg')
    expect(charts.first).to_be_visible(timeout=30_000)
    settle(tab)
    # the frontend's own import found the module the tab had loaded: asked for once
    assert len([n for n in asked if n.startswith("PlotlyChart.")]) == 1
    expect(tab.locator('[data-testid="stException"]')).to_have_count(0)
