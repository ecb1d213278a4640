"""Server-side web searches: billed per search on top of the tokens, as billed and as simulated."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

from assembler.analysis.bill.billing import billed_cost, session_costs
from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.reports.report_json import analysis_json
from assembler.cache.prices.pricing import price, price_direct, step_cost
from assembler.sessions.loader import parse_session
from assembler.sessions.model import FORMAT, Session

MODEL = "claude-sonnet-4-5"
AT = datetime(2026, 3, 12, 15, 0, tzinfo=UTC)
USAGE = {"input": 1200, "cache_read": 0, "cache_write": 3000, "output": 250}


def _direct(searches: int, at: datetime = AT, **tokens: int) -> float:
    """genai-prices' own figure for one Anthropic request."""
    fields = {"web_searches": searches} if searches else {}
    result = calc_price(
        PriceUsage(**tokens, **fields),
        model_ref=MODEL,
        provider_id="anthropic",
        genai_request_timestamp=at,
    )
    return float(result.total_price)


def _session(searches: int | None) -> Session:
    usage = dict(USAGE) | ({} if searches is None else {"web_searches": searches})
    header = {
        "format": FORMAT,
        "session": {"id": "s", "agent": {"name": "a"}, "provider": "anthropic", "model": MODEL},
    }
    events = [
        {"type": "enter", "at": "2026-03-12T15:00:00Z", "function": "main"},
        {"type": "llm", "at": "2026-03-12T15:00:01Z", "input": "news?", "usage": usage},
        {"type": "llm", "at": "2026-03-12T15:00:09Z", "input": "more?", "usage": USAGE},
        {"type": "exit", "at": "2026-03-12T15:00:10Z", "function": "main"},
    ]
    text = "\n".join(json.dumps(x) for x in [header, *events]) + "\n"
    return parse_session(text, "s.jsonl")


def test_price_adds_a_cent_per_search_as_genai_prices_does() -> None:
    tokens = {"input_tokens": 4200, "cache_write_tokens": 3000, "output_tokens": 250}
    plain = price("anthropic", MODEL, total_input=4200, cache_write=3000, output=250, at=AT)
    with_three = price(
        "anthropic", MODEL, total_input=4200, cache_write=3000, output=250, web_searches=3, at=AT
    )
    assert plain == _direct(0, **tokens)
    assert with_three == _direct(3, **tokens)
    assert with_three - plain == pytest.approx(0.03, abs=1e-12)
    assert (
        price_direct(
            "anthropic",
            MODEL,
            total_input=4200,
            cache_write=3000,
            output=250,
            web_searches=3,
            at=AT,
        )
        == with_three
    )


def test_step_cost_adds_the_fee_with_and_without_the_cache() -> None:
    base = step_cost("anthropic", MODEL, read=5000, write=200, uncached=30, output=90, at=AT)
    fee = step_cost(
        "anthropic", MODEL, read=5000, write=200, uncached=30, output=90, at=AT, web_searches=2
    )
    tokens = {"input_tokens": 5230, "cache_read_tokens": 5000, "cache_write_tokens": 200}
    assert fee.usd == _direct(2, output_tokens=90, **tokens)
    assert fee.usd_without_cache == _direct(2, input_tokens=5230, output_tokens=90)
    assert fee.usd - base.usd == pytest.approx(0.02, abs=1e-12)
    assert fee.usd_without_cache - base.usd_without_cache == pytest.approx(0.02, abs=1e-12)


def test_billed_and_simulated_costs_of_a_step_include_its_searches() -> None:
    without = analyze(_session(None))
    zero = analyze(_session(0))
    searched = analyze(_session(4))
    assert [s.usd for s in zero.steps] == [s.usd for s in without.steps]
    first, second = searched.steps
    assert first.measured is not None and first.measured.web_searches == 4
    total = USAGE["input"] + USAGE["cache_read"] + USAGE["cache_write"]
    expected = _direct(
        4,
        at=first.timestamp,
        input_tokens=total,
        cache_write_tokens=USAGE["cache_write"],
        output_tokens=USAGE["output"],
    )
    billed, billed_plain = billed_cost(first), billed_cost(without.steps[0])
    assert billed is not None and billed_plain is not None
    assert billed == pytest.approx(expected, rel=1e-12)
    assert billed - billed_plain == pytest.approx(0.04, abs=1e-12)
    # simulated: the same step as simulated, with the same fee, cached or not
    assert first.usd - without.steps[0].usd == pytest.approx(0.04, abs=1e-12)
    assert first.usd_without_cache - without.steps[0].usd_without_cache == pytest.approx(
        0.04, abs=1e-12
    )
    assert first.usd == pytest.approx(
        price_direct(
            "anthropic",
            MODEL,
            total_input=first.read + first.write + first.uncached,
            cache_read=first.read,
            cache_write=first.write,
            output=USAGE["output"],
            web_searches=4,
            at=first.timestamp,
        ),
        rel=1e-12,
    )
    assert second.usd == without.steps[1].usd  # no searches: nothing added
    # the JSON shows the count beside the measured tokens, only where there is one
    steps_json = analysis_json(searched)["steps"]
    assert steps_json[0]["measured"]["web_searches"] == 4
    assert "web_searches" not in (analysis_json(without)["steps"][0]["measured"] or {})
    costs, plain = session_costs(searched), session_costs(without)
    assert costs.billed is not None and plain.billed is not None
    assert costs.billed - plain.billed == pytest.approx(0.04, abs=1e-12)
    assert costs.simulated - plain.simulated == pytest.approx(0.04, abs=1e-12)


def test_the_search_price_comes_from_the_package() -> None:
    one = Decimal(str(price("anthropic", MODEL, total_input=1, web_searches=1000, at=AT)))
    assert one - Decimal(str(price("anthropic", MODEL, total_input=1, at=AT))) == Decimal("10")
