"""Where recorded requests should carry their cache markers, and with which lifetime.

A recorded request is sent as recorded, so no layout changes it; but its
``cache_control`` markers and their lifetimes are the client's own choice, and
they decide the bill. Markers are placed by rules that find a block in any
request (:mod:`recorded_marks`); the rules and a lifetime per marker are searched
over the recorded requests by the layout search's own branch and bound
(:mod:`breakpoint_search`, :mod:`mixed_lifetimes`) on a trace of the requests
(:mod:`recorded_trace`). Which entries a marker finds depends on the whole set, which
a trace can only bound (each rule alone marking, or every rule marking), so each
plan found on either is applied to the requests and billed again by the
simulator, as ``analyze`` bills the recorded session; the cheapest such bill
wins, and where none is cheaper than the recorded markers, they stand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from assembler.analysis.advice.breakpoint_search import Trace, search
from assembler.analysis.advice.mixed_lifetimes import MixedChoice, search_mixed
from assembler.analysis.advice.recommend_text import gap_counts, keep_alive_sentence, ttl_sentence
from assembler.analysis.advice.recommend_trace import StepFacts, lifetimes
from assembler.analysis.advice.recommendation import TIE, billed_at
from assembler.analysis.advice.recorded_marks import (
    Marks,
    MarksOf,
    Resolver,
    Resolvers,
    Rule,
    candidate_rules,
    first_words,
    flattened,
    marked_calls,
    plan_marks,
    recorded_marks,
    resolve,
    with_marks,
)
from assembler.analysis.advice.recorded_trace import recorded_traces
from assembler.analysis.engine import (
    TTLS,
    SessionAnalysis,
    analyze,
    runs_as_recorded,
    session_bill,
)
from assembler.cache.rules import rules
from assembler.sessions.model import LLMCall, Session


@dataclass(frozen=True)
class PlanMark:
    rule: Rule  # named e.g. "system[-1]", "messages[-1].content[-1]"
    ttl: str
    requests: int  # requests it lands on (a block long enough to be cached)
    example: str  # the first words of the block it lands on in the last such request


@dataclass(frozen=True)
class Bill:
    usd: float
    hit: float  # tokens read over tokens sent


@dataclass(frozen=True)
class RecordedPlan:
    provider: str
    model: str
    sessions: int
    requests: int
    marks: tuple[PlanMark, ...]  # the plan: empty and ``changed`` false, the recorded markers
    changed: bool
    recorded: Bill  # the simulated bill with the recorded markers
    plan: Bill  # the plan applied to the requests and simulated again
    billed_usd: float | None  # what the provider billed, where the requests carry it
    tried: tuple[tuple[str, float], ...]  # each plan the search found, simulated
    sentences: tuple[str, ...]
    lifetime: str  # what the recorded lifetime cost or saved against the other one
    keep_alive: str
    nodes: int  # branches the search visited

    @property
    def saving_per_session(self) -> float:
        return (self.recorded.usd - self.plan.usd) / max(self.sessions, 1)

    @property
    def plan_marks(self) -> Marks:
        return tuple((m.rule, m.ttl) for m in self.marks)

    def saving_per_month(self, sessions_per_month: int) -> float:
        return self.saving_per_session * sessions_per_month


#: What the provider billed for an analysed session (the bill part's ``session_costs``),
#: None where its steps carry no usage: given by the caller, as advice does not price bills.
Billed = Callable[[SessionAnalysis], float | None]


def _bill(
    sessions: Sequence[Session],
    provider: str | None,
    model: str | None,
    marks: MarksOf | None,
    billed_of: Billed | None = None,
) -> tuple[Bill, float | None]:
    """The simulated bill of ``sessions`` (their markers replaced by ``marks``), as ``analyze``
    bills each, and what the provider billed (at the sessions' own provider and model only)."""
    usd = tokens = read = 0.0
    billed: float | None = None
    for s in sessions:
        applied = s if marks is None else with_marks(s, marks, provider)
        if billed_of is None:  # the simulated bill alone: no step's records are read
            totals = session_bill(applied, provider=provider, model=model)
        else:
            a = analyze(applied, provider=provider, model=model)
            totals = a.totals
            own = billed_of(a)
            if own is not None and runs_as_recorded(s, provider, model):
                billed = (billed or 0.0) + own
        usd += totals["usd"]
        tokens += totals["tokens"]
        read += totals["read"]
    return Bill(usd, read / tokens if tokens else 0.0), billed


def _distinct(trace: Trace, rule_list: Sequence[Rule]) -> tuple[Trace, dict[str, Rule]]:
    """``trace`` without the rules that never land and those that land where an earlier
    one does on every request (the first kept): the search need not try them."""
    keep: list[int] = []
    seen: set[bytes] = set()
    reads = trace.reads or {}
    for c in range(len(rule_list)):
        if not trace.cum[c].any():
            continue
        key = trace.cum[c].tobytes() + b"".join(reads[t][c].tobytes() for t in sorted(reads))
        if key not in seen:
            seen.add(key)
            keep.append(c)
    trimmed = replace(
        trace,
        names=tuple(trace.names[c] for c in keep),
        cum=trace.cum[keep],
        alive={t: a[keep] for t, a in trace.alive.items()},
        reads={t: r[keep] for t, r in reads.items()},
    )
    return trimmed, {rule_list[c].name: rule_list[c] for c in keep}


def only_recorded_sessions(sessions: Sequence[Session]) -> bool:
    """Whether the sessions have calls, and every one is a recorded request."""
    return all(
        e.request is not None for s in sessions for e in s.events if isinstance(e, LLMCall)
    ) and any(isinstance(e, LLMCall) for s in sessions for e in s.events)


def _described(
    marks: Marks, sessions: Sequence[Session], provider: str | None
) -> tuple[PlanMark, ...]:
    count = [0] * len(marks)
    example = [""] * len(marks)
    for s in sessions:
        for call in marked_calls(s, provider):
            blocks = call.request.blocks() if call.request is not None else ()
            where = Resolver(blocks)
            for k, (rule, ttl) in enumerate(marks):
                at = resolve(((rule, ttl),), blocks, where)
                if at:
                    count[k] += 1
                    example[k] = first_words(blocks[next(iter(at))].text)
    return tuple(PlanMark(rule, ttl, count[k], example[k]) for k, (rule, ttl) in enumerate(marks))


def _recorded_lifetimes(sessions: Sequence[Session], provider: str | None) -> set[str]:
    out: set[str] = set()
    for s in sessions:
        for call in marked_calls(s, provider):
            if call.request is not None:
                out.update(recorded_marks()(call, call.request.blocks()).values())
    return out


def lifetime_sentence(
    recorded: Bill, lives: set[str], other: dict[str, Bill], gaps: Sequence[float], who: str
) -> str:
    """What the recorded lifetime cost or saved against the other one, from the idle gaps."""
    n, short, middle = gap_counts(gaps, lifetimes())
    gaps_text = (
        f"{short} of {n} gaps between requests are under 5 min and {middle}"
        f" {'is' if middle == 1 else 'are'} 5–60 min"
    )
    if lives not in ({"5m"}, {"1h"}):
        figures = " and ".join(f"${b.usd:.4f} with every marker at {t}" for t, b in other.items())
        return (
            f"{who} wrote 5-minute and 1-hour entries: ${recorded.usd:.4f} simulated, against"
            f" {figures}; {gaps_text}."
        )
    (mine,) = lives
    (alt, bill) = next((t, b) for t, b in other.items() if t != mine)
    diff = bill.usd - recorded.usd
    verdict = "saved" if diff > TIE else "cost" if diff < -TIE else "changed nothing:"
    amount = f" ${abs(diff):.4f}" if abs(diff) > TIE else ""
    return (
        f"{who} wrote {mine} entries: ${recorded.usd:.4f} simulated; the same markers at {alt}"
        f" would bill ${bill.usd:.4f}, so {mine} {verdict}{amount} ({gaps_text})."
    )


#: Past this share of the bill, the simulation of the recorded markers is said to disagree.
DISAGREES = 0.05


def bill_caveat(recorded: Bill, billed: float | None) -> list[str]:
    """A sentence when the simulator bills the recorded markers far from what the provider
    billed: a saving against the simulation is then the simulator's, not a measured one."""
    if billed is None or abs(recorded.usd - billed) <= DISAGREES * billed:
        return []
    return [
        f"The simulator bills the recorded markers ${recorded.usd:.4f} where the provider billed"
        f" ${billed:.4f}: the saving is against the simulation, and analyze says where the two"
        " part (its reasons per step)."
    ]


def _plan_sentences(
    marks: tuple[PlanMark, ...], trace: Trace, facts: StepFacts, plan: Bill, uniform: Bill | None
) -> list[str]:
    out = [
        f"cache_control {{type: ephemeral, ttl: {m.ttl}}} on {m.rule.name} ({m.rule.meaning}):"
        " lands on"
        f" {m.requests} of {trace.steps} requests (e.g. “{m.example}”)."
        for m in marks
    ]
    lives = {m.ttl for m in marks}
    if len(lives) == 1:
        out.append(ttl_sentence(next(iter(lives)), facts.gaps, lifetimes()))
    elif lives and uniform is not None:
        hour = ", ".join(m.rule.name for m in marks if m.ttl == "1h")
        out.append(
            f"A lifetime per marker, 1h on {hour} and 5m after it: ${plan.usd:.4f} instead of"
            f" ${uniform.usd:.4f} with one lifetime for all."
        )
    return out


def recommend_recorded(
    sessions: Sequence[Session],
    *,
    provider: str | None = None,
    model: str | None = None,
    billed_of: Billed | None = None,
) -> RecordedPlan:
    """The cheapest marker plan for ``sessions``' recorded requests, never dearer than theirs;
    ``billed_of`` gives the provider's bill beside it."""
    first, prov, mdl = billed_at(sessions, provider, model)
    sessions = [flattened(s) for s in sessions]  # every plan reads every request's blocks
    recorded, billed = _bill(sessions, provider, model, None, billed_of)
    requests = [
        c.request.blocks()
        for s in sessions
        for c in marked_calls(s, provider)
        if c.request is not None
    ]
    who = first.profile.environment.harness or "The client"

    def unchanged(sentence: str, lifetime: str, keep: str, nodes: int = 0) -> RecordedPlan:
        return RecordedPlan(
            prov, mdl, len(sessions), len(requests), (), False, recorded, recorded, billed,
            (), (sentence, *bill_caveat(recorded, billed)), lifetime, keep, nodes,
        )  # fmt: skip

    if not requests:
        return unchanged(
            f"No markers to place: no request goes to a cache with markers ({prov}'s keeps the"
            " longest prefix it has seen, with no cache_control), so the requests bill as they"
            " are.",
            "Lifetime: this provider's cache lifetime is not the client's choice.",
            "Keep-alive: this provider's cache has no markers to keep alive.",
        )
    rule_list = candidate_rules(requests)
    limit = int(rules()["anthropic"]["max_breakpoints"]["value"])
    found: list[tuple[Marks, str]] = []
    nodes = 0
    own, every, facts = recorded_traces(sessions, rule_list, provider, model)
    for full in (own, every):  # own: the reading a keep-alive is weighed on (no extra reads)
        trace, by_name = _distinct(full, rule_list)
        for ttl in TTLS:
            choice = search(trace, ttl, limit)
            nodes += choice.nodes
            found.append((tuple((by_name[n], ttl) for n in choice.breakpoints), ttl))
        mixed: MixedChoice = search_mixed(trace, limit)
        found.append((tuple((by_name[n], t) for n, t in mixed.marks), "mixed"))
    tried: dict[Marks, tuple[Bill, str]] = {}
    resolvers = Resolvers()
    for marks, kind in found:
        if marks and marks not in tried:
            placed = plan_marks(marks, resolvers)
            tried[marks] = (_bill(sessions, provider, model, placed)[0], kind)
    lives = _recorded_lifetimes(sessions, provider)
    # the recorded markers at one lifetime for all; at the one they all have, as recorded
    others = {
        t: recorded if lives == {t} else _bill(sessions, provider, model, recorded_marks(t))[0]
        for t in TTLS
    }
    lifetime = lifetime_sentence(recorded, lives, others, facts.gaps, who)
    best = min(tried.items(), key=lambda kv: (kv[1][0].usd, -kv[1][0].hit), default=None)
    if best is None or best[1][0].usd >= recorded.usd - TIE:
        return unchanged(
            "Keep the recorded markers: no plan of at most"
            f" {limit} markers on {len(by_name)} rules with 5m or 1h lifetimes"
            f" ({len(tried)} found by the search, each simulated again) bills less.",
            lifetime,
            "Keep-alive: weighed against the recorded markers' own bill, which no plan beats.",
            nodes,
        )
    marks, (plan, kind) = best
    described = _described(marks, sessions, provider)
    uniform = min(
        (b for m, (b, k) in tried.items() if k != "mixed"), key=lambda b: b.usd, default=None
    )
    keep = keep_alive_sentence(own, tuple((r.name, t) for r, t in marks), facts.gaps, lifetimes())
    return RecordedPlan(
        prov,
        mdl,
        len(sessions),
        len(requests),
        described,
        True,
        recorded,
        plan,
        billed,
        tuple((", ".join(f"{r.name} {t}" for r, t in m), b.usd) for m, (b, _) in tried.items()),
        tuple(
            _plan_sentences(described, own, facts, plan, uniform) + bill_caveat(recorded, billed)
        ),
        lifetime,
        keep,
        nodes,
    )
