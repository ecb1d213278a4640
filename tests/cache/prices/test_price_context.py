"""A request is priced in the tier, speed or batch it was served in: the package's price
variants, selected by the recorded price context, exactly as the package selects them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from genai_prices import Usage, calc_price
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.bill.billing import billed_cost, session_costs
from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.reports.report_json import analysis_json, write_analysis_json
from assembler.cache.prices.price_clock import PriceContext, model_info, window
from assembler.cache.prices.price_context import price_context
from assembler.cache.prices.pricing import PROVIDER_IDS, price, price_direct, step_pricer
from assembler.sessions.loader import parse_session
from assembler.sessions.model import RequestSettings

FAST: PriceContext = (("speed", "fast"),)
PRIORITY: PriceContext = (("service_tier", "priority"),)
FLEX: PriceContext = (("service_tier", "flex"),)
BATCH: PriceContext = (("processing", "batch"),)
# models with variants for these contexts in the package (some from a start date on)
VARIANTS = [
    ("anthropic", "claude-opus-4-8", FAST),
    ("anthropic", "claude-opus-5-5", FAST),
    ("anthropic", "claude-sonnet-4-6", BATCH),
    ("openai", "gpt-4o", PRIORITY),
    ("openai", "gpt-4o", BATCH),
    ("openai", "gpt-5", FLEX),
    ("openai", "gpt-6.1-terra", FLEX),  # tiered variant prices
    ("gemini", "gemini-3.8-flash-tts", PRIORITY),  # two dated variants
    ("deepseek", "deepseek-chat", PRIORITY),  # no variant: the standard price
]
START = datetime(2026, 8, 1, tzinfo=UTC)
moments = st.integers(min_value=0, max_value=240 * 24 * 60).map(
    lambda minutes: START + timedelta(minutes=minutes)
)


def _package(provider: str, model: str, at: datetime, context: PriceContext, **usage: int) -> float:
    result = calc_price(
        Usage(**usage),
        model_ref=model,
        provider_id=PROVIDER_IDS[provider],
        genai_request_timestamp=at,
        price_context=dict(context),
    )
    return float(Decimal(result.total_price))


def test_the_contexts_checked_here_select_variants() -> None:
    for provider, model, context in VARIANTS[:-1]:
        info = model_info(PROVIDER_IDS[provider], model)
        assert any(v.when == dict(context) for v in info.price_variants or ()), (model, context)


@settings(max_examples=80, deadline=None)
@given(
    case=st.sampled_from(VARIANTS),
    times=st.lists(moments, min_size=1, max_size=8),
    total=st.integers(min_value=1, max_value=600_000),
    output=st.integers(min_value=0, max_value=20_000),
)
def test_a_context_is_priced_as_the_package_prices_it(
    case: tuple[str, str, PriceContext], times: list[datetime], total: int, output: int
) -> None:
    provider, model, context = case
    read, write = total // 3, total // 4
    pricer = step_pricer(provider, model, "5m", context)
    for at in times:  # in any order: the kept window must never be stale
        direct = price_direct(
            provider,
            model,
            total_input=total,
            cache_read=read,
            cache_write=write,
            output=output,
            at=at,
            context=context,
        )
        package = _package(
            provider,
            model,
            at,
            context,
            input_tokens=total,
            cache_read_tokens=read,
            cache_write_tokens=write,
            output_tokens=output,
        )
        assert direct == package
        got = price(
            provider,
            model,
            total_input=total,
            cache_read=read,
            cache_write=write,
            output=output,
            at=at,
            context=context,
        )
        assert got == pytest.approx(package, rel=1e-12)
        usd, _ = pricer.cost(read, write, total - read - write, output, None, at)
        assert usd == pytest.approx(package, rel=1e-12)


def test_a_window_under_a_context_ends_where_its_variant_starts() -> None:
    before = window("openai", "gpt-4o", datetime(2026, 9, 1, tzinfo=UTC), PRIORITY)
    assert before.until == datetime(2026, 10, 12, tzinfo=UTC)
    assert before.unpriced == ("service_tier",)  # its priority price is not in force yet
    after = window("openai", "gpt-4o", before.until, PRIORITY)
    assert after.overrides and after.unpriced == ()
    # without the context the standard price of gpt-4o never changes
    assert window("openai", "gpt-4o", datetime(2026, 9, 1, tzinfo=UTC)).always


@pytest.mark.parametrize(
    ("settings_", "expected"),
    [
        (RequestSettings(speed="fast"), FAST),
        (RequestSettings(speed="standard", service_tier="default"), ()),
        (RequestSettings(service_tier="Priority"), PRIORITY),
        (RequestSettings(service_tier="batch"), BATCH),  # Anthropic's batch tier
        (RequestSettings(service_tier="auto", thinking="on"), ()),
        (RequestSettings(speed="fast", service_tier="flex"), (("service_tier", "flex"), *FAST)),
        (None, ()),
    ],
)
def test_recorded_settings_map_onto_the_package_keys(
    settings_: RequestSettings | None, expected: PriceContext
) -> None:
    assert price_context(settings_) == expected


def _session(provider: str, model: str, settings_: str) -> str:
    """Three recorded requests, the middle one with ``settings_``: the first writes the
    system prompt, the others read it (or write it again, where the setting salts it)."""
    system = "rule " * 3000
    blocks = f'{{blocks: [{{section: system, text: "{system}", breakpoint: true}}, '
    blocks += '{section: messages, text: "q"}]}'
    usage = "{input: 40000, cache_read: 120000, cache_write: 9000, output: 1500}"
    llm = "{{type: llm, at: '2026-11-02T10:0{m}:00Z', output: ok, usage: {u}, request: {b}{s}}}"
    events = [
        "{type: enter, at: '2026-11-02T10:00:00Z', function: main}",
        *(
            llm.format(m=m, u=usage, b=blocks, s=f", settings: {settings_}" if m == 2 else "")
            for m in (1, 2, 3)
        ),
        "{type: exit, at: '2026-11-02T10:04:00Z', function: main}",
    ]
    return (
        "format: context-session/1\n"
        "session: {id: s, agent: {name: a}, "
        f"provider: {provider}, model: {model}}}\n"
        "events:\n" + "".join(f"  - {e}\n" for e in events)
    )


@pytest.mark.parametrize(
    ("provider", "model", "recorded", "context"),
    [
        ("anthropic", "claude-opus-4-8", "{speed: fast}", FAST),
        ("openai", "gpt-4o", "{service_tier: priority}", PRIORITY),
        ("anthropic", "claude-sonnet-4-6", "{service_tier: batch}", BATCH),
    ],
)
def test_an_analysis_prices_a_step_in_its_recorded_context(
    provider: str, model: str, recorded: str, context: PriceContext
) -> None:
    session = parse_session(_session(provider, model, recorded), "s.yaml")
    a = analyze(session)
    first, served, plain = a.steps
    assert served.price_context == context and plain.price_context == ()
    assert first.write and all(s.read or s.write for s in a.steps)  # cached rates count
    for s in (first, served, plain):
        usage = {
            "total_input": s.read + s.write + s.uncached,
            "cache_read": s.read,
            "cache_write": s.write,
            "output": 1500,
            "at": s.timestamp,
        }
        assert s.usd == pytest.approx(
            price_direct(provider, model, context=s.price_context, **usage), rel=1e-12
        )
        standard = price_direct(provider, model, **usage)
        assert (s.usd == pytest.approx(standard, rel=1e-12)) is (s is not served)
        assert not s.warnings
    # the bill: the measured usage, in the tier that served it
    u = served.measured
    assert u is not None
    billed = billed_cost(served)
    assert billed == pytest.approx(
        _package(
            provider,
            model,
            served.timestamp,
            context,
            input_tokens=u.input + u.cache_read + u.cache_write,
            cache_read_tokens=u.cache_read,
            cache_write_tokens=u.cache_write,
            output_tokens=u.output,
        ),
        rel=1e-12,
    )
    assert billed != billed_cost(plain)
    assert session_costs(a).billed == pytest.approx(sum(billed_cost(s) or 0 for s in a.steps))
    # the JSON report says which step was priced in which context, and only that one
    parts: list[str] = []
    write_analysis_json(a, parts.append)  # as the CLI writes it
    steps = json.loads("".join(parts))["steps"]
    assert steps == analysis_json(a)["steps"]
    assert [s.get("priced_as") for s in steps] == [None, dict(context), None]


def test_another_providers_prices_ignore_the_recorded_context() -> None:
    session = parse_session(_session("openai", "gpt-4o", "{service_tier: priority}"), "s.yaml")
    same = analyze(session, model="gpt-4o")
    assert same.steps[1].price_context == PRIORITY
    other = analyze(session, provider="anthropic", model="claude-sonnet-4-6")
    assert all(s.price_context == () for s in other.steps)
    assert other.steps[1].usd == pytest.approx(other.steps[2].usd, rel=1e-12)


def test_a_context_without_a_price_is_standard_and_says_so() -> None:
    session = parse_session(_session("openai", "gpt-4o", "{service_tier: scale}"), "s.yaml")
    a = analyze(session)
    _, served, plain = a.steps
    assert served.usd == pytest.approx(plain.usd, rel=1e-12)
    assert served.warnings == (
        "no price for service_tier 'scale' of model 'gpt-4o': priced at the standard rates",
    )
    assert not plain.warnings
    # what the step was priced in: the standard rates, so no context is reported
    assert served.price_context == ()
