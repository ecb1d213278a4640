"""A recorded request's price context: the settings that select a model's price variant.

The package's variants are keyed by ``speed`` (Anthropic's fast mode), ``service_tier``
(OpenAI's default, priority, flex and fast tiers; Google's flex and priority) and
``processing: batch``. Our recorded values are mapped onto those keys as the package
spells them: a standard tier or speed is no context at all (the standard price), and
Anthropic's ``batch`` tier is batch processing. A value the package has no variant for
stays in the context; the pricer then reports it as priced at the standard rates.
"""

from __future__ import annotations

from assembler.cache.prices.price_clock import PriceContext
from assembler.cache.prices.pricing import PROVIDER_IDS
from assembler.sessions.model import STANDARD_TIERS, RequestSettings


def price_context(settings: RequestSettings | None) -> PriceContext:
    """The price context ``settings`` record; ``()`` for a standard request."""
    if settings is None or (settings.speed is None and settings.service_tier is None):
        return ()
    found: dict[str, str] = {}
    speed = (settings.speed or "").lower()
    if speed and speed not in STANDARD_TIERS:
        found["speed"] = speed
    tier = (settings.service_tier or "").lower()
    if tier == "batch":
        found["processing"] = "batch"
    elif tier and tier not in STANDARD_TIERS:
        found["service_tier"] = tier
    return tuple(sorted(found.items()))


def unpriced_warning(context: PriceContext, keys: tuple[str, ...], model: str) -> str:
    """The step warning for the context's ``keys`` that no price of ``model`` names."""
    named = ", ".join(f"{k} {v!r}" for k, v in context if k in keys)
    return f"no price for {named} of model {model!r}: priced at the standard rates"


def recorded_context(
    settings: RequestSettings | None, pricing_provider: str, recorded_provider: str
) -> PriceContext:
    """The price context of a request recorded with ``recorded_provider`` and priced at
    ``pricing_provider``'s prices: none when the two bill apart (a tier or fast mode one
    provider recorded says nothing of another's prices, as under ``--provider``)."""
    if settings is None:
        return ()
    context = price_context(settings)
    if context and pricing_provider.lower() != recorded_provider.lower():
        pricing = PROVIDER_IDS.get(pricing_provider.lower())
        if pricing is None or pricing != PROVIDER_IDS.get(recorded_provider.lower()):
            return ()
    return context
