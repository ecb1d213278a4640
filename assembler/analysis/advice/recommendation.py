"""The cheapest layout the design allows for a set of sessions of one agent.

The search starts from the current layout and from the design's own arrangement
(the built-in ``seed``); each other built-in layout (the design's counterfactuals,
one per distinct arrangement) is billed as it is and searched from only when it
bills less than the best found so far, so the result never bills more than any. From each start, arrangements: the
start itself, each layer's components in order of how
often their text changed (more stable first, design §3), and components that
change within a session moved to the tail of L1's project part (never into L2
ahead of the call tree); then the cheapest of them with a few call-tree budgets
taken from the sessions' own tree sizes. For Anthropic each candidate gets the
cheapest breakpoint set and lifetime (:mod:`breakpoint_search`), and the winner
a lifetime per breakpoint where that bills less (:mod:`mixed_lifetimes`);
token-prefix caches have no breakpoints, so their candidates are billed as
they are. The winner is billed again by :func:`analyze`, exactly as ``compare``
bills it; if it is not cheaper than the current layout, the current layout stands. A built-in start must bill less than the current
layout's own search to replace it, so ties keep the current layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from assembler.analysis.advice.breakpoint_search import Choice, Trace, search
from assembler.analysis.advice.mixed_lifetimes import search_mixed
from assembler.analysis.advice.recommend_text import (
    Marks,
    Place,
    arrangement_sentences,
    breakpoint_sentences,
    budget_sentence,
    keep_alive_sentence,
    mixed_sentence,
    start_sentence,
    ttl_sentence,
)
from assembler.analysis.advice.recommend_trace import StepFacts, build_trace, lifetimes
from assembler.analysis.engine import (
    TTLS,
    ComponentMove,
    Layout,
    SessionAssembler,
    all_builtin_layouts,
    analyze,
)
from assembler.cache.providers import normalize_provider
from assembler.cache.rules import rules
from assembler.design.layers import Layer, Placement
from assembler.errors import UsageError
from assembler.sessions.model import LLMCall, Session


@dataclass(frozen=True)
class Recommendation:
    provider: str
    model: str
    sessions: int
    current: Layout
    recommended: Layout
    before_usd: float
    after_usd: float
    before_hit: float
    after_hit: float
    changes: tuple[str, ...]  # one sentence per change
    keep_alive: str
    nodes: int  # branches the breakpoint search visited

    @property
    def saving_per_session(self) -> float:
        return (self.before_usd - self.after_usd) / max(self.sessions, 1)

    def saving_per_month(self, sessions_per_month: int) -> float:
        return self.saving_per_session * sessions_per_month


def _bill(
    sessions: Sequence[Session], layout: Layout, provider: str, model: str
) -> tuple[float, float]:
    """USD and hit ratio over all sessions, each with its own cache, as ``compare`` bills them."""
    usd = tokens = read = 0.0
    for s in sessions:
        a = analyze(s, layout, provider=provider, model=model)
        usd += a.totals["usd"]
        tokens += a.totals["tokens"]
        read += a.totals["read"]
    return usd, read / tokens if tokens else 0.0


def _first_half(session: Session) -> Session | None:
    """``session`` up to its middle call: billed, the first half of its steps exactly, as a
    step is assembled from the events before it. None when that half holds no call (a
    session of one call), which bills nothing."""
    calls = [i for i, e in enumerate(session.events) if isinstance(e, LLMCall)]
    if len(calls) < 2:
        return None
    return replace(session, events=session.events[: calls[len(calls) // 2]])


def _bills_less(
    sessions: Sequence[Session], layout: Layout, provider: str, model: str, usd: float
) -> bool:
    """Whether ``layout`` bills less than ``usd``. No step bills less than nothing, so
    when the first halves already bill as much, the rest is not assembled."""
    halves = [h for h in map(_first_half, sessions) if h is not None]
    if halves and _bill(halves, layout, provider, model)[0] >= usd:
        return False
    return _bill(sessions, layout, provider, model)[0] < usd


def _groups(
    layout: Layout, session: Session
) -> tuple[dict[tuple[Layer, Placement], list[tuple[int, str]]], set[str]]:
    """The components by layer and placement, and the names of L1's tail components
    (the date), which stay last before the call tree."""
    registry = SessionAssembler(session, layout).registry
    groups: dict[tuple[Layer, Placement], list[tuple[int, str]]] = {}
    tails: set[str] = set()
    for c in registry:
        groups.setdefault((c.layer, c.where), []).append((c.order, c.name))
        if c.layer is Layer.L1 and c.where is Placement.SYSTEM and c.tail:
            tails.add(c.name)
    return groups, tails


def _places(layout: Layout, session: Session) -> dict[str, Place]:
    return {
        c.name: (c.layer.value, c.order, c.where.value)
        for c in SessionAssembler(session, layout).registry
    }


def _with_moves(layout: Layout, moves: dict[str, ComponentMove], name: str) -> Layout:
    merged = dict(layout.components)
    for comp, move in moves.items():
        old = merged.get(comp, ComponentMove())
        merged[comp] = replace(
            old,
            layer=move.layer or old.layer,
            order=move.order if move.order is not None else old.order,
            placement=move.placement or old.placement,
        )
    return replace(layout, name=name, components=merged)


def arrangements(
    layout: Layout, session: Session, facts: StepFacts
) -> list[tuple[Layout, dict[str, ComponentMove]]]:
    """The current arrangement and the moves the design allows that could pay."""
    out: list[tuple[Layout, dict[str, ComponentMove]]] = [(layout, {})]
    groups, tails = _groups(layout, session)
    stable: dict[str, ComponentMove] = {}
    for (_, placement), members in groups.items():
        if placement is Placement.USER_MESSAGE:
            continue  # L2 is never cached: its order costs nothing
        ranked = sorted(members, key=lambda m: (facts.changed.get(m[1], 0), m))
        if [m[1] for m in ranked] != [m[1] for m in sorted(members)]:
            orders = sorted(o for o, _ in members)
            for (old, n), order in zip(ranked, orders, strict=True):
                if order != old:
                    stable[n] = ComponentMove(order=order)
    if stable:
        out.append((_with_moves(layout, stable, layout.name), stable))
    # a component that changes within the session, moved to the tail of L1's project part:
    # after its last block (so breakpoint ③ closes on it), before the date (reading 1)
    l1_system = groups.get((Layer.L1, Placement.SYSTEM), [])
    tail = max((o for o, n in l1_system if n not in tails), default=0)
    later = [o for o, n in l1_system if n in tails and o > tail]
    room = min(later) - tail - 1 if later else None  # free orders before the date
    moved: dict[str, ComponentMove] = {}
    for _, n in groups.get((Layer.L0, Placement.SYSTEM), []):
        if facts.changed.get(n, 0) and (room is None or len(moved) < room):
            tail += 1
            moved[n] = ComponentMove(layer=Layer.L1, order=tail, placement=Placement.SYSTEM)
    if moved:
        out.append((_with_moves(layout, moved, layout.name), moved))
    return out


def _shape(layout: Layout, searched: bool = True) -> tuple[object, ...]:
    """What a bill depends on beyond the breakpoints and lifetimes, which the breakpoint
    search chooses; where it does not (``searched`` false) those too."""
    marks = (
        () if searched else (layout.breakpoints, layout.ttl, tuple(layout.breakpoint_ttl.items()))
    )
    moves = tuple(sorted(layout.components.items(), key=lambda kv: kv[0]))
    return (moves, *content_of(layout), *marks)


def _trace_key(trace: Trace) -> tuple[object, ...]:
    """Equal for traces the search bills alike (a block that never shows changes nothing)."""
    return (
        trace.names,
        trace.cum.tobytes(),
        *(trace.alive[ttl].tobytes() for ttl in TTLS),
        trace.total.tobytes(),
    )


#: Less than this (USD) is no saving: float sums of the same bill differ in the last digits.
TIE = 1e-9

#: The design's own arrangement: always a start, whatever the current layout.
DESIGN = "seed"


def content_of(layout: Layout) -> tuple[object, ...]:
    """What the model is shown under ``layout``, apart from the order of its blocks: the
    components added and switched off, what the call tree exposes and renders, its budget."""
    off = tuple(sorted(name for name, move in layout.components.items() if not move.enabled))
    return (
        layout.add,
        off,
        layout.default_expose,
        tuple(sorted(layout.expose.items())),
        layout.default_range,
        tuple(sorted(layout.render_range.items())),
        layout.tree_budget,
    )


def starts(current: Layout, searched: bool = True) -> list[Layout]:
    """The current layout, then each built-in one that shows the model what the current one
    does, in an arrangement of its own. A recommendation rearranges; a layout that changes
    the text (split-tree, expose-full, …) is a different context, weighed with compare."""
    out: list[Layout] = []
    seen: set[tuple[object, ...]] = set()
    content = content_of(current)
    for layout in (current, *all_builtin_layouts()):
        shape = _shape(layout, searched)
        if content_of(layout) != content or shape in seen:
            continue
        seen.add(shape)
        out.append(layout)
    return out


@dataclass(frozen=True)
class _Option:
    usd: float
    read: float  # tokens read (Anthropic) or the hit ratio (billed by analyze)
    arrangement: Layout
    moves: dict[str, ComponentMove]
    choice: Choice | None
    trace: Trace
    start: Layout
    facts: StepFacts

    def better(self, other: _Option | None) -> bool:
        return other is None or (self.usd, -self.read) < (other.usd, -other.read)


# The design folds the tree "only when over budget" (§5): a budget is for trees that grow
# with the session. Below this size a fold saves a fraction of a cent per call and hides
# structure the model uses, so no smaller budget is proposed (the built-in tree-budget
# layout uses 4,000).
MIN_TREE_BUDGET = 2_000


def budget_candidates(
    sizes: Sequence[int], current: int | None, floor: int = MIN_TREE_BUDGET
) -> list[int]:
    """A few call-tree budgets from the trees' own sizes: the median and the 90th
    percentile, in hundreds, each below the largest tree (a budget above it folds nothing)
    and not under ``floor``."""
    real = sorted(s for s in sizes if s > 0)
    if not real:
        return []
    out: list[int] = []
    for q in (0.5, 0.9):
        budget = real[int(q * (len(real) - 1))] // 100 * 100
        if floor <= budget < real[-1] and budget > 0 and budget != current and budget not in out:
            out.append(budget)
    return out


def billed_at(
    sessions: Sequence[Session], provider: str | None, model: str | None
) -> tuple[Session, str, str]:
    """The first session, and the provider and model the sessions are billed at."""
    if not sessions:
        raise UsageError("recommend: no session to learn from")
    first = sessions[0]
    return (
        first,
        normalize_provider(provider or first.profile.provider),
        model or first.profile.model,
    )


def only_recorded(session: Session) -> bool:
    """Whether every call of ``session`` is a recorded request, sent as recorded: no layout
    changes anything in it, so there is nothing to recommend."""
    return all(e.request is not None for e in session.events if isinstance(e, LLMCall))


def recommend(
    sessions: Sequence[Session],
    current: Layout,
    *,
    provider: str | None = None,
    model: str | None = None,
    min_tree_budget: int = MIN_TREE_BUDGET,
) -> Recommendation:
    """Search the layouts the design allows for the cheapest bill over ``sessions``."""
    first, prov, mdl = billed_at(sessions, provider, model)
    if only_recorded(first):
        raise UsageError(
            f"{first.source}: every call is a recorded request, sent as recorded; "
            "a layout changes nothing in it (run lint for its volatile blocks)"
        )
    anthropic = prov == "anthropic"
    base_trace, facts = build_trace(sessions, current, prov, mdl)
    nodes = 0
    limit = int(rules()["anthropic"]["max_breakpoints"]["value"])

    def options(
        arrangement: Layout,
        moves: dict[str, ComponentMove],
        trace: Trace,
        start: Layout,
        facts: StepFacts,
    ) -> _Option:
        nonlocal nodes
        if not anthropic:
            usd, hit = _bill(sessions, arrangement, prov, mdl)
            return _Option(usd, hit, arrangement, moves, None, trace, start, facts)
        best: _Option | None = None
        for ttl in TTLS:
            found = search(trace, ttl, limit)
            nodes += found.nodes
            option = _Option(found.usd, found.read, arrangement, moves, found, trace, start, facts)
            best = option if option.better(best) else best
        assert best is not None
        return best

    best: _Option | None = None
    unbudgeted: _Option | None = None  # the best's arrangement before a call-tree budget
    shapes: set[tuple[object, ...]] = set()
    traces: set[tuple[object, ...]] = set()
    for start in starts(current, anthropic):
        # a counterfactual of the design is searched from only when it bills less as it is
        if (
            best is not None
            and start.name != DESIGN
            and not _bills_less(sessions, start, prov, mdl, best.usd - TIE)
        ):
            continue
        own = (base_trace, facts) if start is current else build_trace(sessions, start, prov, mdl)
        plain: _Option | None = None
        for arrangement, moves in arrangements(start, first, own[1]):
            shape = _shape(arrangement, anthropic)
            if shape in shapes:
                continue  # reached from an earlier start
            shapes.add(shape)
            fresh = moves and anthropic
            trace = build_trace(sessions, arrangement, prov, mdl)[0] if fresh else own[0]
            if anthropic:
                key = _trace_key(trace)
                if key in traces:
                    continue
                traces.add(key)
            option = options(arrangement, moves, trace, start, own[1])
            plain = option if option.better(plain) else plain
        if plain is None:
            continue
        here = plain
        for budget in budget_candidates(own[1].tree_sizes, start.tree_budget, min_tree_budget):
            folded = replace(plain.arrangement, tree_budget=budget)
            trace = build_trace(sessions, folded, prov, mdl)[0] if anthropic else own[0]
            option = options(folded, plain.moves, trace, start, own[1])
            here = option if option.better(here) else here
        # another start must bill less, not merely as much: ties keep the current layout
        if best is None or here.usd < best.usd - TIE:
            best, unbudgeted = here, plain
    assert best is not None and unbudgeted is not None
    arrangement, moves, found, trace = best.arrangement, best.moves, best.choice, best.trace
    head = replace(
        arrangement, name="recommended", description="The cheapest layout found for these sessions."
    )
    marks: Marks = ()
    mixed = None  # a lifetime per breakpoint, when it bills less than one for all
    if found is not None:
        marks = tuple((n, found.ttl) for n in found.breakpoints)
        per_mark = search_mixed(trace, limit)
        if per_mark.usd < found.usd - TIE:
            mixed, marks = per_mark, per_mark.marks
        head = replace(
            head,
            breakpoints=tuple(f"after:{n}" for n, _ in marks),
            ttl=found.ttl if mixed is None else None,
            breakpoint_ttl={} if mixed is None else {f"after:{n}": t for n, t in marks},
        )
    before = _bill(sessions, current, prov, mdl)
    after = _bill(sessions, head, prov, mdl)
    changes: list[str] = []
    start = best.start
    if (after[0], -after[1]) >= (before[0], -before[1]):
        head = replace(
            current,
            name="recommended",
            description="The current layout is already the cheapest found.",
        )
        after, moves, found, marks, mixed, start = before, {}, None, (), None, current
        changes.append(
            "No change to the layout: no arrangement, breakpoint set, lifetime or call-tree"
            " budget the design allows bills less on these sessions."
        )
    else:
        facts = best.facts
    if start is not current:
        changes.append(
            start_sentence(
                current, start, _places(current, first), _places(start, first), anthropic
            )
        )
    changes += arrangement_sentences(moves, facts, trace.steps)
    if head.tree_budget is not None and head.tree_budget != start.tree_budget:
        changes.append(
            budget_sentence(head.tree_budget, facts.tree_sizes, best.usd, unbudgeted.usd)
        )
    if found is not None:
        changes += breakpoint_sentences(current, marks, trace)
        if mixed is not None:
            changes.append(mixed_sentence(trace, mixed, found.usd, facts.gaps, lifetimes()))
        else:
            changes.append(ttl_sentence(found.ttl, facts.gaps, lifetimes()))
    if marks:
        keep = keep_alive_sentence(trace, marks, facts.gaps, lifetimes())
    elif prov == "anthropic":
        keep = "Keep-alive: no breakpoint, nothing to keep alive."
    else:
        keep = "Keep-alive: this provider's cache has no breakpoints to keep alive."
    return Recommendation(
        provider=prov,
        model=mdl,
        sessions=len(sessions),
        current=current,
        recommended=head,
        before_usd=before[0],
        after_usd=after[0],
        before_hit=before[1],
        after_hit=after[1],
        changes=tuple(changes),
        keep_alive=keep,
        nodes=nodes,
    )
