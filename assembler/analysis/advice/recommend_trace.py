"""A session's requests under one arrangement, as the breakpoint search reads them.

One pass assembles every step (no breakpoints), measures each block as the
Anthropic simulator does (same segmenter, same prefix keys) and records, per
candidate boundary, the prefix tokens and whether an entry written there on
the previous requests would still be alive under each lifetime.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
from numpy.typing import NDArray

from assembler.analysis.advice.breakpoint_search import Floats, Trace
from assembler.analysis.engine import TTLS, Layout, SessionAssembler
from assembler.cache.prices.price_clock import PriceContext
from assembler.cache.prices.price_context import recorded_context
from assembler.cache.prices.pricing import price
from assembler.cache.rules import anthropic_minimum, parse_duration, rules
from assembler.cache.segmenter import Segmenter
from assembler.cache.tokenizers import counter, tokenizer_for
from assembler.design.calltree_scalars import estimate_tokens
from assembler.design.wire import WireBuilder
from assembler.sessions.model import Session


@dataclass(frozen=True)
class StepFacts:
    """What the explanations need besides the trace: gaps between calls, per session."""

    gaps: tuple[float, ...]  # seconds since the previous call of the same session (0 for a first)
    changed: dict[str, int]  # component → steps whose text differed from the previous step
    tree_sizes: tuple[int, ...] = ()  # per step, the call tree's size in the budget's own tokens


#: The blocks a ``tree_budget`` bounds (the call tree, or its two halves when split).
TREES = frozenset({"call_tree", "call_structure", "call_io"})

#: The lifetime of an entry kept alive for ever: what a keep-alive request could save.
FOREVER = "forever"


def lifetimes() -> dict[str, float]:
    """Seconds per lifetime the search may choose, and one without expiry."""
    allowed = rules()["anthropic"]["ttl"]["allowed"]
    out = {ttl: parse_duration(allowed[ttl]).total_seconds() for ttl in TTLS}
    out[FOREVER] = float("inf")
    return out


def step_rates(
    provider: str,
    models: Sequence[str],
    totals: Floats,
    moments: Sequence[datetime],
    contexts: Sequence[PriceContext],
) -> tuple[Floats, Floats, dict[str, Floats]]:
    """USD per token of each request, at its model, time and price context: uncached, read,
    and written for each lifetime."""
    safe = np.maximum(totals, 1.0)

    def rate(**kind: bool) -> Floats:
        return np.array(
            [
                price(
                    provider,
                    model,
                    total_input=int(x),
                    cache_read=int(x) if kind.get("read") else 0,
                    cache_write=int(x) if kind.get("write") else 0,
                    write_1h=kind.get("hour", False),
                    at=at,
                    context=context,
                )
                / x
                for x, model, at, context in zip(safe, models, moments, contexts, strict=True)
            ]
        )

    return rate(), rate(read=True), {"5m": rate(write=True), "1h": rate(write=True, hour=True)}


def build_trace(
    sessions: Sequence[Session], layout: Layout, provider: str, model: str
) -> tuple[Trace, StepFacts]:
    """The trace of ``sessions`` under ``layout``'s arrangement, billed at ``provider``/``model``."""
    segmenter = Segmenter(counter(tokenizer_for(provider, model).encoding))
    minimum = anthropic_minimum(model) if provider == "anthropic" else 0
    spans = lifetimes()
    bare = replace(layout, breakpoints=())
    names: list[str] = []
    rows: list[dict[str, tuple[int, int]]] = []  # per step: name → (cum tokens, prefix key)
    times: list[float] = []
    moments: list[datetime] = []  # when each step is sent: the price in force then
    contexts: list[PriceContext] = []  # and the tier or speed it was served in
    totals: list[int] = []
    outputs = 0.0
    gaps: list[float] = []
    changed: dict[str, int] = {}
    starts: list[int] = []
    trees: list[int] = []
    for session in sessions:
        # assembled for the provider and model it is billed at, as analyze does
        assembler = SessionAssembler(session, bare, provider=provider, model=model)
        if not names:
            names = [c.name for c in assembler.registry if c.cacheable]
        builder = WireBuilder(())
        starts.append(len(rows))
        last_text: dict[str, str] = {}
        previous: float | None = None
        for step in assembler.steps():
            if step.call.request is not None:
                continue  # a recorded request is sent as recorded, whatever the layout
            wire = builder.build(assembler.assemble(step).assembly)
            h = hash(("anthropic", model))
            running = 0
            row: dict[str, tuple[int, int]] = {}
            cacheable = True
            for b in wire.blocks:
                n, fingerprint = segmenter.measure(b)
                running += n
                h = hash((h, b.section, fingerprint))
                cacheable = cacheable and b.cacheable
                if cacheable:
                    row[b.name] = (running, h)
                if last_text.get(b.name) not in (None, b.text):
                    changed[b.name] = changed.get(b.name, 0) + 1
                last_text[b.name] = b.text
            trees.append(sum(estimate_tokens(b.text) for b in wire.blocks if b.name in TREES))
            now = step.at.timestamp()
            gaps.append(now - previous if previous is not None else 0.0)
            previous = now
            rows.append(row)
            times.append(now)
            moments.append(step.at)
            # a context recorded for another provider's prices is not this one's
            context = recorded_context(step.call.settings, provider, step.context.profile.provider)
            contexts.append(context)
            totals.append(running)
            usage = step.call.usage
            output = usage.output if usage else segmenter.counter.count(step.call.output)
            outputs += price(
                provider, model, total_input=0, output=output, at=step.at, context=context
            )
    steps = len(rows)
    cum = np.zeros((len(names), steps))
    alive = {ttl: np.zeros((len(names), steps), dtype=bool) for ttl in spans}
    session_of = np.searchsorted(np.array(starts), np.arange(steps), side="right")
    written: dict[int, float] = {}
    current = -1
    for t, row in enumerate(rows):
        if session_of[t] != current:  # every session has its own cache
            current, written = session_of[t], {}
        for c, name in enumerate(names):
            hit = row.get(name)
            if hit is None or hit[0] < minimum:
                continue
            tokens, key = hit
            cum[c, t] = tokens
            last = written.get(key)
            if last is not None:
                for ttl, seconds in spans.items():
                    alive[ttl][c, t] = times[t] - last < seconds
            written[key] = times[t]
    total = np.array(totals, dtype=float)
    uncached_rate, read_rate, write_rate = step_rates(
        provider, [model] * steps, total, moments, contexts
    )
    # drop a component never emitted ahead of the first uncacheable block
    emitted: NDArray[np.bool_] = np.asarray(cum.any(axis=1), dtype=bool)
    keep = [bool(x) for x in emitted.tolist()]
    trace = Trace(
        names=tuple(n for n, k in zip(names, keep, strict=True) if k),
        cum=cum[emitted],
        alive={ttl: a[emitted] for ttl, a in alive.items()},
        total=total,
        uncached_rate=uncached_rate,
        read_rate=read_rate,
        write_rate=write_rate,
        output_usd=outputs,
    )
    return trace, StepFacts(tuple(gaps), changed, tuple(trees))
