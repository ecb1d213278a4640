"""Which of a model's prices is in force at a moment, and until when.

For some models genai-prices keeps several prices, each with a condition: a start
date (a price change, such as Claude Sonnet 4.6's on 2026-03-13) or a daily
window of time (DeepSeek's off-peak hours). The package picks the price in force
at the request's timestamp, and at the current time when it is given none, so a
recorded request must be priced at its own time or its cost would follow the
clock of the machine that analyses it. A :class:`PriceWindow` holds the answer
together with the next instant it can change, so the steps of a session ask the
package again only when they cross such an instant.

A request's price context (fast mode, a service tier, batch processing) selects the
package's price variants: partial prices laid over the price in force, each with its
own start date. The variant of the price in force is found without the context (by
identity among the conditional prices), then the context's overrides are applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from genai_prices.types import ModelInfo, ModelPrice


#: A request's price context as the package's variants spell it, sorted: ``(("speed", "fast"),)``.
PriceContext = tuple[tuple[str, str], ...]


def utc(at: datetime | None) -> datetime:
    """``at`` in UTC (a naive time is read as UTC, as the package does); now without one."""
    if at is None:
        return datetime.now(tz=UTC)
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


@dataclass(frozen=True, slots=True)
class PriceWindow:
    """The price in force from ``start`` (inclusive) to ``until`` (exclusive; None: from
    then on). ``always``: the model has one price, whatever the time."""

    variant: int  # its position among the model's conditional prices; 0 without conditions
    prices: ModelPrice
    start: datetime
    until: datetime | None
    always: bool = False
    # the price variants laid over it under the window's context (positions among the
    # model's variants), and the context's keys that no variant in force prices
    overrides: tuple[int, ...] = ()
    unpriced: tuple[str, ...] = ()

    def holds(self, at: datetime) -> bool:
        """Whether the price is in force at ``at`` (UTC)."""
        if self.always:
            return True
        return self.start <= at and (self.until is None or at < self.until)


@lru_cache(maxsize=256)
def model_info(provider_id: str, model: str) -> ModelInfo:
    """The package's entry for ``model`` of ``provider_id``; LookupError when it has none."""
    return _entry(provider_id, model)[0]


@lru_cache(maxsize=256)
def _entry(provider_id: str, model: str) -> tuple[ModelInfo, bool]:
    """The model's entry, and whether the provider lists it itself: the package ignores a
    price context for a model it finds under another provider (Claude on a cloud)."""
    from genai_prices.data_snapshot import get_snapshot

    provider, info = get_snapshot().find_provider_model(model, None, provider_id, None)
    return info, any(info is m for m in provider.models)


def _time_utc(value: time) -> time:
    """A time of day as a naive UTC time (a naive one already is)."""
    if value.tzinfo is None:
        return value
    moment = datetime.combine(date(1970, 1, 1), value).astimezone(UTC)
    return moment.time()


def _next_change(constraint: object, at: datetime) -> datetime | None:
    """The first instant after ``at`` at which ``constraint`` may start or stop holding;
    ``at`` itself for a kind of condition not known here (then nothing is kept)."""
    from genai_prices.types import StartDateConstraint, TimeOfDateConstraint

    if constraint is None:
        return None
    if isinstance(constraint, StartDateConstraint):
        # the package compares the request's UTC date: the price starts at UTC midnight
        starts = datetime.combine(constraint.start_date, time(), UTC)
        return starts if starts > at else None
    if isinstance(constraint, TimeOfDateConstraint):
        changes = []
        for moment in (constraint.start_time, constraint.end_time):
            today = datetime.combine(at.date(), _time_utc(moment), UTC)
            changes.append(today if today > at else today + timedelta(days=1))
        return min(changes)
    return at


def window(provider_id: str, model: str, at: datetime, context: PriceContext = ()) -> PriceWindow:
    """The price of ``model`` in force at ``at`` (UTC) under ``context`` and how long it
    stays so."""
    info, own = _entry(provider_id, model)
    prices = info.get_prices(at)
    conditional = info.prices if isinstance(info.prices, list) else []
    variant = next(i for i, c in enumerate(conditional) if c.prices is prices) if conditional else 0
    constraints = [c.constraint for c in conditional]
    overrides: tuple[int, ...] = ()
    unpriced: tuple[str, ...] = ()
    if context and own:
        constraints += [v.constraint for v in info.price_variants or ()]
        overrides, unpriced = _variants(info, at, dict(context))
        prices = info.get_prices(at, dict(context))
    elif context:
        unpriced = tuple(k for k, _ in context)
    if not any(c is not None for c in constraints):
        return PriceWindow(variant, prices, at, None, True, overrides, unpriced)
    changes = [c for c in (_next_change(c, at) for c in constraints) if c is not None]
    return PriceWindow(
        variant, prices, at, min(changes) if changes else None, False, overrides, unpriced
    )


def _variants(
    info: ModelInfo, at: datetime, context: dict[str, str]
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The variants ``context`` selects at ``at`` (as the package selects them), and the
    context's keys that none of them names."""
    chosen = [
        (i, v)
        for i, v in enumerate(info.price_variants or ())
        if (v.constraint is None or v.constraint.active(at))
        and all(context.get(key) == value for key, value in v.when.items())
    ]
    named = {key for _, v in chosen for key in v.when}
    return tuple(i for i, _ in chosen), tuple(k for k in context if k not in named)
