"""AppTest: Compare tells the truth — first divergence, both sides, per-step breakdown,
links that carry the layout they name, money at the user's session count."""

from __future__ import annotations

import json

from app_helpers import ROOT, new_app
from streamlit.testing.v1 import AppTest

EDIT = "Edit in the page…"


def _compare(**query: str) -> AppTest:
    at = new_app(**query)
    at.run()
    at.switch_page("pages/2_Compare_layouts.py")
    for key, value in query.items():  # the page's own parameters, as a deep link gives them
        at.query_params[key] = value
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def _plain(text: str) -> str:
    return text.replace("\\", "")


def test_costs_differ_from_step_1_so_the_divergence_is_step_1() -> None:
    at = _compare()  # research_agent, seed vs situation-first
    frame = at.dataframe[0].value
    first = frame.iloc[0]
    assert first["usd_base"] != first["usd_head"]
    assert _plain(at.warning[0].value).startswith(
        "First divergence at step 1: the base layout writes 4,549 and sends 192 uncached"
    )
    assert {
        "read_base",
        "write_base",
        "uncached_base",
        "read_head",
        "write_head",
        "uncached_head",
        "usd_diff",
    } <= set(frame.columns)
    assert abs(first["usd_diff"] - (first["usd_head"] - first["usd_base"])) < 1e-12


def test_midnight_banner_names_the_side_and_both_sentences() -> None:
    from assembler.analysis.advice.comparison import compare
    from assembler.analysis.engine.layouts import builtin_layout
    from assembler.sessions.loader import load_session

    session = load_session(ROOT / "sample_sessions" / "coding_agent_midnight.yaml")
    cmp = compare(session, builtin_layout("seed"), builtin_layout("date-in-l0"))
    # the first step where any of read / write / uncached / cost differs, found here directly
    k, bs, hs = next(
        (i + 1, b, h)
        for i, (b, h) in enumerate(zip(cmp.base.steps, cmp.head.steps, strict=True))
        if (b.read, b.write, b.uncached, b.usd) != (h.read, h.write, h.uncached, h.usd)
    )
    worse = "head" if hs.read < bs.read else "base"
    at = _compare(session="coding_agent_midnight", base="seed", head="date-in-l0")
    banner = _plain(at.warning[0].value)
    assert banner.startswith(f"First divergence at step {k}: the {worse} layout reads less")
    captions = [_plain(c.value) for c in at.caption]
    base = next(c for c in captions if c.startswith("Base: reads"))
    head = next(c for c in captions if c.startswith("Head: reads"))
    frame = at.dataframe[0].value.set_index("step")
    row = frame.loc[k]
    # the sentences' numbers are the step's numbers
    assert head.startswith(
        f"Head: reads {row['read_head']:,}, writes {row['write_head']:,}, "
        f"sends {row['uncached_head']:,} uncached"
    )
    assert base.startswith(
        f"Base: reads {row['read_base']:,}, writes {row['write_base']:,}, "
        f"sends {row['uncached_base']:,} uncached"
    )
    for side, text in (("head", head), ("base", base)):
        if "this step writes" in text:
            assert (
                f"this step writes {row['write_' + side]:,} and sends {row['uncached_' + side]:,} uncached"
                in text
            )
        assert "re-sent uncached" not in text


def test_every_miss_sentence_uses_its_steps_numbers() -> None:
    import re

    from assembler.analysis.engine.analyzer import analyze
    from assembler.analysis.engine.layouts import BUILTIN_LAYOUTS, builtin_layout
    from assembler.sessions.loader import load_session

    session = load_session(ROOT / "sample_sessions" / "coding_agent_midnight.yaml")
    seen = 0
    for name in BUILTIN_LAYOUTS:
        for s in analyze(session, builtin_layout(name)).steps:
            if s.miss is None:
                continue
            m = re.search(r"this step writes ([\d,]+) and sends ([\d,]+) uncached", s.miss.sentence)
            if m:
                seen += 1
                assert (int(m[1].replace(",", "")), int(m[2].replace(",", ""))) == (
                    s.write,
                    s.uncached,
                )
            assert "re-sent uncached" not in s.miss.sentence
    assert seen > 0


def test_a_ttl_1h_head_is_not_blamed_for_the_base() -> None:
    at = _compare(session="coding_agent_midnight")
    at.selectbox(key="head_choice").select(EDIT).run()
    at.text_area(key="head_text_seed").input("name: seed-1h\nttl: 1h\n").run()
    assert not at.exception and not at.error
    banner = _plain(at.warning[0].value)
    # step 1 writes the same tokens on both sides; the 1h write costs more: the head pays it
    assert banner.startswith(
        "First divergence at step 1: the head layout writes the same 6,063 tokens at the 1h rate"
    )
    money = " ".join(_plain(c.value) for c in at.caption)
    assert "write premium" in money


def test_links_carry_the_edited_head_layout() -> None:
    at = _compare(session="coding_agent_midnight")
    at.selectbox(key="head_choice").select(EDIT).run()
    at.text_area(key="head_text_seed").input(
        "name: mine\ncomponents:\n  current_date: {layer: L0, order: 11}\n"
    ).run()
    links = [p for p in at.get("page_link") if "under the head layout" in p.proto.label]
    assert links, "no link to the head layout"
    url = links[0].proto.query_string if hasattr(links[0].proto, "query_string") else ""
    layout = dict(q.split("=", 1) for q in url.split("&") if "=" in q).get("layout", "")
    assert layout.startswith("text"), url
    # following the link opens the step view under that very layout
    step = new_app(session="coding_agent_midnight", layout=layout.replace("%3A", ":"), step="19")
    step.run()
    assert not step.exception and not step.error
    assert "mine" in _plain(step.caption[0].value)


def test_money_per_session_and_per_month_at_the_users_count() -> None:
    at = _compare(session="coding_agent_midnight", base="seed", head="date-in-l0")
    text = _plain(" ".join(m.value for m in at.markdown))
    assert "per session" in text and "per month" in text and "at 1 session a day" in text
    at.number_input(key="cmp_sessions_per_day").set_value(300).run()
    assert "at 300 sessions a day" in _plain(" ".join(m.value for m in at.markdown))


def test_the_layout_editor_starts_full_and_suggests_names() -> None:
    from assembler.analysis.engine.layouts import builtin_layout
    from assembler.design.components import default_registry

    at = _compare()
    at.selectbox(key="head_choice").select(EDIT).run()
    text = at.text_area(key="head_text_seed").value
    for c in builtin_layout("seed").apply(default_registry()):
        assert f"  {c.name}: {{layer: {c.layer.value}, order: {c.order}," in text
    assert "\nbreakpoints: [" in text and "ttl" in text
    at.text_area(key="head_text_seed").input(
        text.replace("  current_date:", "  curent_date:", 1)
    ).run()
    assert not at.exception
    assert any("did you mean current_date?" in e.value for e in at.error)


def test_savings_explains_the_write_premium_of_step_1() -> None:
    from assembler.analysis.engine.analyzer import analyze
    from assembler.analysis.engine.layouts import builtin_layout
    from assembler.sessions.loader import load_session

    s1 = analyze(
        load_session(ROOT / "sample_sessions" / "coding_agent_midnight.yaml"),
        builtin_layout("seed"),
    ).steps[0]
    assert s1.usd > s1.usd_without_cache  # the premium this test is about
    at = new_app(session="coding_agent_midnight")
    at.run()
    at.switch_page("pages/4_Savings.py").run()
    assert not at.exception and not at.error
    (premium,) = [_plain(c.value) for c in at.caption if "write premium" in c.value]
    assert premium.startswith(
        f"Step 1 costs ${s1.usd:,.5f} with caching and ${s1.usd_without_cache:,.5f} without: "
        f"writing {s1.write:,} tokens"
    )


def test_the_per_step_lines_are_svg_traces() -> None:
    # thinned to a few hundred points, as the Timeline's: a WebGL trace made chromium start a
    # software WebGL context for each chart (0.85 against 1.36 s for the page, measured)
    at = _compare()
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(specs) == 2
    assert {t["type"] for s in specs for t in s["data"]} == {"scatter"}
