"""Prices from the ``genai-prices`` package, offline: a model's rates in force at a
moment, as exact decimals (see ``pricing``, which turns them into request costs)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from assembler.cache.prices.price_clock import PriceContext, PriceWindow, utc, window
from assembler.errors import UsageError

#: Our provider names → genai-prices provider ids. Claude served by AWS Bedrock or Google
#: Vertex is billed by that platform (Bedrock's regional endpoints at 1.1x the API price).
PROVIDER_IDS = {
    "anthropic": "anthropic",
    "anthropic-bedrock": "aws",
    "anthropic-vertex": "google",
    "openai": "openai",
    "gemini": "google",
    "google": "google",
    "deepseek": "deepseek",
}


class PricingError(UsageError):
    """No price for a model: the message names the model and provider."""


def provider_id(provider: str) -> str:
    pid = PROVIDER_IDS.get(provider.lower())
    if pid is None:
        raise PricingError(
            f"no prices for provider {provider!r}; expected one of {', '.join(sorted(PROVIDER_IDS))}"
        )
    return pid


def _calc(
    provider: str,
    model: str,
    at: datetime | None,
    context: PriceContext = (),
    **fields: int,
) -> Decimal:
    """One call of ``genai_prices.calc_price`` at time ``at`` (now when None) under
    ``context``; total input in ``input_tokens``.

    The package (and pydantic under it) is imported on the first price asked
    for, so that commands and pages that price nothing do not load it.
    """
    from genai_prices import Usage, calc_price

    pid = provider_id(provider)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unknown usage keys are impossible here
            result = calc_price(
                Usage(**fields),
                model_ref=model,
                provider_id=pid,
                genai_request_timestamp=at,
                price_context=dict(context) if context else None,
            )
    except (LookupError, ValueError) as exc:
        raise PricingError(
            f"genai-prices has no price for model {model!r} of provider {pid!r} ({exc})"
        ) from None
    return Decimal(result.total_price)


_windows: dict[tuple[str, str, PriceContext], PriceWindow] = {}


def _window(
    provider: str, model: str, at: datetime | None, context: PriceContext = ()
) -> PriceWindow:
    """The price of ``model`` in force at ``at`` (now when None) under ``context`` and
    until when; the last answer per model and context is kept while it holds (requests
    come in time order)."""
    moment = utc(at)
    last = _windows.get((provider, model, context))
    if last is not None and last.holds(moment):
        return last
    pid = provider_id(provider)
    try:
        w = _windows[provider, model, context] = window(pid, model, moment, context)
        return w
    except LookupError as exc:
        raise PricingError(
            f"genai-prices has no price for model {model!r} of provider {pid!r} ({exc})"
        ) from None


def _starts_of(prices: Any) -> tuple[int, ...]:
    """Input-token thresholds where a price's rates change (its tiers' starts)."""
    starts = {
        int(tier.start)
        for value in vars(prices).values()
        for tier in (getattr(value, "tiers", None) or ())
    }
    return tuple(sorted(starts))


_starts: dict[tuple[str, str, int, tuple[int, ...]], tuple[int, ...]] = {}


def _tier_starts(provider: str, model: str, w: PriceWindow) -> tuple[int, ...]:
    """The tier starts of the price in force in ``w`` (its variants laid over it), read
    from the package."""
    key = (provider, model, w.variant, w.overrides)
    starts = _starts.get(key)
    if starts is None:
        starts = _starts[key] = _starts_of(w.prices)
    return starts


@dataclass(frozen=True)
class _Rates:
    """USD per token, as genai-prices charges them within one price tier."""

    input: Decimal
    read: Decimal
    write: Decimal
    write_1h: Decimal
    output: Decimal
    # the same rates as integers over one power of ten, for StepPricer.cost (None: not
    # all finite and non-negative)
    scaled: tuple[int, int, int, int, int, int, int] | None = field(
        init=False, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "scaled", _scaled(self))


def _scaled(r: _Rates) -> tuple[int, int, int, int, int, int, int] | None:
    """(input, read, write, write_1h, output as integers over 10**k, 10**k, the largest
    token count each may multiply for :meth:`StepPricer.cost` to stay exact)."""
    rates = (r.input, r.read, r.write, r.write_1h, r.output)
    if not all(x.is_finite() and not x.is_signed() for x in rates):
        return None
    exponents = [x.as_tuple().exponent for x in rates]
    k = max(0, *(-e for e in exponents if isinstance(e, int)))
    ints = [int(x.scaleb(k)) for x in rates]
    # five products of at most this many tokens sum below 10**27: every decimal step
    # of _usd, at the default 28 digits, is then exact (none is rounded)
    limit = 10**27 // (5 * max(1, *ints))
    return ints[0], ints[1], ints[2], ints[3], ints[4], 10**k, limit


_RatesKey = tuple[str, str, int, tuple[int, ...], tuple[tuple[bool, bool], ...]]
_rates: dict[_RatesKey, _Rates] = {}


def _rates_at(
    provider: str, model: str, total_input: int, w: PriceWindow, context: PriceContext = ()
) -> _Rates:
    """Per-token rates at ``total_input`` under the price in force in ``w``, derived from
    the package once per price, variants and tier (the variants ``context`` selects
    in ``w`` are ``w.overrides``: they, not the context, decide the rates).

    Within a tier genai-prices is linear in each token count, so five calls at
    one total give the rates for every request of that tier; calling it per
    step would dominate ``analyze``.
    """
    tier = tuple((total_input > s, total_input >= s) for s in _tier_starts(provider, model, w))
    key = (provider, model, w.variant, w.overrides, tier)
    rates = _rates.get(key)
    if rates is None:
        t, at, c = max(total_input, 1), w.start, context
        base = _calc(provider, model, at, c, input_tokens=t)
        rates = _Rates(
            input=base / t,
            read=_calc(provider, model, at, c, input_tokens=t, cache_read_tokens=t) / t,
            write=_calc(provider, model, at, c, input_tokens=t, cache_write_tokens=t) / t,
            write_1h=_calc(
                provider,
                model,
                at,
                c,
                input_tokens=t,
                cache_write_tokens=t,
                cache_write_1h_tokens=t,
            )
            / t,
            output=(_calc(provider, model, at, c, input_tokens=t, output_tokens=t) - base) / t,
        )
        _rates[key] = rates
    return rates


_searches: dict[tuple[str, str, int, tuple[int, ...]], Decimal] = {}


def _search_rate(provider: str, model: str, w: PriceWindow, context: PriceContext) -> Decimal:
    """USD per web search under the price in force in ``w``, derived from the package
    once per price and variants (a search fee is not tiered by tokens)."""
    key = (provider, model, w.variant, w.overrides)
    rate = _searches.get(key)
    if rate is None:
        base = _calc(provider, model, w.start, context, input_tokens=1)
        with_one = _calc(provider, model, w.start, context, input_tokens=1, web_searches=1)
        rate = _searches[key] = with_one - base
    return rate
