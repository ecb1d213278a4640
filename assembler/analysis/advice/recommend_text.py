"""One sentence per recommended change, explained from the sessions' own numbers."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import yaml

from assembler.analysis.advice.breakpoint_search import Floats, Trace
from assembler.analysis.advice.mixed_lifetimes import MixedChoice
from assembler.analysis.advice.recommend_trace import FOREVER, StepFacts
from assembler.analysis.engine import ComponentMove, Layout
from assembler.design.calltree import RenderRange


def arrangement_sentences(
    moves: Mapping[str, ComponentMove], facts: StepFacts, steps: int
) -> list[str]:
    out = []
    still = [n for n in moves if not facts.changed.get(n, 0)]
    for name, move in moves.items():
        changed = facts.changed.get(name, 0)
        if not changed:
            continue
        where = f"{move.layer.value} " if move.layer else ""
        out.append(
            f"{name} to {where}order {move.order}: its text changed on {changed} of {steps} calls,"
            " so more stable blocks go ahead of it."
        )
    if still:
        out.append(
            f"{', '.join(still)} move{'s' if len(still) == 1 else ''} up: "
            f"{'its' if len(still) == 1 else 'their'} text never changed."
        )
    return out


Place = tuple[str, int, str]  # a component's layer, order and placement


def start_sentence(
    current: Layout,
    start: Layout,
    before: Mapping[str, Place],
    after: Mapping[str, Place],
    searched: bool = True,
) -> str:
    """Why the result starts from a built-in layout: how its arrangement differs from the
    current one's (its lifetime too, where no breakpoint search chose one: ``searched``
    false). A start shows the model what the current layout does (``recommend.starts``)."""
    parts = []
    if not searched and current.ttl != start.ttl:
        parts.append(f"ttl {current.ttl or 'unset'} → {start.ttl or 'unset'}")
    for name, (layer, order, where) in after.items():
        old = before.get(name)
        if old is not None and old != (layer, order, where):
            at = f" {where}" if where != old[2] else ""
            parts.append(f"{name} {old[0]} order {old[1]} → {layer} order {order}{at}")
    detail = f": {'; '.join(parts)}" if parts else ""
    return (
        f"From the built-in layout {start.name}, not {current.name}{detail}"
        f" (no arrangement reached from {current.name} bills as little)."
    )


Marks = tuple[tuple[str, str], ...]  # (boundary, lifetime) in wire order


def _read_matrix(trace: Trace, marks: Marks, kind: str | None = None) -> Floats:
    """Per mark and request: the prefix it reads (its own lifetime, or ``kind``), else 0."""
    index = {n: i for i, n in enumerate(trace.names)}
    if not marks:
        return np.zeros((0, trace.steps))
    return np.array([trace.read(kind or ttl)[index[n]] for n, ttl in marks])


def _reads(trace: Trace, marks: Marks) -> dict[str, tuple[int, float]]:
    """Per chosen boundary: calls on which it was the longest read, and tokens read there."""
    read = _read_matrix(trace, marks)
    out: dict[str, tuple[int, float]] = {}
    if not marks:
        return out
    longest = read.argmax(axis=0)
    any_read = read.max(axis=0) > 0
    for k, (name, _) in enumerate(marks):
        mine = any_read & (longest == k)
        out[name] = (int(mine.sum()), float(read[k][mine].sum()))
    return out


def breakpoint_sentences(current: Layout, marks: Marks, trace: Trace) -> list[str]:
    before = ", ".join(current.breakpoints) or "none"
    after = ", ".join(f"after:{n}" for n, _ in marks) or "none"
    out = [f"Breakpoints {before} → {after} ({len(marks)} of at most 4)."]
    for name, (calls, tokens) in _reads(trace, marks).items():
        if calls:
            out.append(
                f"Breakpoint after {name}: the longest read on {calls} of {trace.steps} calls"
                f" (≈ {tokens / calls:,.0f} tokens each)."
            )
        else:
            out.append(
                f"Breakpoint after {name}: never the longest read, but it writes the prefix"
                " the next call reads through the lookback."
            )
    return out


def budget_sentence(budget: int, sizes: Sequence[int], usd: float, without: float) -> str:
    over = sum(s > budget for s in sizes)
    return (
        f"tree_budget {budget:,}: the call tree is over it on {over} of {len(sizes)} calls"
        f" (largest ≈ {max(sizes, default=0):,} tokens), and folding it there bills"
        f" ${usd:.4f} instead of ${without:.4f}. This changes what the model sees: past the"
        " budget, finished subtrees lose their structure and the oldest finished calls are"
        " counted, not shown."
    )


def gap_counts(gaps: Sequence[float], seconds: Mapping[str, float]) -> tuple[int, int, int]:
    real = [g for g in gaps if g > 0]
    short = sum(g < seconds["5m"] for g in real)
    middle = sum(seconds["5m"] <= g < seconds["1h"] for g in real)
    return len(real), short, middle


def ttl_sentence(ttl: str, gaps: Sequence[float], seconds: Mapping[str, float]) -> str:
    n, short, middle = gap_counts(gaps, seconds)
    if ttl == "1h":
        return (
            f"1h on every breakpoint: {middle} of {n} idle gaps are 5–60 min, long enough to"
            " lose a 5m entry and short enough for a 1h one."
        )
    return (
        f"5m on every breakpoint: {short} of {n} gaps between calls are under 5 min and"
        f" {middle} {'is' if middle == 1 else 'are'} 5–60 min, too few to pay for 1h writes."
    )


def mixed_sentence(
    trace: Trace,
    mixed: MixedChoice,
    uniform_usd: float,
    gaps: Sequence[float],
    seconds: Mapping[str, float],
) -> str:
    n, _, middle = gap_counts(gaps, seconds)
    hour = [f"after {name}" for name, ttl in mixed.marks if ttl == "1h"]
    five = [name for name, ttl in mixed.marks if ttl == "5m"]
    tail = ""
    if five:
        c = trace.names.index(five[0])
        sent = trace.cum[c] > 0
        rewritten = int((sent & ~trace.alive["5m"][c]).sum())
        tail = (
            f", 5m {', '.join(f'after {f}' for f in five)}: that prefix is written again on"
            f" {rewritten} of {int(sent.sum())} calls anyway, so at the cheaper 5m rate"
        )
    return (
        f"A lifetime per breakpoint, 1h {', '.join(hour)}{tail}; {middle} of {n} idle gaps"
        f" {'is' if middle == 1 else 'are'} 5–60 min, which the 1h prefix outlives"
        f" (${mixed.usd:.4f} instead of ${uniform_usd:.4f} with one lifetime for all)."
    )


def keep_alive_sentence(
    trace: Trace, marks: Marks, gaps: Sequence[float], seconds: Mapping[str, float]
) -> str:
    """Whether a minimal request just before expiry would cost less than the rewrite it saves.

    Per request: ``h`` is what the marks read as they are, ``kept`` what they would
    read if no entry ever expired. Where an idle gap outlived the entry that gives
    ``kept``, pings every lifetime of that entry (each reading the prefix) would
    have kept it; they pay when they cost less than writing ``kept - h`` again
    instead of reading it (up to the last 1h mark at the 1h rate, beyond at 5m).
    """
    if not marks:
        return "Keep-alive: no breakpoint, nothing to keep alive."
    h = _read_matrix(trace, marks).max(axis=0)
    forever = _read_matrix(trace, marks, FOREVER)
    kept, which = forever.max(axis=0), forever.argmax(axis=0)
    index = {n: i for i, n in enumerate(trace.names)}
    hours = [index[n] for n, ttl in marks if ttl == "1h"]
    m1 = trace.cum[hours].max(axis=0) if hours else np.zeros(trace.steps)
    pays = candidates = 0
    saved = 0.0
    for t in range(trace.steps):
        lifetime = seconds[marks[int(which[t])][1]]
        if kept[t] <= h[t] or gaps[t] <= lifetime:
            continue
        candidates += 1
        pings = math.floor(gaps[t] / lifetime)
        ping_cost = pings * trace.read_rate[t] * kept[t]
        split = max(min(m1[t], kept[t]), h[t])
        rewrite = trace.write_rate["1h"][t] * (split - h[t]) + trace.write_rate["5m"][t] * (
            kept[t] - split
        )
        saving = rewrite - trace.read_rate[t] * (kept[t] - h[t])
        if saving > ping_cost:
            pays += 1
            saved += saving - ping_cost
    lives = "/".join(sorted({ttl for _, ttl in marks}))
    if not candidates:
        return f"Keep-alive: no entry expires between calls under {lives}; nothing to refresh."
    if not pays:
        return (
            f"Keep-alive does not pay: on all {candidates} gaps that outlive a {lives} entry,"
            " the pings would cost more than rewriting the prefix."
        )
    return (
        f"Keep-alive pays on {pays} of {candidates} gaps that outlive a {lives} entry:"
        f" a minimal request before expiry would save ${saved:.4f} over these sessions."
    )


def layout_text(layout: Layout) -> str:
    """``layout`` as a layout file that ``compare`` and the app read back to the same layout."""
    data: dict[str, Any] = {"name": layout.name}
    if layout.description:
        data["description"] = layout.description
    components: dict[str, dict[str, Any]] = {}
    for name, move in layout.components.items():
        entry: dict[str, Any] = {}
        if move.layer is not None:
            entry["layer"] = move.layer.value
        if move.order is not None:
            entry["order"] = move.order
        if move.placement is not None:
            entry["placement"] = move.placement.value
        if not move.enabled:
            entry["enabled"] = False
        if move.cacheable is not None:
            entry["cacheable"] = move.cacheable
        components[name] = entry
    if components:
        data["components"] = components
    if layout.add:
        data["add"] = list(layout.add)
    expose: dict[str, Any] = {}
    if layout.default_expose is not None:
        expose["default"] = layout.default_expose.value
    if layout.expose:
        expose["functions"] = {k: v.value for k, v in layout.expose.items()}
    if expose:
        data["expose"] = expose
    ranges: dict[str, Any] = {}
    if layout.default_range is not None:
        ranges["default"] = _range(layout.default_range)
    if layout.render_range:
        ranges["functions"] = {k: _range(v) for k, v in layout.render_range.items()}
    if ranges:
        data["render_range"] = ranges
    data["breakpoints"] = [
        {"at": a, "ttl": layout.breakpoint_ttl[a]} if a in layout.breakpoint_ttl else a
        for a in layout.breakpoints
    ]
    if layout.ttl is not None:
        data["ttl"] = layout.ttl
    if layout.tree_budget is not None:
        data["tree_budget"] = layout.tree_budget
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def _range(r: RenderRange) -> dict[str, Any]:
    return {"callers": r.callers, "subcalls": r.subcalls}
