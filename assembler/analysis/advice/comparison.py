"""Two layouts side by side on one session: where they first diverge, and the cost of each."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from assembler.analysis.advice.compare_steps import first_block_difference, pairs
from assembler.analysis.advice.recommendation import only_recorded
from assembler.analysis.engine import Layout, SessionAnalysis, analyze
from assembler.sessions.model import Session

# --- compare ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    base: SessionAnalysis
    head: SessionAnalysis
    first_divergent_step: int | None
    breaking_component: str | None
    breaking_layer: str | None
    hit_ratio_drop_points: float  # (base − head) hit ratio, in percentage points
    cost_increase_percent: float  # (head − base) / base cost, in percent
    sentence: str | None = None  # the head's miss sentence at the divergent step

    def json(self) -> dict[str, Any]:
        def side(a: SessionAnalysis) -> dict[str, Any]:
            t = a.totals
            return {
                "layout": a.layout,
                "tokens": t["tokens"],
                "read": t["read"],
                "write": t["write"],
                "uncached": t["uncached"],
                "hit_ratio": round(t["hit_ratio"], 6),
                "usd": round(t["usd"], 8),
                "usd_without_cache": round(t["usd_without_cache"], 8),
            }

        return {
            "session": self.base.session,
            "provider": self.base.provider,
            "model": self.base.model,
            "base": side(self.base),
            "head": side(self.head),
            "first_divergent_step": self.first_divergent_step,
            "breaking_component": self.breaking_component,
            "breaking_layer": self.breaking_layer,
            "sentence": self.sentence,
            "hit_ratio_drop_points": round(self.hit_ratio_drop_points, 4),
            "cost_increase_percent": round(self.cost_increase_percent, 4),
        }


def same_under_both(session: Session, base: Layout, head: Layout, ttl: str | None) -> bool:
    """Whether two layouts give ``session`` the same analysis without running both: every
    call is a recorded request, replayed as sent, so a layout reaches it only through its
    default lifetime (an uncached step is timed and priced by it)."""
    return only_recorded(session) and (ttl or base.ttl) == (ttl or head.ttl)


def compare(
    session: Session,
    base: Layout,
    head: Layout,
    *,
    provider: str | None = None,
    model: str | None = None,
    ttl: str | None = None,
    analysed: SessionAnalysis | None = None,
) -> Comparison:
    """Analyse ``session`` under two layouts (separate caches) and locate the break;
    ``analysed``: the base's analysis at these settings, when the caller holds it already."""
    a = analysed or analyze(session, base, provider=provider, model=model, ttl=ttl)
    if same_under_both(session, base, head, ttl):
        b = replace(a, layout=head.name)
    else:
        b = analyze(session, head, provider=provider, model=model, ttl=ttl)
    # The first step where read, write, uncached or cost differs: the app's banner says the same.
    index = next((i for i, p in enumerate(pairs(a, b)) if p.differs), None)
    component = layer = sentence = None
    if index is not None:
        h = b.steps[index]
        if h.miss is not None:
            component, layer, sentence = h.miss.component, h.miss.layer, h.miss.sentence
        else:
            block = first_block_difference(a.steps[index], h)
            if block is not None:
                component, layer = block.name, block.layer
    drop = (a.totals["hit_ratio"] - b.totals["hit_ratio"]) * 100
    base_usd = a.totals["usd"]
    increase = (b.totals["usd"] - base_usd) / base_usd * 100 if base_usd else 0.0
    return Comparison(
        base=a,
        head=b,
        first_divergent_step=a.steps[index].step if index is not None else None,
        breaking_component=component,
        breaking_layer=layer,
        hit_ratio_drop_points=drop,
        cost_increase_percent=increase,
        sentence=sentence,
    )
