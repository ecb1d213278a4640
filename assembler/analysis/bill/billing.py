"""What a session cost: as billed (from the usage the provider reported), as simulated, and
with no caching at all.

The billed cost prices each step's measured usage at the rates of the platform that served
it (the Anthropic API, AWS Bedrock or Google Vertex for Claude), with the writes made for an
hour at the 1-hour rate and the rest at the 5-minute rate, exactly as the bill splits them,
and the server-side web searches the request ran at the price per search.
"""

from __future__ import annotations

from dataclasses import dataclass

from assembler.analysis.engine import SessionAnalysis, StepAnalysis
from assembler.cache.prices.pricing import price


@dataclass(frozen=True)
class SessionCosts:
    """USD for a session. ``billed`` is ``None`` when no step recorded usage; it and
    ``simulated_billed_steps`` cover the steps that did, so the two compare like for like."""

    billed: float | None
    simulated: float
    without_cache: float
    simulated_billed_steps: float
    billed_steps: int
    steps: int


def billed_cost(step: StepAnalysis) -> float | None:
    """The step's measured usage priced at its platform's rates; ``None`` without usage."""
    return _billed(step, cached=True)


def billed_without_cache(step: StepAnalysis) -> float | None:
    """The step's billed tokens priced with nothing read from or written to a cache: what
    the bill would have been without caching, at the provider's own sizes."""
    return _billed(step, cached=False)


def _billed(step: StepAnalysis, cached: bool) -> float | None:
    u = step.measured
    if u is None:
        return None
    return price(
        step.platform or step.provider,
        step.model,
        total_input=u.input + u.cache_read + u.cache_write,
        cache_read=u.cache_read if cached else 0,
        cache_write=u.cache_write if cached else 0,
        cache_write_1h=u.cache_write_1h if cached else 0,
        output=u.output,
        web_searches=u.web_searches,
        at=step.timestamp,  # the price in force when the request was sent
        context=step.price_context,  # and in the tier (or speed) that served it
    )


def session_costs(analysis: SessionAnalysis) -> SessionCosts:
    """Billed, simulated and no-cache cost of ``analysis``'s session."""
    billed: float | None = None
    simulated_billed = 0.0
    count = 0
    for s in analysis.steps:
        usd = billed_cost(s)
        if usd is not None:
            billed = (billed or 0.0) + usd
            simulated_billed += s.usd
            count += 1
    return SessionCosts(
        billed=billed,
        simulated=sum(s.usd for s in analysis.steps),
        without_cache=sum(s.usd_without_cache for s in analysis.steps),
        simulated_billed_steps=simulated_billed,
        billed_steps=count,
        steps=len(analysis.steps),
    )


def billed_usd(analysis: SessionAnalysis) -> float | None:
    """What the provider billed for ``analysis``'s session; None where no step has usage."""
    return session_costs(analysis).billed
