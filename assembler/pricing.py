"""Request costs from the ``genai-prices`` package, offline.

No price is typed in here: every figure comes from the prices the package
ships. Its update function is never called, so nothing touches the network.
``input_tokens`` passed to ``calc_price`` is the TOTAL input, cached tokens
included; cache writes of a 1h lifetime are also reported as
``cache_write_1h_tokens`` (a subset of ``cache_write_tokens``), which the
package prices at the 1h write rate.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from genai_prices import Usage, calc_price

from assembler.errors import UsageError

#: Our provider names → genai-prices provider ids.
PROVIDER_IDS = {
    "anthropic": "anthropic",
    "openai": "openai",
    "gemini": "google",
    "google": "google",
    "deepseek": "deepseek",
}


class PricingError(UsageError):
    """No price for a model: the message names the model and provider."""


@dataclass(frozen=True)
class StepCost:
    usd: float
    usd_without_cache: float


def provider_id(provider: str) -> str:
    pid = PROVIDER_IDS.get(provider.lower())
    if pid is None:
        raise PricingError(
            f"no prices for provider {provider!r}; expected one of {', '.join(sorted(PROVIDER_IDS))}"
        )
    return pid


@lru_cache(maxsize=4096)
def price(
    provider: str,
    model: str,
    *,
    total_input: int,
    cache_read: int = 0,
    cache_write: int = 0,
    output: int = 0,
    write_1h: bool = False,
) -> float:
    """USD for one request; ``total_input`` includes the cached tokens."""
    fields: dict[str, Any] = {"input_tokens": total_input, "output_tokens": output}
    if cache_read:
        fields["cache_read_tokens"] = cache_read
    if cache_write:
        fields["cache_write_tokens"] = cache_write
        if write_1h:
            fields["cache_write_1h_tokens"] = cache_write
    pid = provider_id(provider)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unknown usage keys are impossible here
            result = calc_price(Usage(**fields), model_ref=model, provider_id=pid)
    except LookupError as exc:
        raise PricingError(
            f"genai-prices has no price for model {model!r} of provider {pid!r} ({exc})"
        ) from None
    return float(result.total_price)


def check_model(provider: str, model: str) -> None:
    """Raise :class:`PricingError` naming ``model`` when it has no price."""
    price(provider, model, total_input=1)


def step_cost(
    provider: str,
    model: str,
    *,
    read: int,
    write: int,
    uncached: int,
    output: int,
    ttl: str = "5m",
) -> StepCost:
    """Cost of a step as simulated, and of the same step with no caching at all."""
    total = read + write + uncached
    usd = price(
        provider,
        model,
        total_input=total,
        cache_read=read,
        cache_write=write,
        output=output,
        write_1h=ttl == "1h",
    )
    plain = price(provider, model, total_input=total, output=output)
    return StepCost(usd, plain)
