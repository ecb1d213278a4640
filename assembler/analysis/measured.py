"""Simulated against measured: does each call's cache outcome agree with what was billed?

When a step carries the usage the provider reported (``StepAnalysis.measured``,
from an imported transcript or request log), :func:`compare_measured` puts each
side in one of three classes and, for every partial or miss, names the cause.

**The previous request.** A request continues the earlier request it shares the
longest leading run of blocks with (same section and text; the most recent one
on a tie): for an agent that is its own previous call, whatever other threads
(subagents) ran in between. Nothing shared means a cold start.

**What it could read** (``K``, per side, from that side's own numbers so that a
tokenizer difference between the simulator and the provider does not matter):
what the previous request left cached: its read + write on Anthropic (writes
stop at the last breakpoint); its whole input on the other providers, which
cache every prefix automatically and do not report writes (0 below the model's
minimum).

**Classes** (``R`` = the step's read, tolerance ``tol = max(128, 0.5 % of K)`` for
the 128-token rounding of OpenAI and small tokenizer differences):

- ``full hit``: ``R > 0`` and ``R ≥ K − tol``: everything before the new tail
  was read; only what the request appended was written or sent uncached;
- ``partial``: ``0 < R < K − tol``: part of what was cached was not read;
- ``miss``: ``R = 0``: nothing was read.

**Reasons**, for a partial or miss (measured side), first match wins:

| reason | when |
|---|---|
| ``cold start`` | no earlier request shares the prefix, or it left nothing cached (``K ≤ tol``) |
| ``model switch`` | the previous request used another model or provider (caches are per model) |
| ``expiry`` | the idle gap since the previous request is longer than the cache lifetime |
| ``compaction`` | the step is labelled ``compaction…`` or its history was reset: none of the previous request's messages survive |
| ``change in the middle of the history`` | the request departs from the previous one before the end of what that one left cached |
| ``unexplained`` | none of the above |

A disagreement where the provider read *more* than the simulator (by more than
the tolerance) is ``unexplained``: a prefix kept warm by another session, or a
provider lifetime longer than the rules assume. A disagreement where it read
less gets the reason above for the measured side.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from functools import cache

from assembler.analysis.results import SessionAnalysis, StepAnalysis
from assembler.cache.anthropic import AnthropicSimulator
from assembler.cache.providers import simulator
from assembler.cache.rules import parse_duration
from assembler.cache.segmenter import Segmenter
from assembler.cache.token_prefix import TokenPrefixSimulator
from assembler.cache.tokenizers import TokenCounter
from assembler.errors import UsageError
from assembler.sessions.model import Usage

FULL_HIT = "full hit"
PARTIAL = "partial"
MISS = "miss"

COLD_START = "cold start"
MODEL_SWITCH = "model switch"
EXPIRY = "expiry"
COMPACTION = "compaction"
MIDDLE_CHANGE = "change in the middle of the history"
UNEXPLAINED = "unexplained"

MIN_TOLERANCE = 128
RELATIVE_TOLERANCE = 0.005


@dataclass(frozen=True)
class Side:
    """One side's numbers for a step: read, write, uncached (tokens)."""

    read: int
    write: int
    uncached: int

    @property
    def total(self) -> int:
        return self.read + self.write + self.uncached


@dataclass(frozen=True)
class MeasuredComparison:
    step: int
    simulated: Side
    measured: Side
    simulated_class: str  # full hit | partial | miss
    measured_class: str
    agree: bool
    reason: str | None  # None for an agreed full hit
    sentence: str
    previous_step: int | None  # the request this one continues (None: cold start)


def measured_side(u: Usage) -> Side:
    """Measured usage in the simulator's terms (``input`` is the uncached input)."""
    return Side(read=u.cache_read, write=u.cache_write, uncached=u.input)


def simulated_side(s: StepAnalysis) -> Side:
    return Side(read=s.read, write=s.write, uncached=s.uncached)


def tolerance(reusable: int) -> int:
    return max(MIN_TOLERANCE, round(reusable * RELATIVE_TOLERANCE))


def classify(read: int, reusable: int) -> str:
    """``full hit`` / ``partial`` / ``miss`` for a read against what could be read."""
    if read <= 0:
        return MISS
    if read >= reusable - tolerance(reusable):
        return FULL_HIT
    return PARTIAL


@cache
def _segmenter() -> Segmenter:
    """For rule look-ups only (minimums, lifetimes): its own counter, which never counts,
    so it holds no reference to the shared token memo."""
    return Segmenter(TokenCounter("o200k_base"))


@cache
def _minimum(provider: str, model: str) -> int:
    try:
        return simulator(provider, _segmenter()).minimum(model)
    except UsageError:  # an unknown provider: assume no minimum
        return 0


@cache
def _lifetime(provider: str, model: str, session: tuple[str, str, str]) -> timedelta:
    """The cache lifetime the analysis used for ``model``.

    ``session`` is the analysis's (provider, model, ttl label): its lifetime holds
    for every Anthropic step (one simulator, one ttl) and for the session's own
    model elsewhere; other models get their rules' default.
    """
    first_provider, first_model, label = session
    if provider == first_provider and (provider == "anthropic" or model == first_model):
        try:
            return parse_duration(label)
        except UsageError:
            pass
    try:
        sim = simulator(provider, _segmenter())
    except UsageError:
        return timedelta(minutes=5)
    if isinstance(sim, TokenPrefixSimulator):
        return sim.retention_for(model).idle
    return sim.retention.idle if isinstance(sim, AnthropicSimulator) else timedelta(minutes=5)


def reusable(prev: StepAnalysis, side: Side) -> int:
    """What the previous request left cached, on one side."""
    if prev.provider == "anthropic":
        return side.read + side.write
    total = side.total
    return total if total >= _minimum(prev.provider, prev.model) else 0


@dataclass(frozen=True)
class _Link:
    """The request a step continues and how much of it the step shares."""

    prev: StepAnalysis | None
    shared_blocks: int
    shared_tokens: int


def _links(steps: tuple[StepAnalysis, ...]) -> list[_Link]:
    """For each step, the earlier step with the longest common block prefix (latest on a tie)."""
    latest: dict[int, int] = {}  # prefix hash → index of the latest step with that prefix
    out: list[_Link] = []
    for i, s in enumerate(steps):
        h = 0
        hashes: list[int] = []
        best: int | None = None
        shared = 0
        for b in s.blocks:
            h = hash((h, b.section, b.text))
            hashes.append(h)
            j = latest.get(h)
            if j is None:
                break
            best, shared = j, len(hashes)
        # finish hashing the whole request so later steps can find it
        for b in s.blocks[len(hashes) :]:
            h = hash((h, b.section, b.text))
            hashes.append(h)
        prev = steps[best] if best is not None else None
        tokens = sum(b.tokens for b in s.blocks[:shared])
        out.append(_Link(prev, shared, tokens))
        for hh in hashes:
            latest[hh] = i
    return out


def _history_reset(step: StepAnalysis, link: _Link) -> bool:
    """None of the previous request's messages is still at the head of this one's history."""
    prev = link.prev
    if prev is None:
        return False
    first_message = next((k for k, b in enumerate(prev.blocks) if b.section == "messages"), None)
    return first_message is not None and link.shared_blocks <= first_message


def _duration(d: timedelta) -> str:
    minutes = int(d.total_seconds() // 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def _reason(
    a: SessionAnalysis, step: StepAnalysis, link: _Link, side: Side, could: int
) -> tuple[str, str]:
    """The cause of a partial or miss on ``side``, and its explanation."""
    prev = link.prev
    lost = max(0, could - side.read)
    if prev is None or could <= tolerance(could):
        return COLD_START, "no earlier request left a matching prefix cached"
    if (prev.provider, prev.model) != (step.provider, step.model):
        return (
            MODEL_SWITCH,
            f"the model switched from {prev.model} to {step.model}, whose cache is separate; "
            f"{lost:,} tokens cached for step {prev.step} were not read",
        )
    life = _lifetime(step.provider, step.model, (a.provider, a.model, a.ttl))
    if step.timestamp - prev.timestamp > life:
        return (
            EXPIRY,
            f"{_duration(step.timestamp - prev.timestamp)} idle since step {prev.step}, the last "
            f"request of {step.model} with this prefix (lifetime {_duration(life)}): {lost:,} tokens expired",
        )
    if (step.label or "").startswith("compaction") or _history_reset(step, link):
        return (
            COMPACTION,
            f"the history was compacted after step {prev.step}: "
            f"{lost:,} tokens of the old history are no longer sent",
        )
    if link.shared_tokens < could - tolerance(could):
        changed = (
            step.blocks[link.shared_blocks].name if link.shared_blocks < len(step.blocks) else "?"
        )
        return (
            MIDDLE_CHANGE,
            f"{changed} differs from step {prev.step} before the end of its cached prefix: "
            f"{lost:,} tokens after it were not read",
        )
    return UNEXPLAINED, f"{lost:,} tokens step {prev.step} left cached were not read"


def _compare_step(a: SessionAnalysis, step: StepAnalysis, link: _Link) -> MeasuredComparison:
    assert step.measured is not None
    sim = simulated_side(step)
    meas = measured_side(step.measured)
    prev = link.prev
    if prev is not None and prev.measured is not None:
        could_sim = reusable(prev, simulated_side(prev))
        could_meas = reusable(prev, measured_side(prev.measured))
    elif prev is not None:
        could_sim = could_meas = reusable(prev, simulated_side(prev))
    else:
        could_sim = could_meas = 0
    sim_class = classify(sim.read, could_sim)
    meas_class = classify(meas.read, could_meas)
    agree = sim_class == meas_class
    head = f"step {step.step}: simulated {sim_class}, measured {meas_class}"
    reason: str | None
    if agree and meas_class == FULL_HIT:
        reason = None
        sentence = f"{head}: both read what the previous request left cached."
    elif not agree and meas.read > sim.read + tolerance(could_meas):
        reason = UNEXPLAINED
        sentence = (
            f"{head} — unexplained: the provider read {meas.read:,} tokens, "
            f"{meas.read - sim.read:,} more than the simulator allowed "
            f"(a prefix kept warm by another session, or a longer lifetime than assumed)."
        )
    else:
        reason, why = _reason(a, step, link, meas, could_meas)
        sentence = f"{head} — {reason}: {why}."
    return MeasuredComparison(
        step=step.step,
        simulated=sim,
        measured=meas,
        simulated_class=sim_class,
        measured_class=meas_class,
        agree=agree,
        reason=reason,
        sentence=sentence,
        previous_step=prev.step if prev is not None else None,
    )


def compare_measured(a: SessionAnalysis) -> list[MeasuredComparison]:
    """One comparison per step that carries measured usage, in step order."""
    if not any(s.measured is not None for s in a.steps):
        return []
    links = _links(a.steps)
    return [
        _compare_step(a, s, link)
        for s, link in zip(a.steps, links, strict=True)
        if s.measured is not None
    ]


def measured_check_json(c: MeasuredComparison) -> dict[str, object]:
    return {
        "simulated": c.simulated_class,
        "measured": c.measured_class,
        "agree": c.agree,
        "reason": c.reason,
        "sentence": c.sentence,
    }
