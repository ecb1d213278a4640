"""The per-step engine: replay a session under a layout, simulate the provider's cache, price each step."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from itertools import accumulate, repeat
from operator import attrgetter, itemgetter

from assembler.analysis.engine.block_records import (
    BlockRecords,
    LayerSums,
    PreviousStep,
    block_changes,
    same_text,
    step_changes,
)
from assembler.analysis.engine.diagnostics import check_diagnostic
from assembler.analysis.engine.layouts import Layout, builtin_layout
from assembler.analysis.engine.local_days import LocalDays
from assembler.analysis.engine.misses import MissInput, duration_text, find_miss
from assembler.analysis.engine.pipeline import SessionAssembler
from assembler.analysis.engine.results import SessionAnalysis, StepAnalysis
from assembler.cache.anthropic import AnthropicSimulator
from assembler.cache.prices.price_context import recorded_context, unpriced_warning
from assembler.cache.prices.pricing import PROVIDER_IDS, StepPricer, check_model, step_pricer
from assembler.cache.providers import cache_platform, normalize_provider, simulator
from assembler.cache.segmenter import Segmenter
from assembler.cache.simulation import CacheResult, Simulator
from assembler.cache.store import CacheStore
from assembler.cache.token_prefix import TokenPrefixSimulator
from assembler.cache.tokenizers import counter, tokenizer_for
from assembler.collector import collector_paused
from assembler.design.assembly import Assembly
from assembler.design.blocks import BlockStatus
from assembler.design.context import Profile
from assembler.design.wire import WireBlock, leading_same
from assembler.limits import one_line
from assembler.sessions.loader import check_analysis_work
from assembler.sessions.model import Exit, LLMCall, RecordedBlock, Session

# how long before a recorded request its warm prefix was written: readable by then
_WARMED_BEFORE = timedelta(milliseconds=1)

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
    platform: (
        str  # who served and billed it (anthropic-bedrock, …); the provider's own name if none
    )


class _Engine:
    """Simulators, segmenters and token counters, created once per provider/encoding."""

    def __init__(self, ttl: str | None, scales: Mapping[str, float] | None = None) -> None:
        self.ttl = ttl
        self.scales = scales or {}  # per model, recorded sizes fitted to the bill
        self._segmenters: dict[tuple[str, float], Segmenter] = {}
        self._sims: dict[tuple[str, str, float], Simulator] = {}
        self._targets: dict[tuple[str, str], _Target] = {}
        self.approximate = False

    def segmenter(self, provider: str, model: str) -> Segmenter:
        choice = tokenizer_for(provider, model)
        self.approximate = self.approximate or not choice.exact
        key = (choice.encoding, self.scales.get(model, 1.0))
        seg = self._segmenters.get(key)
        if seg is None:
            seg = self._segmenters[key] = Segmenter(counter(choice.encoding), key[1])
        return seg

    def simulator(self, provider: str, model: str) -> Simulator:
        seg = self.segmenter(provider, model)
        key = (provider, seg.counter.encoding_name, seg.scale)
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
                provider.lower() if provider.lower() in PROVIDER_IDS else prov,
            )
            self._targets[(provider, model)] = t
        return t


def _with_response(blocks: Sequence[WireBlock], before: Sequence[WireBlock]) -> int:
    """How many leading ``blocks`` are the previous request followed by its response (the
    assistant blocks right after it), when this request continues it; 0 otherwise.

    OpenAI's Responses API caches a request's input together with its output, so the
    next request can read through the previous answer, not only the previous input."""
    n = len(before)
    if not n or len(blocks) <= n or not same_text(blocks[n - 1], before[n - 1]):
        return 0
    end = n
    while end < len(blocks) and blocks[end].role == "assistant":
        end += 1
    return end if end > n else 0


def _warm_up(
    sim: Simulator,
    head: Sequence[WireBlock],
    model: str,
    at: datetime,
    cache: CacheStore,
    call: LLMCall,
) -> None:
    """What earlier traffic left cached for a recorded request (its bill says how much):
    an earlier request of that prefix, marked at its end, just before this one."""
    end = head[-1]
    if end.breakpoint is None:
        head = [*head[:-1], replace(end, breakpoint=1)]
    before = at - _WARMED_BEFORE
    if isinstance(sim, AnthropicSimulator):
        sim.request(head, model, before, cache, call.settings, ttl=call.ttl)
    else:
        sim.request(head, model, before, cache, call.settings)


def _ttl_label(sim: Simulator, model: str) -> str:
    if isinstance(sim, TokenPrefixSimulator):
        ret = sim.retention_for(model)
        return duration_text(ret.idle).replace(" min", "m").replace(" h 00m", "h")
    return str(getattr(sim, "ttl", ""))


def _exit_counts(session: Session) -> list[int]:
    """Number of exit events before each event index (to spot released io)."""
    return list(accumulate(map(isinstance, session.events, repeat(Exit)), initial=0))


class _Routes:
    """Per provider and model as a step names them: the target, the serving platform
    with a cache of its own, and the store as that platform sees it, worked out once."""

    def __init__(self, engine: _Engine, store: CacheStore) -> None:
        self._engine = engine
        self._store = store
        self._routes: dict[tuple[str, str], tuple[_Target, str, CacheStore, StepPricer]] = {}

    def of(self, provider: str, model: str) -> tuple[_Target, str, CacheStore, StepPricer]:
        """The target, platform, store, and the prices of writes of the target's lifetime."""
        route = self._routes.get((provider, model))
        if route is None:
            platform = cache_platform(provider)
            target = self._engine.target(provider, model)
            route = self._routes[(provider, model)] = (
                target,
                platform,
                self._store.on_platform(platform),
                step_pricer(target.platform, target.model, target.write_ttl),
            )
        return route


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
    check_analysis_work(session)
    with collector_paused():
        return _analyze(session, layout, provider, model, ttl, progress, store)


def _analyze(
    session: Session,
    layout: Layout | None,
    provider: str | None,
    model: str | None,
    ttl: str | None,
    progress: Callable[[int, int], None] | None,
    store: CacheStore | None,
    bill_only: bool = False,
) -> SessionAnalysis:
    """``bill_only``: each step simulated and priced as always, but nothing else made (no
    changes, misses, block records or layer sums); the analysis keeps no steps, only the
    totals, summed in step order as :func:`totals_of` sums them."""
    layout = layout or builtin_layout("seed")
    ttl = ttl or layout.ttl
    first_provider = normalize_provider(provider or session.profile.provider)
    first_model = model or session.profile.model
    named = (provider or session.profile.provider).lower()
    check_model(named if named in PROVIDER_IDS else first_provider, first_model)
    # sizes fitted to the bill hold for the provider and models that billed them
    as_recorded = provider is None and model is None
    engine = _Engine(ttl, session.token_scale if as_recorded else None)
    routes = _Routes(engine, store if store is not None else CacheStore())
    # a what-if provider/model is what every step is assembled for, not only priced at
    assembler = SessionAssembler(session, layout, provider=provider, model=model)
    exits = _exit_counts(session)
    # counted only for a progress report: a pass over every event
    n_steps = 0 if progress is None else sum(map(isinstance, session.events, repeat(LLMCall)))
    steps: list[StepAnalysis] = []
    bills: list[tuple[int, int, int, int, float, float]] = []  # bill_only: per step
    prev: PreviousStep | None = None
    records = BlockRecords()
    sums = LayerSums()
    days = LocalDays()
    routed: Profile | None = None  # the profile the last route was worked out for
    for assembled in assembler:
        step = assembled.step
        call = step.call
        at = step.at
        profile = step.context.profile
        if profile is not routed:  # a profile changes only at a change event
            routed = profile
            route = routes.of(provider or profile.provider, model or profile.model)
        target, platform, cache, pricer = route
        prov, mdl, sim = target.provider, target.model, target.simulator
        blocks = assembled.wire.blocks
        if prev is not None and prov == "openai" and prev.model == mdl and call.request:
            # the previous response is part of the cached prefix the next request reads
            answered = _with_response(blocks, prev.blocks)
            if answered:
                sim.request(blocks[:answered], mdl, prev.at, cache)
        if call.request is not None and call.request.warm_end >= 0:
            _warm_up(sim, blocks[: call.request.warm_end + 1], mdl, at, cache, call)
        recorded_ttl = call.ttl
        write_ttl = target.write_ttl
        if recorded_ttl:
            # a recorded request's writes live as long as its bill says (Anthropic sells 5m and 1h)
            write_ttl = recorded_ttl if prov == "anthropic" else target.write_ttl
            if write_ttl != target.write_ttl:
                pricer = step_pricer(target.platform, mdl, write_ttl)
            if isinstance(sim, AnthropicSimulator):
                result = sim.request(blocks, mdl, at, cache, call.settings, ttl=write_ttl)
            else:
                result = sim.request(blocks, mdl, at, cache, call.settings)
        else:
            result = sim.request(blocks, mdl, at, cache, call.settings)
        day = days.of(at, profile.environment.timezone)
        read, write, total = result.read, result.write, result.total
        if bill_only:  # what the step changed and why it missed: not part of a bill
            miss = None
        elif prev is None:
            same = 0
            changes = block_changes(blocks, None, False)
            miss = None
        else:
            same = leading_same(blocks, prev.blocks)
            released = exits[call.index] > exits[prev.event_index]
            changes, first = step_changes(blocks, prev, released, same)
            miss = find_miss(
                MissInput(
                    blocks,
                    result,
                    changes,
                    mdl,
                    prov,
                    at,
                    day,
                    target.minimum,
                    target.ttl,
                    step.label is not None and step.label.startswith("compaction"),
                    platform,
                    first,
                ),
                prev,
            )
        measured = call.usage
        output = measured.output if measured is not None else target.count(call.output)
        uncached = total - read - write
        # the recorded speed or tier, only at the recorded provider's prices: under
        # --provider another provider's tiers are not the ones the request was served in
        context = (
            ()
            if call.settings is None
            else recorded_context(call.settings, provider or profile.provider, profile.provider)
        )
        if context:
            pricer = step_pricer(target.platform, mdl, write_ttl, context)
        usd, usd_without_cache = pricer.cost(
            read,
            write,
            uncached,
            output,
            result.write_1h,
            step.at,
            # the recorded searches are billed whatever the cache does
            measured.web_searches if measured is not None else 0,
        )
        if bill_only:
            tokens = sum(result.block_tokens)
            bills.append((tokens, read, write, uncached, usd, usd_without_cache))
            prev = PreviousStep(blocks, read, write, mdl, prov, at, day, call.index, platform)
            continue
        # a replayed request's records are its blocks, each emitted as sent: no build failed
        warnings = (
            result.notes if call.request is not None else _warnings(result, assembled.assembly)
        )
        if context and pricer.unpriced:
            warnings += (unpriced_warning(context, pricer.unpriced, mdl),)
            # what the step was priced in: a value with no price was billed as standard
            context = tuple(kv for kv in context if kv[0] not in pricer.unpriced)
        # positional, in field order: keyword arguments cost more than the init itself
        steps.append(
            StepAnalysis(
                step.number,
                step.label,
                step.function,
                step.call_path,
                step.depth,
                at,
                sums.of(blocks, result.block_tokens, same),
                read,
                write,
                uncached,
                read / total if total else 0.0,  # hit_ratio
                read,  # cached_prefix_tokens
                miss,
                usd,
                usd_without_cache,
                records.analyses(blocks, result, changes, same),
                measured,
                prov,
                mdl,
                (
                    None
                    if call.diagnostic is None
                    else check_diagnostic(call.diagnostic, miss, blocks)
                ),
                target.platform,
                (recorded_ttl or "") if prov == "anthropic" else "",  # write_ttl
                _inferred(assembled.recorded),
                # a component whose build raised is named, never silently left out
                warnings,
                context,
                engine.scales.get(mdl, 1.0),
            )
        )
        prev = PreviousStep(blocks, read, write, mdl, prov, at, day, call.index, platform)
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
        # bill_only: each of the six per-step figures summed as totals_of sums the steps'
        totals=_summed(*(map(itemgetter(k), bills) for k in range(6)))
        if bill_only
        else totals_of(steps),
        token_scale=dict(engine.scales),
    )


def _inferred(recorded: tuple[RecordedBlock, ...]) -> tuple[tuple[str, int], ...]:
    """(block, tokens) of the recorded blocks sized from the billed usage."""
    return tuple((b.name, b.tokens or 0) for b in recorded if b.inferred)


_STATUS = attrgetter("status")


def _warnings(result: CacheResult, assembly: Assembly) -> tuple[str, ...]:
    """What the simulator warns of, then every component whose build raised."""
    if BlockStatus.ERROR not in map(_STATUS, assembly.records):  # at C speed: most steps
        return result.notes
    return result.notes + tuple(
        one_line(f"component {r.name!r} failed: {r.error}", 600) for r in assembly.errors
    )


def session_bill(
    session: Session, *, provider: str | None = None, model: str | None = None
) -> dict[str, float]:
    """``analyze(session, provider=, model=).totals``, each step simulated and priced alike,
    without what a bill does not need (a plan search bills a session once per plan)."""
    check_analysis_work(session)
    with collector_paused():
        return _analyze(session, None, provider, model, None, None, None, True).totals


def totals_of(steps: Sequence[StepAnalysis]) -> dict[str, float]:
    # sums over maps of attrgetters: at C speed, in step order (the float sums unchanged)
    return _summed(
        map(_TOTAL, map(_TOKENS, steps)),
        map(_READ, steps),
        map(_WRITE, steps),
        map(_UNCACHED, steps),
        map(_USD, steps),
        map(_USD_WITHOUT_CACHE, steps),
    )


def _summed(*figures: Iterable[float]) -> dict[str, float]:
    """The totals from the steps' tokens, read, write, uncached, usd and usd without cache,
    each summed in step order."""
    tokens, read, write, uncached, usd, usd_without_cache = map(sum, figures)
    return {
        "tokens": tokens,
        "read": read,
        "write": write,
        "uncached": uncached,
        "hit_ratio": read / tokens if tokens else 0.0,
        "usd": usd,
        "usd_without_cache": usd_without_cache,
    }


_TOTAL = itemgetter("total")
_TOKENS, _READ, _WRITE = attrgetter("tokens"), attrgetter("read"), attrgetter("write")
_UNCACHED, _USD = attrgetter("uncached"), attrgetter("usd")
_USD_WITHOUT_CACHE = attrgetter("usd_without_cache")
