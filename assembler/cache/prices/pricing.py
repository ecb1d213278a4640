"""Request costs from the ``genai-prices`` package, offline.

No price is typed in here: every figure comes from the prices the package
ships. Its update function is never called, so nothing touches the network.
``input_tokens`` passed to ``calc_price`` is the TOTAL input, cached tokens
included; cache writes of a 1h lifetime are also reported as
``cache_write_1h_tokens`` (a subset of ``cache_write_tokens``), which the
package prices at the 1h write rate. Server-side web searches are billed per search on
top of the tokens, whatever the cache does: at the search price in force, not tiered.

A price context (``(("speed", "fast"),)``, ``(("service_tier", "priority"),)``,
``(("processing", "batch"),)``) selects the package's price variants for the request;
the empty context is the standard price, and costs no more than before contexts were.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from math import inf

from assembler.cache.prices.price_clock import PriceContext, PriceWindow, utc
from assembler.cache.prices.price_rates import PROVIDER_IDS as PROVIDER_IDS  # re-exported
from assembler.cache.prices.price_rates import PricingError as PricingError  # re-exported
from assembler.cache.prices.price_rates import (
    _calc,
    _Rates,
    _rates_at,
    _search_rate,
    _tier_starts,
    _window,
)
from assembler.cache.prices.price_rates import provider_id as provider_id  # re-exported


@dataclass(frozen=True)
class StepCost:
    usd: float
    usd_without_cache: float


def price(
    provider: str,
    model: str,
    *,
    total_input: int,
    cache_read: int = 0,
    cache_write: int = 0,
    output: int = 0,
    write_1h: bool = False,
    cache_write_1h: int | None = None,
    web_searches: int = 0,
    at: datetime | None = None,
    context: PriceContext = (),
) -> float:
    """USD for one request sent at ``at`` under price ``context``; ``total_input``
    includes the cached tokens.

    ``cache_write_1h`` is the part of ``cache_write`` written with a 1-hour lifetime
    (priced at the 1h rate, the rest at the 5m rate); without it ``write_1h`` says
    whether all writes or none were. ``at`` picks the price in force then (a model's
    price can change on a date or with the time of day); None: the price in force now.
    ``web_searches``: the server-side searches the request ran, each billed on its own.
    """
    w = _window(provider, model, at, context)
    r = _rates_at(provider, model, total_input, w, context)
    hour = _hour_part(cache_write, write_1h, cache_write_1h)
    usd = _usd(r, total_input, cache_read, cache_write, hour, output)
    if web_searches > 0:  # as StepPricer.cost adds it: exactly, rounded once
        return float(
            Fraction(usd) + Fraction(_search_rate(provider, model, w, context) * web_searches)
        )
    return float(usd)


def _usd(r: _Rates, total: int, read: int, write: int, hour: int, output: int) -> Decimal:
    """The decimal sum of one request at rates ``r`` (``hour``: the 1h part of ``write``);
    a term that is zero adds nothing, so it is left out."""
    usd = r.input * (total - read - write)
    if read:
        usd += r.read * read
    if write - hour:
        usd += r.write * (write - hour)
    if hour:
        usd += r.write_1h * hour
    if output:
        usd += r.output * output
    return usd


def _hour_part(cache_write: int, write_1h: bool, cache_write_1h: int | None) -> int:
    if cache_write_1h is not None:
        return max(0, min(cache_write, cache_write_1h))
    return cache_write if write_1h else 0


def price_direct(
    provider: str,
    model: str,
    *,
    total_input: int,
    cache_read: int = 0,
    cache_write: int = 0,
    output: int = 0,
    write_1h: bool = False,
    cache_write_1h: int | None = None,
    web_searches: int = 0,
    at: datetime | None = None,
    context: PriceContext = (),
) -> float:
    """The same as :func:`price` with one ``calc_price`` call (slower; for checks)."""
    fields = {"input_tokens": total_input, "output_tokens": output}
    if web_searches:
        fields["web_searches"] = web_searches
    if cache_read:
        fields["cache_read_tokens"] = cache_read
    if cache_write:
        # the package needs the parent count whenever the 1h part is given
        fields["cache_write_tokens"] = cache_write
        hour = _hour_part(cache_write, write_1h, cache_write_1h)
        if hour:
            fields["cache_write_1h_tokens"] = hour
    return float(_calc(provider, model, None if at is None else utc(at), context, **fields))


@lru_cache(maxsize=256)
def check_model(provider: str, model: str) -> None:
    """Raise :class:`PricingError` naming ``model`` when it has no price."""
    _calc(provider, model, None, input_tokens=1)
    _window(provider, model, None)


def step_cost(
    provider: str,
    model: str,
    *,
    read: int,
    write: int,
    uncached: int,
    output: int,
    ttl: str = "5m",
    write_1h: int | None = None,
    at: datetime | None = None,
    context: PriceContext = (),
    web_searches: int = 0,
) -> StepCost:
    """Cost of a step sent at ``at`` as simulated, and of the same step with no caching.

    ``write_1h`` is the part of ``write`` made with a 1-hour lifetime; without it
    ``ttl`` says which lifetime all writes had. ``at``, ``context``, ``web_searches``:
    as for :func:`price` (the search fee is in both figures)."""
    pricer = step_pricer(provider, model, ttl, context)
    usd, plain = pricer.cost(read, write, uncached, output, write_1h, at, web_searches)
    return StepCost(usd, plain)


class StepPricer:
    """:func:`step_cost` for one provider, model, write lifetime and price context, as
    plain numbers.

    The same figures as :func:`price` (the same rates and the same decimal sum, done
    in integers where no decimal step would round), without working out the provider,
    price, tier and arguments again at every step.
    """

    __slots__ = (
        "_by_tier",
        "_context",
        "_flat",
        "_hour",
        "_model",
        "_provider",
        "_span",
        "_starts",
        "_window",
    )

    def __init__(self, provider: str, model: str, ttl: str, context: PriceContext = ()) -> None:
        self._provider = provider
        self._model = model
        self._hour = ttl == "1h"
        self._context = context
        self._window: PriceWindow | None = None  # the price in force at the last step
        self._starts: tuple[int, ...] = ()
        self._flat: _Rates | None = None  # the rates of a price without tiers
        self._by_tier: dict[tuple[int, int], _Rates] = {}
        # the open interval of totals between two tier starts that the last rates
        # cover (a session's totals stay in one tier for many steps), and those rates
        self._span: tuple[float, float, _Rates | None] = (0, 0, None)

    def _enter(self, at: datetime | None) -> None:
        """Take the price in force at ``at``: its tiers, none of their rates yet."""
        w = self._window = _window(self._provider, self._model, at, self._context)
        self._starts = _tier_starts(self._provider, self._model, w)
        self._flat, self._by_tier, self._span = None, {}, (0, 0, None)

    def _rates(self, total: int, w: PriceWindow) -> _Rates:
        if not self._starts:
            if self._flat is None:
                self._flat = _rates_at(self._provider, self._model, total, w, self._context)
            return self._flat
        # the tier as _rates_at keys it: how many starts lie below, and at or below, the total
        starts = self._starts
        key = (bisect_left(starts, total), bisect_right(starts, total))
        rates = self._by_tier.get(key)
        if rates is None:
            rates = self._by_tier[key] = _rates_at(
                self._provider, self._model, total, w, self._context
            )
        below, above = key
        if below == above:  # strictly between two starts: the same key for all of them
            self._span = (
                starts[below - 1] if below else -inf,
                starts[below] if below < len(starts) else inf,
                rates,
            )
        return rates

    def cost(
        self,
        read: int,
        write: int,
        uncached: int,
        output: int,
        write_1h: int | None = None,
        at: datetime | None = None,
        searches: int = 0,
    ) -> tuple[float, float]:
        """USD as simulated and USD without any caching, for a request sent at ``at`` that
        ran ``searches`` server-side web searches (billed alike in both)."""
        w = self._window
        if w is None or (not w.always and (at is None or not w.holds(utc(at)))):
            self._enter(at)
            w = self._window
            assert w is not None
        total = read + write + uncached
        r = self._flat
        if r is None:
            low, high, r = self._span
            if r is None or not low < total < high:
                r = self._rates(total, w)
        # _hour_part, inlined
        hour = max(0, min(write, write_1h)) if write_1h is not None else write if self._hour else 0
        if searches > 0:  # rare: the exact sums and the fee, each figure rounded once
            fee = Fraction(_search_rate(self._provider, self._model, w, self._context) * searches)
            return float(Fraction(_usd(r, total, read, write, hour, output)) + fee), float(
                Fraction(_usd(r, total, 0, 0, 0, output)) + fee
            )
        scaled = r.scaled
        if scaled is not None:
            i, rd, wr, wr_1h, out, unit, limit = scaled
            # counts of no sign below the limit (total bounds its parts; 0 <= hour <= write)
            if read >= 0 and write >= 0 and uncached >= 0 and total < limit and 0 <= output < limit:
                # the decimal sums of _usd, exact in integers: a true division of two
                # integers rounds as float() of the exact decimal does (correctly)
                return (
                    (i * uncached + rd * read + wr * (write - hour) + wr_1h * hour + out * output)
                    / unit,
                    (i * total + out * output) / unit,
                )
        usd = _usd(r, total, read, write, hour, output)
        return float(usd), float(_usd(r, total, 0, 0, 0, output))

    @property
    def unpriced(self) -> tuple[str, ...]:
        """The context's keys the price in force at the last step has no variant for
        (that step was priced at the standard rates for them)."""
        return () if self._window is None else self._window.unpriced


_pricers = threading.local()


def step_pricer(
    provider: str, model: str, ttl: str = "5m", context: PriceContext = ()
) -> StepPricer:
    """The :class:`StepPricer` of ``provider``, ``model``, write lifetime ``ttl`` and price
    ``context``, one per thread: a pricer keeps the price window of its last step, so two
    analyses priced at once (two app sessions) must not share one."""
    kept: dict[tuple[str, str, str, PriceContext], StepPricer] | None = getattr(
        _pricers, "kept", None
    )
    if kept is None:
        kept = _pricers.kept = {}
    key = (provider, model, ttl, context)
    pricer = kept.get(key)
    if pricer is None:
        pricer = kept[key] = StepPricer(provider, model, ttl, context)
    return pricer
