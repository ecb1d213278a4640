"""Costs come from genai-prices, offline; one step recomputed by hand."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage, calc_price

from assembler.analysis.engine.analyzer import analyze
from assembler.cache.prices.pricing import PricingError, check_model, price, price_direct, step_cost
from assembler.cache.tokenizers import counter
from assembler.cli.main import main
from assembler.sessions.model import Session
from assembler.sessions.replay import replay

MODELS = [
    ("anthropic", "claude-sonnet-4-5", "anthropic"),
    ("openai", "gpt-5", "openai"),
    ("gemini", "gemini-2.5-pro", "google"),
    ("deepseek", "deepseek-chat", "deepseek"),
]


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("a test tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    yield


def _base(value: Any) -> Decimal:
    """A flat price, or the base tier of a tiered one (our prompts stay below 200k)."""
    return Decimal(value) if not hasattr(value, "base") else Decimal(value.base)


def library_prices(model: str, provider_id: str) -> Any:
    return calc_price(Usage(input_tokens=1), model_ref=model, provider_id=provider_id).model_price


@pytest.mark.parametrize(("provider", "model", "pid"), MODELS)
def test_costs_for_the_four_models(provider: str, model: str, pid: str) -> None:
    check_model(provider, model)
    cost = step_cost(provider, model, read=8000, write=1000, uncached=1000, output=300)
    assert 0 < cost.usd < cost.usd_without_cache
    mp = library_prices(model, pid)
    per = Decimal(1_000_000)
    plain = (10_000 * _base(mp.input_mtok) + 300 * _base(mp.output_mtok)) / per
    assert cost.usd_without_cache == pytest.approx(float(plain))


def test_a_step_cost_recomputed_by_hand(research_session: Session) -> None:
    a = analyze(research_session)
    step = next(s for s in a.steps if s.read and s.write)
    mp = library_prices("claude-sonnet-4-5", "anthropic")
    call = replay(research_session)[step.step - 1].call
    if call.usage is not None:
        output = call.usage.output
    else:  # no measured usage: the recorded output text, counted
        output = counter("o200k_base").count(call.output)
    by_hand = (
        step.uncached * _base(mp.input_mtok)
        + step.read * _base(mp.cache_read_mtok)
        + step.write * _base(mp.cache_write_mtok)
        + output * _base(mp.output_mtok)
    ) / Decimal(1_000_000)
    assert step.usd == pytest.approx(float(by_hand), rel=1e-9)
    plain = (
        step.tokens["total"] * _base(mp.input_mtok) + output * _base(mp.output_mtok)
    ) / Decimal(1_000_000)
    assert step.usd_without_cache == pytest.approx(float(plain), rel=1e-9)


def test_one_hour_writes_use_the_1h_write_price() -> None:
    mp = library_prices("claude-sonnet-4-5", "anthropic")
    five = price("anthropic", "claude-sonnet-4-5", total_input=5000, cache_write=5000)
    hour = price(
        "anthropic", "claude-sonnet-4-5", total_input=5000, cache_write=5000, write_1h=True
    )
    assert five == pytest.approx(float(5000 * _base(mp.cache_write_mtok) / 1_000_000))
    assert hour == pytest.approx(float(5000 * _base(mp.cache_write_1h_mtok) / 1_000_000))


def test_unknown_model_names_the_model() -> None:
    with pytest.raises(PricingError, match="claude-unknown-9"):
        check_model("anthropic", "claude-unknown-9")


def test_unknown_model_exits_2_in_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    sample = Path(__file__).resolve().parents[3] / "sample_sessions" / "research_agent.yaml"
    code = main(["analyze", str(sample), "--model", "no-such-model"])
    assert code == 2
    err = capsys.readouterr().err
    assert "no-such-model" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("provider", "model", "pid"), MODELS)
@pytest.mark.parametrize(
    ("total", "read", "write", "output", "hour"),
    [
        (1, 0, 0, 0, False),
        (5_000, 3_000, 1_500, 200, False),
        (5_000, 0, 5_000, 0, True),
        (199_999, 150_000, 40_000, 900, False),
        (200_000, 150_000, 40_000, 900, False),
        (260_000, 200_000, 50_000, 1_200, True),
    ],
)
def test_per_tier_rates_match_a_direct_library_call(
    provider: str, model: str, pid: str, total: int, read: int, write: int, output: int, hour: bool
) -> None:
    kwargs = {
        "total_input": total,
        "cache_read": read,
        "cache_write": write,
        "output": output,
        "write_1h": hour,
    }
    assert price(provider, model, **kwargs) == pytest.approx(
        price_direct(provider, model, **kwargs), rel=1e-12, abs=1e-15
    )


def test_a_mixed_write_bill_prices_each_lifetime_at_its_own_rate() -> None:
    """60k written for 5 minutes at 1.25x and 40k for an hour at 2x the input rate."""
    mixed = price(
        "anthropic",
        "claude-sonnet-4-5",
        total_input=100_000,
        cache_write=100_000,
        cache_write_1h=40_000,
    )
    five = price("anthropic", "claude-sonnet-4-5", total_input=60_000, cache_write=60_000)
    hour = price(
        "anthropic", "claude-sonnet-4-5", total_input=40_000, cache_write=40_000, write_1h=True
    )
    assert mixed == pytest.approx(five + hour)
    assert hour / 40_000 == pytest.approx(2 * (five / 60_000) / 1.25)
    assert mixed == pytest.approx(
        price_direct(
            "anthropic",
            "claude-sonnet-4-5",
            total_input=100_000,
            cache_write=100_000,
            cache_write_1h=40_000,
        )
    )


def test_claude_on_bedrock_and_vertex_is_priced_by_that_platform() -> None:
    api = price("anthropic", "claude-sonnet-4-5-20250929", total_input=100_000)
    bedrock = price("anthropic-bedrock", "claude-sonnet-4-5-20250929", total_input=100_000)
    vertex = price("anthropic-vertex", "claude-sonnet-4-5@20250929", total_input=100_000)
    assert bedrock == pytest.approx(api * 1.1)  # regional endpoints
    assert vertex == pytest.approx(api)
