"""Recorded requests seen from every marker rule, as the breakpoint search reads them.

Per rule and request: the prefix tokens up to the block the rule lands on, and
what a marker there reads: the longest entry still alive within the marker's
lookback (20 positions, a run of tool blocks counting as one). A rule on the end
of the history reads the entry written on the previous request a few blocks
back, so its read falls short of its own prefix. Which entries exist depends on
the whole set of markers, so a trace takes one of two readings of it: each rule
alone marking (it reads only its own entries: a plan's other markers only add to
that) or every rule marking (each reads any rule's: more than a plan of a few
markers finds). The plans searched on either are billed again by the simulator
itself (:mod:`recorded_plan`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from assembler.analysis.advice.breakpoint_search import Floats, Trace
from assembler.analysis.advice.recommend_trace import StepFacts, lifetimes, step_rates
from assembler.analysis.advice.recorded_marks import Resolver, Rule, marked_calls
from assembler.analysis.engine import SessionAssembler
from assembler.cache.prices.price_clock import PriceContext
from assembler.cache.prices.price_context import recorded_context
from assembler.cache.prices.pricing import price
from assembler.cache.rules import anthropic_minimum, rules
from assembler.cache.segmenter import Segmenter
from assembler.cache.simulation import name_kind
from assembler.cache.tokenizers import counter, tokenizer_for
from assembler.design.wire import WireBlock, leading_same
from assembler.sessions.model import Session
from assembler.sessions.recorded import RecordedWires

#: The one cache with markers a client places (priced at its API's rates here: the plan is
#: billed again on the platform that served each request).
ANTHROPIC = "anthropic"


@dataclass(frozen=True)
class _Request:
    """One recorded request as the simulator keys it, and where each rule lands in it."""

    session: int
    at: float
    cum: list[int]  # running tokens per block
    keys: list[int]  # the key of the prefix ending at each block
    positions: list[int]  # lookback position per block
    landing: list[int | None]  # per rule: its block, None where it has none or is too short


def _requests(
    sessions: Sequence[Session],
    rule_list: Sequence[Rule],
    provider: str | None,
    model: str | None,
) -> tuple[list[_Request], list[str], list[datetime], list[PriceContext], float]:
    """Every recorded request keyed, with its model, time and price context; the output's
    cost, the same under every plan."""
    runs = frozenset(rules()["anthropic"]["lookback"]["runs_count_as_one"])
    segmenters: dict[str, Segmenter] = {}
    out: list[_Request] = []
    models: list[str] = []
    moments: list[datetime] = []
    contexts: list[PriceContext] = []
    outputs = 0.0
    for number, session in enumerate(sessions):
        marked = {id(c) for c in marked_calls(session, provider)}
        wires = RecordedWires()  # a request's unchanged blocks are the request before's
        before: tuple[WireBlock, ...] = ()
        before_model = ""
        cum: list[int] = []
        keys: list[int] = []
        positions: list[int] = []
        for step in SessionAssembler(session).steps():
            call = step.call
            if call.request is None or id(call) not in marked:
                continue
            mdl = model or step.context.profile.model
            encoding = tokenizer_for(ANTHROPIC, mdl).encoding
            seg = segmenters.get(encoding)
            if seg is None:
                seg = segmenters[encoding] = Segmenter(counter(encoding))
            blocks = call.request.blocks()
            wire = wires.build(blocks).blocks
            # the leading blocks the request before sent as the same objects keep their
            # running sizes, keys and positions (each depends only on the blocks up to it)
            same = leading_same(wire, before) if mdl == before_model else 0
            cum, keys, positions = cum[:same], keys[:same], positions[:same]
            if same:
                running, h, position = cum[-1], keys[-1], positions[-1]
                kind = name_kind(wire[same - 1].name)
            else:
                running, h, position, kind = 0, hash(("anthropic", mdl)), -1, None
            for b in wire[same:]:
                n, fingerprint = seg.measure(b)
                running += n
                h = hash((h, b.section, fingerprint))
                k = name_kind(b.name)
                if not (k == kind and k in runs):
                    position += 1
                kind = k
                cum.append(running)
                keys.append(h)
                positions.append(position)
            before, before_model = wire, mdl
            where = Resolver(blocks)
            minimum = anthropic_minimum(mdl)
            landing = [where(r) for r in rule_list]
            landing = [i if i is not None and cum[i] >= minimum else None for i in landing]
            out.append(_Request(number, step.at.timestamp(), cum, keys, positions, landing))
            models.append(mdl)
            moments.append(step.at)
            context = recorded_context(call.settings, ANTHROPIC, step.context.profile.provider)
            contexts.append(context)
            usage = call.usage
            output = usage.output if usage else seg.counter.count(call.output)
            outputs += price(
                ANTHROPIC, mdl, total_input=0, output=output, at=step.at, context=context
            )
    return out, models, moments, contexts, outputs


def _reads(
    requests: Sequence[_Request], rules_n: int, seconds: float, lookback: int, shared: bool
) -> Floats:
    """(rules, requests): what each rule's marker reads, each rule alone marking (its own
    entries) or, ``shared``, every rule marking every request (each reads any rule's)."""
    out = np.zeros((rules_n, len(requests)))
    own: list[dict[int, float]] = []  # per rule (one for all when shared): key → last used
    session = -1
    for t, r in enumerate(requests):
        if r.session != session:  # every session has its own cache
            session = r.session
            own = [{}] if shared else [{} for _ in range(rules_n)]
        touched: list[tuple[dict[int, float], int]] = []
        for c, i in enumerate(r.landing):
            if i is None:
                continue
            entries = own[0 if shared else c]
            reach = r.positions[i] - lookback
            pos = i
            while pos >= 0 and r.positions[pos] > reach:
                last = entries.get(r.keys[pos])
                if last is not None and r.at - last < seconds:
                    out[c, t] = r.cum[pos]
                    touched.append((entries, r.keys[pos]))  # a read refreshes the entry
                    break
                pos -= 1
            touched.append((entries, r.keys[i]))
        for entries, key in touched:  # written once the request is read, as sent at once
            entries[key] = r.at
    return out


def recorded_traces(
    sessions: Sequence[Session], rule_list: Sequence[Rule], provider: str | None, model: str | None
) -> tuple[Trace, Trace, StepFacts]:
    """The traces of ``sessions``' recorded requests to Anthropic's cache with ``rule_list``
    as their boundaries (in that order), billed at ``provider`` and ``model`` (None: each
    request's own): each rule alone marking, and every rule marking."""
    requests, models, moments, contexts, outputs = _requests(sessions, rule_list, provider, model)
    lookback = int(rules()["anthropic"]["lookback"]["value"])
    spans = lifetimes()
    steps = len(requests)
    cum = np.zeros((len(rule_list), steps))
    for t, r in enumerate(requests):
        for c, i in enumerate(r.landing):
            if i is not None:
                cum[c, t] = r.cum[i]
    total = np.array([float(r.cum[-1]) if r.cum else 0.0 for r in requests])
    uncached, read, write = step_rates(ANTHROPIC, models, total, moments, contexts)
    gaps = [
        r.at - requests[t - 1].at if t and requests[t - 1].session == r.session else 0.0
        for t, r in enumerate(requests)
    ]
    traces = []
    for shared in (False, True):
        reads = {
            ttl: _reads(requests, len(rule_list), s, lookback, shared) for ttl, s in spans.items()
        }
        traces.append(
            Trace(
                names=tuple(r.name for r in rule_list),
                cum=cum,
                alive={ttl: a > 0 for ttl, a in reads.items()},
                total=total,
                uncached_rate=uncached,
                read_rate=read,
                write_rate=write,
                output_usd=outputs,
                reads=reads,
            )
        )
    return traces[0], traces[1], StepFacts(tuple(gaps), {})
