"""Which component is volatile, found by perturbation, and what that costs before anything is sent.

Every component of a few steps of the session (first, middle, last) is built
again under each :data:`PERTURBATIONS` entry; a component whose text differs
changes under that perturbation. Its position relative to the breakpoints
says what the change throws away, and the session's timing how often.
A component that changes under something that happens between the calls of
one session (a clock minute or hour, a tool result) while stable cached
content follows it is an error. Recorded requests (imported sessions) are
read instead: a block that differs from the previous request in a few
characters ahead of a breakpoint is an error, shown with the differing text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from zoneinfo import ZoneInfo

from assembler.analysis.advice.perturbations import (
    ALL_PERTURBATIONS,
    NEXT_CALL,
    PERTURBATIONS,
    Perturbation,
)
from assembler.analysis.advice.recorded_lint import RecordedFlag, recorded_flags
from assembler.analysis.engine import Layout, SessionAssembler, builtin_layout
from assembler.cache.providers import normalize_provider
from assembler.cache.tokenizers import counter, tokenizer_for
from assembler.design.assembly import Assembly, assemble
from assembler.design.blocks import BlockStatus
from assembler.design.registry import Registry
from assembler.design.wire import CIRCLED, Wire, build_wire
from assembler.sessions.model import Session
from assembler.sessions.replay import Step

ERROR, COST, STABLE = "error", "cost", "stable"


@dataclass(frozen=True)
class ComponentLint:
    name: str
    layer: str
    position: str  # "sits before ②", "after the last breakpoint", "not emitted"
    changes: tuple[str, ...]  # keys of the perturbations its text changed under
    tokens_at_risk: int  # tokens from this block to the last breakpoint
    severity: str  # error | cost | stable
    cost: str
    fix: str | None


@dataclass(frozen=True)
class LintReport:
    session: str
    layout: str
    perturbations: tuple[Perturbation, ...]
    components: tuple[ComponentLint, ...]
    recorded: tuple[RecordedFlag, ...]
    midnights: int  # local-day rollovers between consecutive calls

    @property
    def errors(self) -> int:
        return sum(c.severity == ERROR for c in self.components) + len(self.recorded)

    def volatile(self, within_session: bool = True) -> tuple[str, ...]:
        """Components inside the cached prefix that change under a perturbation of that kind."""
        keys = {p.key for p in self.perturbations if p.within_session == within_session}
        return tuple(
            c.name for c in self.components if c.severity != STABLE and keys & set(c.changes)
        )


def _texts(assembly: Assembly) -> dict[str, str | None]:
    return {
        r.name: (r.text if r.status is BlockStatus.EMITTED else f"<{r.status.value}>")
        for r in assembly.records
    }


def _probe_steps(steps: Sequence[Step]) -> list[Step]:
    picked = {0, len(steps) // 2, len(steps) - 1}
    return [steps[i] for i in sorted(picked) if 0 <= i < len(steps)]


def _midnights(steps: Sequence[Step]) -> int:
    days = []
    for s in steps:
        try:
            zone = ZoneInfo(s.context.profile.environment.timezone)
        except (KeyError, ValueError):
            zone = ZoneInfo("UTC")
        days.append(s.at.astimezone(zone).date())
    return sum(a != b for a, b in pairwise(days))


@dataclass(frozen=True)
class _Place:
    index: int
    before: int | None  # number of the first breakpoint at or after the block
    tokens_at_risk: int
    stable_after: set[str]  # cacheable names between this block and the last breakpoint
    shut_out: int  # for a block not cached: tokens of cacheable blocks behind it (never cached)


def _places(wire: Wire, count: object) -> dict[str, _Place]:
    blocks = wire.blocks
    marks = [i for i, b in enumerate(blocks) if b.breakpoint is not None]
    last = marks[-1] if marks else -1
    tokens = [count(b.text) for b in blocks]  # type: ignore[operator]
    out: dict[str, _Place] = {}
    for i, b in enumerate(blocks):
        before = next((blocks[m].breakpoint for m in marks if m >= i), None)
        risk = sum(tokens[i : last + 1]) if i <= last else 0
        after = {x.name for x in blocks[i + 1 : last + 1] if x.cacheable}
        shut = (
            0
            if b.cacheable
            else sum(
                t for x, t in zip(blocks[i + 1 :], tokens[i + 1 :], strict=True) if x.cacheable
            )
        )
        out[b.name] = _Place(i, before, risk, after, shut)
    return out


def _position(place: _Place | None) -> str:
    if place is None:
        return "not emitted"
    if place.before is None:
        return "after the last breakpoint"
    return f"sits before {CIRCLED[place.before - 1]}"


def _span(wire: Wire, place: _Place) -> str:
    marks = [i for i, b in enumerate(wire.blocks) if b.breakpoint is not None]
    layers = {b.layer.value for b in wire.blocks[place.index : (marks[-1] if marks else -1) + 1]}
    return " + ".join(sorted(layers)) or "nothing cached"


def _judge(
    name: str,
    changed: dict[str, set[str]],
    place: _Place | None,
    wire: Wire,
    midnights: int,
) -> tuple[str, str, str | None]:
    """Severity, cost sentence and fix of one component."""
    keys = [p for p in ALL_PERTURBATIONS if p.key in changed]
    if not keys:
        return STABLE, "", None
    if place is not None and place.shut_out and NEXT_CALL.key in changed:
        # per-call content ahead of cacheable blocks ends the cached prefix on every call
        return (
            ERROR,
            f"keeps ≈ {place.shut_out:,} cacheable tokens behind it out of the cache on every call",
            "move after the last cacheable block",
        )
    if place is None or place.before is None:
        return STABLE, "outside the cached prefix: costs nothing", None
    risk, span = place.tokens_at_risk, _span(wire, place)
    last_mark = max(b.breakpoint or 0 for b in wire.blocks)
    fixes: list[str] = []
    often = ""
    for p in keys:
        # stable content behind it, up to the last breakpoint, is rewritten for nothing
        if p.within_session and p.key != "midnight" and place.stable_after - changed[p.key]:
            fix = p.fix if p.fix != "move after ④" else f"move after {CIRCLED[last_mark - 1]}"
            # a call-to-call change already explained by a clock or a key order needs no move
            redundant = (p.key == "clock+1h" and "drop minutes" in fixes) or (
                p is NEXT_CALL and bool(fixes)
            )
            if fix not in fixes and not redundant:
                fixes.append(fix)
            often = often or ("on every call" if p.every_call else "once an hour")
    if fixes:
        return ERROR, f"breaks {span} {often} (≈ {risk:,} tokens rewritten)", ", ".join(fixes)
    first = keys[0]
    if first.key == "midnight":
        when = (
            f"the session crosses midnight {midnights}×"
            if midnights
            else "no rollover in this session"
        )
        return COST, f"cost at rollover ≈ {risk:,} tokens written ({when})", None
    if first.within_session:
        return COST, f"rewrites the cached tail on every call (≈ {risk:,} tokens)", None
    return COST, f"rewrites {span} per session (≈ {risk:,} tokens)", None


def _per_call(assembler: SessionAssembler, steps: Sequence[Step]) -> dict[str, set[str]]:
    """Components whose text differs from the previous call's on most of the session's calls."""
    counts: dict[str, int] = {}
    previous: dict[str, str | None] | None = None
    for step in steps:
        texts = _texts(assembler.assemble(step).assembly)
        if previous is not None:
            for n, text in texts.items():
                if previous.get(n) != text:
                    counts[n] = counts.get(n, 0) + 1
        previous = texts
    often = {n for n, k in counts.items() if k * 2 > len(steps) - 1}
    return {n: often for n in often}


def lint_session(
    session: Session, layout: Layout | None = None, registry: Registry | None = None
) -> LintReport:
    """Perturb every component of a few steps of ``session`` under ``layout`` (default ``seed``),
    over ``registry`` (default: the built-in components)."""
    layout = layout or builtin_layout("seed")
    assembler = SessionAssembler(session, layout, registry)
    steps = list(assembler.steps())
    assembled = [s for s in steps if s.call.request is None]
    provider = normalize_provider(session.profile.provider)
    count = counter(tokenizer_for(provider, session.profile.model).encoding).count
    changed: dict[str, dict[str, set[str]]] = {}  # component → perturbation → names changed with it
    places: dict[str, _Place] = {}
    layers: dict[str, str] = {}
    wire: Wire | None = None
    for step in _probe_steps(assembled):
        base = assemble(assembler.registry, step.context)
        wire = build_wire(base, layout.breakpoints, layout.breakpoint_ttl)
        for name, place in _places(wire, count).items():
            # the latest probe has the longest tree: the largest share at risk
            places[name] = place
        before = _texts(base)
        for r in base.records:
            layers[r.name] = r.layer.value
        for p in PERTURBATIONS:
            ctx = p.apply(step.context)
            if ctx is None:
                continue
            after = _texts(assemble(assembler.registry, ctx))
            moved = {n for n in before if before[n] != after.get(n)}
            for n in moved:
                changed.setdefault(n, {}).setdefault(p.key, set()).update(moved)
    for n, names in _per_call(assembler, assembled).items():
        changed.setdefault(n, {})[NEXT_CALL.key] = names
    midnights = _midnights(steps)
    rows: list[ComponentLint] = []
    if wire is not None:
        for c in assembler.registry:
            found = places.get(c.name)
            mine = changed.get(c.name, {})
            severity, cost, fix = _judge(c.name, mine, found, wire, midnights)
            rows.append(
                ComponentLint(
                    name=c.name,
                    layer=layers.get(c.name, c.layer.value),
                    position=_position(found),
                    changes=tuple(p.key for p in ALL_PERTURBATIONS if p.key in mine),
                    tokens_at_risk=found.tokens_at_risk if found else 0,
                    severity=severity,
                    cost=cost,
                    fix=fix,
                )
            )
    recorded = recorded_flags([assembler.assemble(s) for s in steps if s.call.request is not None])
    return LintReport(
        session=session.id,
        layout=layout.name,
        perturbations=ALL_PERTURBATIONS,
        components=tuple(rows),
        recorded=tuple(recorded),
        midnights=midnights,
    )


def lint_lines(report: LintReport) -> list[str]:
    """The report as the CLI prints it: one line per volatile component, then recorded flags."""
    labels = {p.key: p.label for p in report.perturbations}
    volatile = [c for c in report.components if c.changes]
    costly = sum(c.severity != STABLE for c in volatile)
    out: list[str] = []
    if volatile:
        width = max(len(c.name) for c in volatile)
        said = [", ".join(labels[k] for k in c.changes) for c in volatile]
        change_width = max(len(s) for s in said)
        pos_width = max(len(c.position) for c in volatile)
        for c, what in zip(volatile, said, strict=True):
            line = (
                f"{c.name.ljust(width)}  changes: {what.ljust(change_width)}  "
                f"{c.position.ljust(pos_width)}  {c.cost}"
            )
            if c.severity == ERROR:
                line += f"  ← error: {c.fix}"
            out.append(line.rstrip())
    for f in report.recorded:
        out.append(
            f"step {f.step} {f.block}: {f.before!r} → {f.after!r} {f.position}  ← error: {f.fix}"
        )
    if not report.components:
        out.append(f"{report.errors} error(s) in the recorded requests ({report.session})")
        return out
    stable = sum(1 for c in report.components if not c.changes and c.position != "not emitted")
    out.append(
        f"{report.errors} error(s); {costly} volatile component(s) in the cached prefix,"
        f" {stable} stable ({report.session}, layout {report.layout})"
    )
    return out
