"""AppTest: the Savings page gives the bill first for an imported session, the simulation
beside it with its difference, above 5 % the first step that reads differently (linked),
the projection from the bill, and the factor that scaled sizes to the bill."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs

from app_helpers import ROOT, new_app, uploaded
from streamlit.testing.v1 import AppTest

from assembler.analysis.app.uploads import read_upload
from assembler.analysis.bill import BillFirst, bill_first
from assembler.analysis.engine.analyzer import analyze
from assembler.sessions.loader import parse_bytes
from ui.frame.billing import money

FIX = ROOT / "tests" / "sessions" / "importers" / "fixtures"
SAMPLES = ROOT / "sample_sessions"
SAVINGS = "pages/4_Savings.py"


def _on_savings(files: list[tuple[str, bytes]]) -> AppTest:
    at = uploaded(files)
    at.switch_page(SAVINGS).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _metric(at: AppTest, label: str) -> str:
    (m,) = [m for m in at.metric if m.label == label]
    return str(m.value)


def _texts(elements: Any) -> list[str]:
    """Shown text: Markdown's escapes taken out."""
    return [str(e.value).replace("\\", "") for e in elements]


def _bill(files: list[tuple[str, bytes]]) -> BillFirst | None:
    up = read_upload(files)
    return bill_first(analyze(parse_bytes(up.raw, up.name)))


def test_above_five_percent_the_page_names_and_links_the_first_divergent_step() -> None:
    files = [("warm_elsewhere.jsonl", (FIX / "requests" / "warm_elsewhere.jsonl").read_bytes())]
    at = _on_savings(files)
    bill = _bill(files)
    assert bill is not None and bill.far
    assert _metric(at, "Billed") == money(bill.billed)
    assert _metric(at, "Simulated") == money(bill.simulated)
    (simulated,) = [m for m in at.metric if m.label == "Simulated"]
    assert simulated.delta == "+739.4% from the bill"
    assert _metric(at, "Without caching") == money(bill.billed_without_cache)
    assert _texts(at.warning) == [
        "The simulation is 739.4% above the bill. It first read differently from the bill at "
        "step 1: simulated miss, measured full hit — unexplained: the provider read 1,352 "
        "tokens, 1,352 more than the simulator allowed (a prefix kept warm by another "
        "session, or a longer lifetime than assumed)."
    ]
    (link,) = [p.proto for p in at.get("page_link") if "in the step view" in p.proto.label]
    assert link.label == "Open step 1 in the step view"
    query = parse_qs(link.query_string)
    assert query["step"] == ["1"] and query["session"][0].startswith("upload:")
    captions = _texts(at.caption)
    assert (
        "The one billed step read differently from the bill: the whole difference, +$0.0047, "
        "is there.  \nTokens simulated / billed: read 0 / 1,352 (-100.0%), written 1,364 / 5 "
        "(+27180.0%), uncached 0 / 0." in captions
    )
    # the projection is the bill's
    assert _metric(at, "Per day, as billed") == f"${bill.billed:,.4f}"
    assert (
        "Per day and per month (30 days): the bill, the provider's usage for the step priced "
        "per request, times the count; uncached, the same billed tokens with nothing cached."
        in captions
    )
    at.number_input(key="sessions_per_day").set_value(1000).run()
    assert _metric(at, "Per month, as billed") == f"${bill.billed * 1000 * 30:,.2f}"


def test_within_five_percent_no_step_is_pointed_at() -> None:
    main = FIX / "claude_code" / "session.jsonl"
    agent = FIX / "claude_code" / "subagents" / "agent-a1b2c3.jsonl"
    at = _on_savings([(main.name, main.read_bytes()), (agent.name, agent.read_bytes())])
    assert "The simulation is within 5% of the bill." in _texts(at.caption)
    assert not at.warning
    assert not [p for p in at.get("page_link") if "in the step view" in p.proto.label]
    frame = at.dataframe[0].value
    assert list(frame[""][:3]) == [
        "cost as billed",
        "cost without caching, as billed",
        "saved by caching, as billed",
    ]


def test_a_bill_short_of_some_steps_says_what_the_projection_is_based_on() -> None:
    text = (SAMPLES / "imported_claude_code.yaml").read_text("utf-8")
    # the last request without usage, as a Codex rollout's last request can be
    last = text.rindex("  usage:\n")
    end = re.compile(r"\n  (?! )").search(text, last + 1)
    assert end is not None
    text = text[:last] + text[end.start() + 1 :]
    at = _on_savings([("partial.yaml", text.encode("utf-8"))])
    assert (
        "Per day and per month (30 days): the bill for the 11 of 12 steps with the provider's "
        "usage, and the simulated cost of the 1 step without it, times the count; uncached, the "
        "billed tokens with nothing cached and the simulated cost of the rest."
        in _texts(at.caption)
    )


def test_a_sample_of_usage_keeps_the_simulated_projection() -> None:
    at = new_app()  # research_agent: one measured step of 21
    at.run()
    at.switch_page(SAVINGS).run()
    assert not at.exception and not at.error
    assert _metric(at, "Per day, with caching").startswith("$")
    assert not [m for m in at.metric if m.label == "Billed"]
    assert (
        "Per day and per month (30 days): the simulated cost of this session, times the count; "
        "uncached, the simulated cost without caching." in _texts(at.caption)
    )
    assert "cost as billed (measured usage, 1 of 21 steps)" in list(at.dataframe[0].value[""])


def test_without_a_bill_the_page_is_the_simulation() -> None:
    at = new_app(session="review_agent_paths")
    at.run()
    at.switch_page(SAVINGS).run()
    assert not at.exception and not at.error
    assert _metric(at, "Per day, with caching").startswith("$")
    assert not [m for m in at.metric if "Billed" in m.label]
    assert not any("bill" in c for c in _texts(at.caption))


def test_the_factor_that_scaled_sizes_is_said_where_sizes_are_read() -> None:
    text = (SAMPLES / "imported_claude_code.yaml").read_text("utf-8")
    text = text.replace(
        "  title:", "  token_scale:\n    claude-sonnet-4-5-20250929: 1.25\n  title:"
    )
    at = _on_savings([("scaled.yaml", text.encode("utf-8"))])
    (head,) = [c for c in _texts(at.caption) if c.startswith("Fix the late-order double count")]
    assert " · lifetime 5m · sizes scaled to the bill: ×1.25. Prices from" in head
    at.switch_page("app.py").run()
    assert not at.exception
    assert any(c.endswith("ttl 5m · sizes scaled to the bill: ×1.25") for c in _texts(at.caption))
