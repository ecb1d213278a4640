"""Per-step tokens, prompt-cache outcome, miss cause and cost for one session.

``analyze`` replays a session under a layout, feeds each step's wire to the
provider's cache simulator (``cache.py``) and prices it (``pricing.py``).
``compare`` runs two layouts side by side and says where they diverge.
The dataclasses and function names here are a contract the app codes against.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo

from assembler.cache import (
    CacheResult,
    CacheStore,
    Segmenter,
    Simulator,
    TokenPrefixSimulator,
    normalize_provider,
    simulator,
)
from assembler.layers import Layer
from assembler.layouts import Layout, builtin_layout
from assembler.pipeline import SessionAssembler
from assembler.pricing import check_model, step_cost
from assembler.replay import Step
from assembler.session import Exit, LLMCall, Session, Usage, format_time
from assembler.tokens import counter, tokenizer_for
from assembler.versions import SMALL, StoredText, TextVersions
from assembler.versions import read as read_text
from assembler.wire import WireBlock


@dataclass(frozen=True, slots=True)
class BlockAnalysis:
    name: str
    layer: str  # "L0" | "L1" | "L2"
    section: str  # "tools" | "system" | "messages"
    tokens: int
    cache: str  # "read" | "write" | "uncached"
    change: str  # "new" | "changed" | "unchanged" | "released"
    breakpoint: int | None
    stored: str | StoredText  # the text, or a version kept as a delta (see versions.py)
    cacheable: bool

    @property
    def text(self) -> str:
        return read_text(self.stored)


@dataclass(frozen=True, slots=True)
class Miss:
    component: str
    layer: str
    reason: str  # content changed | expired | below minimum | model switched | io released | history compacted | ...
    tokens_lost: int
    sentence: str


@dataclass(frozen=True, slots=True)
class StepAnalysis:
    step: int
    label: str | None
    function: str
    call_path: tuple[str, ...]
    depth: int
    timestamp: datetime
    tokens: dict[str, int]  # total, tools, L0, L1, L2 (L0 without the tools)
    read: int
    write: int
    uncached: int
    hit_ratio: float  # read / total
    cached_prefix_tokens: int
    miss: Miss | None
    usd: float
    usd_without_cache: float
    blocks: tuple[BlockAnalysis, ...]
    measured: Usage | None
    provider: str = ""
    model: str = ""


@dataclass(frozen=True)
class SessionAnalysis:
    session: str
    layout: str
    provider: str
    model: str
    ttl: str
    approximate_tokens: bool
    steps: tuple[StepAnalysis, ...]
    totals: dict[str, float] = field(default_factory=dict)


# --- one step -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Prev:
    """What the previous step left behind, for change and miss detection."""

    blocks: tuple[WireBlock, ...]
    read: int
    write: int
    model: str
    provider: str
    at: datetime
    day: str
    event_index: int

    def text_of(self, name: str) -> str | None:
        return next((b.text for b in self.blocks if b.name == name), None)


def _layer_tokens(blocks: Sequence[WireBlock], tokens: Sequence[int]) -> dict[str, int]:
    out = {"total": sum(tokens), "tools": 0, "L0": 0, "L1": 0, "L2": 0}
    for b, n in zip(blocks, tokens, strict=True):
        out["tools" if b.section == "tools" else b.layer] += n  # a StrEnum: "L0" == Layer.L0
    return out


_LAYER_NAMES = {layer: layer.value for layer in Layer}


def _changes(blocks: Sequence[WireBlock], prev: _Prev | None, released: bool) -> tuple[str, ...]:
    if prev is None:
        return ("new",) * len(blocks)
    out: list[str] = []
    before = prev.blocks
    for i, b in enumerate(blocks):
        if i < len(before) and before[i] is b:  # the very block of the last step
            out.append("unchanged")
            continue
        old = before[i].text if i < len(before) and before[i].name == b.name else None
        if old is None:
            old = prev.text_of(b.name)
        if old is None:
            out.append("new")
        elif old is b.text or old == b.text:
            out.append("unchanged")
        elif released and b.name == "call_tree":
            out.append("released")
        else:
            out.append("changed")
    return tuple(out)


class _BlockRecords:
    """Block analyses shared between steps.

    A block that is the very wire block of an earlier step (an unchanged system
    prompt) in the same cache state gets the same record back, so a long
    session holds a few records per component rather than one per step; a
    changed long text is kept as a delta against its previous version.
    """

    def __init__(self) -> None:
        self._by_name: dict[str, tuple[WireBlock, dict[tuple[str, str, int], BlockAnalysis]]] = {}
        self._versions: dict[str, TextVersions] = {}

    def _stored(self, b: WireBlock) -> str | StoredText:
        if len(b.text) < SMALL:
            return b.text
        log = self._versions.get(b.name)
        if log is None:
            log = self._versions[b.name] = TextVersions()
        return log.add(b.text)

    def analyses(
        self, blocks: Sequence[WireBlock], result: CacheResult, changes: Sequence[str]
    ) -> tuple[BlockAnalysis, ...]:
        out: list[BlockAnalysis] = []
        by_name = self._by_name
        for b, n, c, ch in zip(
            blocks, result.block_tokens, result.block_cache, changes, strict=True
        ):
            kept = by_name.get(b.name)
            if kept is None or kept[0] is not b:
                kept = by_name[b.name] = (b, {})
            records = kept[1]
            key = (c, ch, n)
            record = records.get(key)
            if record is None:
                same = next(iter(records.values()), None)
                record = records[key] = BlockAnalysis(
                    name=b.name,
                    layer=_LAYER_NAMES[b.layer],
                    section=b.section,
                    tokens=n,
                    cache=c,
                    change=ch,
                    breakpoint=b.breakpoint,
                    stored=same.stored if same is not None else self._stored(b),
                    cacheable=b.cacheable,
                )
            out.append(record)
        return tuple(out)


def _first_difference(blocks: Sequence[WireBlock], prev: _Prev) -> int:
    before = prev.blocks
    for i, b in enumerate(blocks):
        if i >= len(before):
            return i
        old = before[i]
        if old is not b and (old.name != b.name or old.text != b.text):
            return i
    return len(blocks)


def _duration(d: timedelta) -> str:
    minutes = int(d.total_seconds() // 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


@dataclass(frozen=True, slots=True)
class _MissInput:
    blocks: Sequence[WireBlock]
    result: CacheResult
    changes: Sequence[str]
    model: str
    provider: str
    at: datetime
    day: str
    minimum: int
    has_breakpoints: bool
    ttl: str
    compacted: bool = False  # the step is labelled as the first after a compaction


def _miss(x: _MissInput, prev: _Prev | None) -> Miss | None:
    """The first block that breaks the prefix the previous request left cached, and why."""
    if prev is None or not x.blocks:
        return None
    res = x.result
    d = _first_difference(x.blocks, prev)
    common = sum(res.block_tokens[:d])
    kept = prev.read + prev.write
    expected = min(common, kept)
    at_read = min(res.cached_blocks, len(x.blocks) - 1)

    def make(index: int, reason: str, lost: int, sentence: str) -> Miss:
        b = x.blocks[index]
        who = f"{b.name} ({b.layer.value})"
        return Miss(b.name, b.layer.value, reason, lost, f"{who} {sentence}")

    if res.read < expected:
        lost = expected - res.read
        if prev.model != x.model or prev.provider != x.provider:
            return make(
                at_read,
                "model switched",
                lost,
                f"lost its cache: the model switched from {prev.model} to {x.model}, "
                f"whose cache is separate; {lost:,} tokens were re-sent uncached.",
            )
        if res.expired:
            gap = _duration(x.at - prev.at)
            return make(
                at_read,
                "expired",
                lost,
                f"expired from the cache after a {gap} idle gap (lifetime {x.ttl}): "
                f"{lost:,} tokens were re-sent uncached.",
            )
        if res.below_minimum or expected < x.minimum:
            return make(
                at_read,
                "below minimum",
                lost,
                f"sits in a prefix below {x.model}'s minimum of {x.minimum:,} cacheable tokens: "
                f"{lost:,} tokens were sent uncached.",
            )
        index = d if d < len(x.blocks) else at_read
        return _changed(x, prev, index, lost, make)
    if d < len(x.blocks) and kept > common:
        lost = max(0, min(kept, res.total) - res.read)
        if lost:
            return _changed(x, prev, d, lost, make)
    if kept == 0 and common > 0 and res.read == 0 and res.total > 0:
        if res.below_minimum or common < x.minimum:
            return make(
                0,
                "below minimum",
                common,
                f"starts a prefix below {x.model}'s minimum of {x.minimum:,} cacheable tokens: "
                f"nothing is cached, {common:,} repeated tokens were sent uncached.",
            )
        if not x.has_breakpoints:
            return make(
                0,
                "no breakpoint",
                common,
                f"starts a request with no cache breakpoint: nothing is written, "
                f"{common:,} repeated tokens were sent uncached.",
            )
    return None


def _changed(
    x: _MissInput, prev: _Prev, index: int, lost: int, make: Callable[[int, str, int, str], Miss]
) -> Miss:
    b = x.blocks[index]
    if x.changes[index] == "released":
        return make(
            index,
            "io released",
            lost,
            f"changed because a finished call's io was released: "
            f"{lost:,} tokens after it were re-sent uncached.",
        )
    if x.compacted and b.section == "messages":
        return make(
            index,
            "history compacted",
            lost,
            f"changed because the history was compacted into a summary: "
            f"{lost:,} tokens after it were re-sent uncached.",
        )
    if all(old.name != b.name for old in prev.blocks):
        return make(
            index,
            "component added",
            lost,
            f"was added: {lost:,} tokens after it were re-sent uncached.",
        )
    if index < len(prev.blocks) and prev.blocks[index].name != b.name:
        gone = prev.blocks[index].name
        if gone not in {blk.name for blk in x.blocks}:
            return Miss(
                gone,
                b.layer.value,
                "component removed",
                lost,
                f"{gone} was removed: {lost:,} tokens after it were re-sent uncached.",
            )
    when = " at midnight" if x.day != prev.day else ""
    return make(
        index,
        "content changed",
        lost,
        f"changed{when}: {lost:,} tokens after it were re-sent uncached.",
    )


# --- the session -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Target:
    """What every step sent to one provider and model needs, worked out once."""

    provider: str
    model: str
    simulator: Simulator
    count: Callable[[str], int]
    minimum: int
    ttl: str  # the lifetime as shown (the rules' per-model retention for token-prefix caches)
    write_ttl: str  # the lifetime priced for writes: only Anthropic sells 1h writes


class _Engine:
    """Simulators, segmenters and token counters, created once per provider/encoding."""

    def __init__(self, ttl: str | None) -> None:
        self.ttl = ttl
        self._segmenters: dict[str, Segmenter] = {}
        self._sims: dict[tuple[str, str], Simulator] = {}
        self._targets: dict[tuple[str, str], _Target] = {}
        self.approximate = False

    def segmenter(self, provider: str, model: str) -> Segmenter:
        choice = tokenizer_for(provider, model)
        self.approximate = self.approximate or not choice.exact
        seg = self._segmenters.get(choice.encoding)
        if seg is None:
            seg = self._segmenters[choice.encoding] = Segmenter(counter(choice.encoding))
        return seg

    def simulator(self, provider: str, model: str) -> Simulator:
        seg = self.segmenter(provider, model)
        key = (provider, seg.counter.encoding_name)
        sim = self._sims.get(key)
        if sim is None:
            sim = self._sims[key] = simulator(provider, seg, self.ttl)
        return sim

    def target(self, provider: str, model: str) -> _Target:
        """``provider`` as the session or the caller names it."""
        t = self._targets.get((provider, model))
        if t is None:
            prov = normalize_provider(provider)
            sim = self.simulator(prov, model)
            ttl = _ttl_label(sim, model)
            t = _Target(
                prov,
                model,
                sim,
                self.segmenter(prov, model).counter.count,
                sim.minimum(model),
                ttl,
                ttl if prov == "anthropic" else "5m",
            )
            self._targets[(provider, model)] = t
        return t


def _ttl_label(sim: Simulator, model: str) -> str:
    if isinstance(sim, TokenPrefixSimulator):
        ret = sim.retention_for(model)
        return _duration(ret.idle).replace(" min", "m").replace(" h 00m", "h")
    return str(getattr(sim, "ttl", ""))


def _exit_counts(session: Session) -> list[int]:
    """Number of exit events before each event index (to spot released io)."""
    counts = [0]
    for e in session.events:
        counts.append(counts[-1] + isinstance(e, Exit))
    return counts


@cache
def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (KeyError, ValueError):
        return None


def _local_day(step: Step) -> str:
    """The calendar day in the agent's timezone (the date the prompt shows)."""
    zone = _zone(step.context.profile.environment.timezone)
    return (step.at.astimezone(zone) if zone else step.at).date().isoformat()


def analyze(
    session: Session,
    layout: Layout | None = None,
    *,
    provider: str | None = None,
    model: str | None = None,
    ttl: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    store: CacheStore | None = None,
) -> SessionAnalysis:
    """Analyse every step of ``session`` under ``layout`` (default ``seed``).

    ``provider``/``model`` override the session's for every step; without them
    a ``change`` event can switch the model mid-session (caches are per model).
    ``store`` lets several sessions share one cache.
    """
    with _collector_paused():
        return _analyze(session, layout, provider, model, ttl, progress, store)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while the analysis builds its records.

    A long session's analysis allocates hundreds of thousands of long-lived
    objects and no reference cycles; the collections those allocations trigger
    re-scan them for nothing (about a tenth of the run at 5,000 steps).
    Reference counting frees everything as usual; the collector is switched
    back on only if it was on, so nested or concurrent analyses end with it on.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _analyze(
    session: Session,
    layout: Layout | None,
    provider: str | None,
    model: str | None,
    ttl: str | None,
    progress: Callable[[int, int], None] | None,
    store: CacheStore | None,
) -> SessionAnalysis:
    layout = layout or builtin_layout("seed")
    ttl = ttl or layout.ttl
    first_provider = normalize_provider(provider or session.profile.provider)
    first_model = model or session.profile.model
    check_model(first_provider, first_model)
    engine = _Engine(ttl)
    store = store if store is not None else CacheStore()
    assembler = SessionAssembler(session, layout)
    exits = _exit_counts(session)
    n_steps = sum(isinstance(e, LLMCall) for e in session.events)
    steps: list[StepAnalysis] = []
    prev: _Prev | None = None
    records = _BlockRecords()
    for assembled in assembler:
        step = assembled.step
        profile = step.context.profile
        target = engine.target(provider or profile.provider, model or profile.model)
        prov, mdl = target.provider, target.model
        blocks = assembled.wire.blocks
        result = target.simulator.request(blocks, mdl, step.at, store)
        released = prev is not None and exits[step.call.index] > exits[prev.event_index]
        changes = _changes(blocks, prev, released)
        day = _local_day(step)
        miss = _miss(
            _MissInput(
                blocks,
                result,
                changes,
                mdl,
                prov,
                step.at,
                day,
                target.minimum,
                any(b.breakpoint is not None for b in blocks),
                target.ttl,
                (step.label or "").startswith("compaction"),
            ),
            prev,
        )
        measured = step.call.usage
        output = measured.output if measured is not None else target.count(step.call.output)
        cost = step_cost(
            prov,
            mdl,
            read=result.read,
            write=result.write,
            uncached=result.uncached,
            output=output,
            ttl=target.write_ttl,
        )
        steps.append(
            StepAnalysis(
                step=step.number,
                label=step.label,
                function=step.function,
                call_path=step.call_path,
                depth=step.depth,
                timestamp=step.at,
                tokens=_layer_tokens(blocks, result.block_tokens),
                read=result.read,
                write=result.write,
                uncached=result.uncached,
                hit_ratio=result.read / result.total if result.total else 0.0,
                cached_prefix_tokens=result.read,
                miss=miss,
                usd=cost.usd,
                usd_without_cache=cost.usd_without_cache,
                blocks=records.analyses(blocks, result, changes),
                measured=measured,
                provider=prov,
                model=mdl,
            )
        )
        prev = _Prev(
            tuple(blocks),
            result.read,
            result.write,
            mdl,
            prov,
            step.at,
            day,
            step.call.index,
        )
        if progress is not None:
            progress(len(steps), n_steps)
    first_sim = engine.simulator(first_provider, first_model)
    return SessionAnalysis(
        session=session.id,
        layout=layout.name,
        provider=first_provider,
        model=first_model,
        ttl=_ttl_label(first_sim, first_model),
        approximate_tokens=engine.approximate,
        steps=tuple(steps),
        totals=_totals(steps),
    )


def _totals(steps: Sequence[StepAnalysis]) -> dict[str, float]:
    tokens = sum(s.tokens["total"] for s in steps)
    read = sum(s.read for s in steps)
    return {
        "tokens": tokens,
        "read": read,
        "write": sum(s.write for s in steps),
        "uncached": sum(s.uncached for s in steps),
        "hit_ratio": read / tokens if tokens else 0.0,
        "usd": sum(s.usd for s in steps),
        "usd_without_cache": sum(s.usd_without_cache for s in steps),
    }


# --- output shapes --------------------------------------------------------------------


def _miss_json(m: Miss | None) -> dict[str, Any] | None:
    if m is None:
        return None
    return {
        "component": m.component,
        "layer": m.layer,
        "reason": m.reason,
        "tokens_lost": m.tokens_lost,
        "sentence": m.sentence,
    }


def _usage_json(u: Usage | None) -> dict[str, int] | None:
    if u is None:
        return None
    return {
        "input": u.input,
        "cache_read": u.cache_read,
        "cache_write": u.cache_write,
        "output": u.output,
    }


def step_json(s: StepAnalysis) -> dict[str, Any]:
    return {
        "step": s.step,
        "label": s.label,
        "function": s.function,
        "call_path": list(s.call_path),
        "depth": s.depth,
        "timestamp": format_time(s.timestamp),
        "model": s.model,
        "tokens": dict(s.tokens),
        "cache": {
            "read": s.read,
            "write": s.write,
            "uncached": s.uncached,
            "hit_ratio": round(s.hit_ratio, 6),
            "cached_prefix_tokens": s.cached_prefix_tokens,
        },
        "miss": _miss_json(s.miss),
        "cost": {"usd": round(s.usd, 8), "usd_without_cache": round(s.usd_without_cache, 8)},
        "blocks": [
            {
                "name": b.name,
                "layer": b.layer,
                "section": b.section,
                "tokens": b.tokens,
                "cache": b.cache,
                "change": b.change,
                "breakpoint": b.breakpoint,
            }
            for b in s.blocks
        ],
        "measured": _usage_json(s.measured),
    }


def analysis_json(a: SessionAnalysis) -> dict[str, Any]:
    """The JSON shape of ``analyze --json`` (issue 3)."""
    totals = dict(a.totals)
    totals["hit_ratio"] = round(totals["hit_ratio"], 6)
    totals["usd"] = round(totals["usd"], 8)
    totals["usd_without_cache"] = round(totals["usd_without_cache"], 8)
    from assembler.measured import compare_measured, measured_check_json  # imports this module

    checks = {c.step: c for c in compare_measured(a)}
    steps: list[dict[str, Any]] = []
    measured = [s.measured for s in a.steps if s.measured is not None]
    for s in a.steps:
        out = step_json(s)
        u = s.measured
        if u is not None:
            # the recorded keys (input, cache_read, cache_write, output) stay; the
            # simulator's terms are added beside them
            out["measured"] = {
                **(out["measured"] or {}),
                "read": u.cache_read,
                "write": u.cache_write,
                "uncached": u.input,
            }
        check = checks.get(s.step)
        out["measured_check"] = measured_check_json(check) if check is not None else None
        steps.append(out)
    if measured:  # what the provider billed, over the steps that recorded it
        totals["measured_read"] = sum(u.cache_read for u in measured)
        totals["measured_write"] = sum(u.cache_write for u in measured)
        totals["measured_uncached"] = sum(u.input for u in measured)
    return {
        "session": a.session,
        "layout": a.layout,
        "provider": a.provider,
        "model": a.model,
        "ttl": a.ttl,
        "approximate_tokens": a.approximate_tokens,
        "steps": steps,
        "totals": totals,
    }


ROW_COLUMNS = (
    "step",
    "label",
    "function",
    "timestamp",
    "model",
    "total",
    "tools",
    "L0",
    "L1",
    "L2",
    "read",
    "write",
    "uncached",
    "hit_ratio",
    "usd",
    "usd_without_cache",
    "miss_component",
    "miss_layer",
    "miss_reason",
    "tokens_lost",
    "measured_read",
    "measured_write",
    "measured_uncached",
    "measured_agree",
)


def analysis_rows(a: SessionAnalysis) -> list[dict[str, Any]]:
    """One flat row per step (columns :data:`ROW_COLUMNS`), for CSV and tables.

    The ``measured_*`` columns are empty for a step without measured usage;
    ``measured_agree`` is ``yes`` or ``no`` (simulated and measured in the same class).
    """
    from assembler.measured import compare_measured  # imports this module

    agree = {c.step: c.agree for c in compare_measured(a)}
    rows = []
    for s in a.steps:
        m = s.miss
        u = s.measured
        ok = agree.get(s.step)
        rows.append(
            {
                "step": s.step,
                "label": s.label or "",
                "function": s.function,
                "timestamp": format_time(s.timestamp),
                "model": s.model,
                "total": s.tokens["total"],
                "tools": s.tokens["tools"],
                "L0": s.tokens["L0"],
                "L1": s.tokens["L1"],
                "L2": s.tokens["L2"],
                "read": s.read,
                "write": s.write,
                "uncached": s.uncached,
                "hit_ratio": round(s.hit_ratio, 4),
                "usd": round(s.usd, 6),
                "usd_without_cache": round(s.usd_without_cache, 6),
                "miss_component": m.component if m else "",
                "miss_layer": m.layer if m else "",
                "miss_reason": m.reason if m else "",
                "tokens_lost": m.tokens_lost if m else 0,
                "measured_read": u.cache_read if u is not None else "",
                "measured_write": u.cache_write if u is not None else "",
                "measured_uncached": u.input if u is not None else "",
                "measured_agree": "" if ok is None else ("yes" if ok else "no"),
            }
        )
    return rows


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


def _divergence(base: SessionAnalysis, head: SessionAnalysis) -> int | None:
    """Index of the first step the head reads less than the base, else where the outcome differs."""
    pairs = list(zip(base.steps, head.steps, strict=False))
    for i, (b, h) in enumerate(pairs):
        if h.read < b.read:
            return i
    for i, (b, h) in enumerate(pairs):
        if (b.read, b.write, b.uncached) != (h.read, h.write, h.uncached):
            return i
    return None


def _first_block_difference(b: StepAnalysis, h: StepAnalysis) -> BlockAnalysis | None:
    for i, hb in enumerate(h.blocks):
        if i >= len(b.blocks):
            return hb
        bb = b.blocks[i]
        if (bb.name, bb.layer, bb.text) != (hb.name, hb.layer, hb.text) or bb.cache != hb.cache:
            return hb
    return None


def compare(
    session: Session,
    base: Layout,
    head: Layout,
    *,
    provider: str | None = None,
    model: str | None = None,
    ttl: str | None = None,
) -> Comparison:
    """Analyse ``session`` under two layouts (separate caches) and locate the break."""
    a = analyze(session, base, provider=provider, model=model, ttl=ttl)
    b = analyze(session, head, provider=provider, model=model, ttl=ttl)
    index = _divergence(a, b)
    component = layer = sentence = None
    if index is not None:
        h = b.steps[index]
        if h.miss is not None:
            component, layer, sentence = h.miss.component, h.miss.layer, h.miss.sentence
        else:
            block = _first_block_difference(a.steps[index], h)
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
