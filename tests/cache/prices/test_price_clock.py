"""A request is priced at the price in force when it was sent, never at the analysing
machine's clock: dated price changes and DeepSeek's hours, checked against the package."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.engine.analyzer import analyze
from assembler.cache.prices.price_clock import model_info, window
from assembler.cache.prices.pricing import price, price_direct, step_pricer
from assembler.cache.tokenizers import counter, tokenizer_for
from assembler.sessions.generator import generate_session
from assembler.sessions.loader import parse_session
from assembler.sessions.model import LLMCall
from assembler.sessions.replay import replay

# models whose price has conditions in the package: time of day, start dates, both
CONDITIONAL = [
    ("deepseek", "deepseek-chat"),
    ("deepseek", "deepseek-v4-pro"),
    ("deepseek", "deepseek-v4-flash"),
    ("anthropic", "claude-sonnet-4-6"),
]
START = datetime(2025, 12, 1, tzinfo=UTC)

moments = st.integers(min_value=0, max_value=400 * 24 * 60).map(
    lambda minutes: START + timedelta(minutes=minutes)
)


def test_the_models_checked_here_have_conditional_prices() -> None:
    for provider, model in CONDITIONAL:
        info = model_info(provider, model)
        assert isinstance(info.prices, list) and len(info.prices) > 1, model


def test_deepseek_off_peak_follows_the_request_time_not_the_clock() -> None:
    peak = datetime(2026, 9, 20, 12, 0, tzinfo=UTC)
    off_peak = datetime(2026, 9, 20, 20, 0, tzinfo=UTC)
    usage = {"total_input": 100_000, "cache_read": 50_000, "output": 1_000}
    at_peak = price("deepseek", "deepseek-chat", at=peak, **usage)
    at_night = price("deepseek", "deepseek-chat", at=off_peak, **usage)
    assert at_night < at_peak
    assert at_peak == price_direct("deepseek", "deepseek-chat", at=peak, **usage)
    assert at_night == price_direct("deepseek", "deepseek-chat", at=off_peak, **usage)


def test_a_window_ends_where_the_price_can_next_change() -> None:
    w = window("deepseek", "deepseek-chat", datetime(2026, 9, 20, 12, 0, tzinfo=UTC))
    assert w.until == datetime(2026, 9, 20, 16, 30, tzinfo=UTC)
    late = window("deepseek", "deepseek-chat", datetime(2026, 9, 20, 16, 30, tzinfo=UTC))
    assert late.variant != w.variant
    assert late.until == datetime(2026, 9, 21, 0, 30, tzinfo=UTC)
    dated = window("anthropic", "claude-sonnet-4-6", datetime(2026, 3, 1, tzinfo=UTC))
    assert dated.until == datetime(2026, 3, 13, tzinfo=UTC)
    assert window("anthropic", "claude-sonnet-4-6", dated.until).until is None


@settings(max_examples=60, deadline=None)
@given(
    model=st.sampled_from(CONDITIONAL),
    times=st.lists(moments, min_size=1, max_size=12),
    offset=st.sampled_from([0, 5, -8, 9]),
    total=st.integers(min_value=1, max_value=400_000),
)
def test_every_moment_is_priced_as_the_package_prices_it(
    model: tuple[str, str], times: list[datetime], offset: int, total: int
) -> None:
    provider, name = model
    pricer = step_pricer(provider, name, "5m")
    zone = timezone(timedelta(hours=offset))
    for at in times:  # in any order, in any offset: the kept window must never be stale
        local = at.astimezone(zone)
        usage = {"total_input": total, "cache_read": total // 3, "cache_write": total // 4}
        direct = price_direct(provider, name, at=local, output=100, **usage)
        assert price(provider, name, at=local, output=100, **usage) == pytest.approx(direct)
        usd, _ = pricer.cost(total // 3, total // 4, total - total // 3 - total // 4, 100, at=local)
        assert usd == pytest.approx(direct)


def test_an_analysis_prices_each_step_at_its_own_time() -> None:
    session = parse_session(json.dumps(generate_session(60, seed=3)), "generated.json")
    llm = [e for e in session.events if isinstance(e, LLMCall)]
    # shift the session so that its middle call is sent as DeepSeek's discount starts
    shift = datetime(2026, 9, 20, 16, 30, tzinfo=UTC) - llm[len(llm) // 2].at
    session = replace(session, events=tuple(replace(e, at=e.at + shift) for e in session.events))
    a = analyze(session, provider="deepseek", model="deepseek-chat")
    count = counter(tokenizer_for("deepseek", "deepseek-chat").encoding).count
    variants = set()
    for step, s in zip(replay(session), a.steps, strict=True):
        expected = price_direct(
            "deepseek",
            "deepseek-chat",
            total_input=s.read + s.write + s.uncached,
            cache_read=s.read,
            cache_write=s.write,
            output=count(step.call.output),
            at=s.timestamp,
        )
        assert s.usd == pytest.approx(expected, rel=1e-12)
        variants.add(window("deepseek", "deepseek-chat", s.timestamp).variant)
    assert len(variants) == 2  # both prices were in force during the session


def test_threads_do_not_share_a_pricer_and_its_window() -> None:
    """A pricer keeps the window of its last step: two analyses priced at once (two app
    sessions, one at DeepSeek's peak hours, one off-peak) each get their own."""
    peak = datetime(2026, 9, 20, 12, 0, tzinfo=UTC)
    night = datetime(2026, 9, 20, 20, 0, tzinfo=UTC)
    mine = step_pricer("deepseek", "deepseek-chat", "5m")
    assert step_pricer("deepseek", "deepseek-chat", "5m") is mine  # kept within a thread
    found: list[object] = []
    results: list[float] = []

    def other() -> None:
        theirs = step_pricer("deepseek", "deepseek-chat", "5m")
        found.append(theirs)
        results.append(theirs.cost(0, 0, 10_000, 0, at=night)[0])

    mine.cost(0, 0, 10_000, 0, at=peak)
    worker = threading.Thread(target=other)
    worker.start()
    worker.join()
    assert found and found[0] is not mine
    assert mine.cost(0, 0, 10_000, 0, at=peak)[0] > results[0]
