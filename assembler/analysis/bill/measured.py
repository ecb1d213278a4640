"""Simulated against measured: does each call's cache outcome agree with what was billed?

When a step carries the usage the provider reported (``StepAnalysis.measured``,
from an imported transcript or request log), :func:`compare_measured` puts each
side in one of three classes, finds the block where each side's read ended, and,
for every partial or miss, names the cause.

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
the rounding of OpenAI and small tokenizer differences):

- ``full hit``: ``R > 0`` and ``R ≥ K − tol``;
- ``partial``: ``0 < R < K − tol``;
- ``miss``: ``R = 0``.

**Structure.** Token counts differ between our tokenizer and the provider's, so
the two reads are compared by the block they ended in: the measured read is
scaled by ``simulated total / measured total`` and placed on the step's blocks
(Anthropic: the block boundary nearest to it, since reads end at a cache entry;
token-prefix providers: the block containing it). The read error is
``|simulated read − scaled measured read|`` in units of the provider's read
granularity for the model (128 tokens on most OpenAI models, 64 on DeepSeek,
1 where reads are not rounded).

**Reasons**, for a partial or miss (measured side), first match wins:

| reason | when |
|---|---|
| ``cold start`` | no earlier request shares the prefix, or it left nothing cached |
| ``model switch`` | the previous request used another model or provider (caches are per model) |
| ``branch`` | the step is labelled ``branch…``: a rewind, its history is another chain of the conversation |
| ``compaction`` | the step is labelled ``compaction…`` or none of the previous request's messages survive |
| ``expiry`` | the gap since the previous request is longer than the lifetime its writes had (the billed 5m/1h when recorded) |
| ``block changed`` | the request departs from the previous one before the end of what that one left cached; the sentence names the block |
| ``history re-sent by the client`` | nothing recorded changed, yet the provider read only the system prompt |
| ``provider-side routing`` | nothing changed or expired and the previous request was sent less than a minute before |
| ``unexplained`` | none of the above |

A disagreement where the provider read *more* than the simulator (by more than
the tolerance) is ``unexplained``: a prefix kept warm by another session, or a
provider lifetime longer than the rules assume.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from operator import attrgetter

from assembler.analysis.bill.measured_causes import (
    BLOCK_CHANGED,
    BRANCH,
    COLD_START,
    COMPACTION,
    EXPIRY,
    FULL_HIT,
    HISTORY_RESENT,
    MISS,
    MODEL_SWITCH,
    PARTIAL,
    REASONS,
    ROUTING,
    UNEXPLAINED,
    Link,
    Seen,
    Side,
    block_name,
    classify,
    granularity,
    measured_side,
    read_end,
    reason_for,
    reusable,
    simulated_side,
    tolerance,
)
from assembler.analysis.engine import SessionAnalysis, StepAnalysis
from assembler.design.wire import prefix_links

__all__ = [
    "BLOCK_CHANGED",
    "BRANCH",
    "COLD_START",
    "COMPACTION",
    "EXPIRY",
    "FULL_HIT",
    "HISTORY_RESENT",
    "MISS",
    "MODEL_SWITCH",
    "PARTIAL",
    "REASONS",
    "ROUTING",
    "UNEXPLAINED",
    "MeasuredComparison",
    "Side",
    "classify",
    "compare_measured",
    "measured_check_json",
]


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
    read_end_simulated: str | None = None  # the block the simulator's read ended in
    read_end_measured: str | None = None  # the block the provider's read ended in
    read_error: int = 0  # |simulated − measured read| in units of ``granularity`` tokens
    granularity: int = 1
    changed_block: str | None = None  # for ``block changed``: the first block that differs

    @property
    def structure_agrees(self) -> bool:
        return self.read_end_simulated == self.read_end_measured


_TOKENS = attrgetter("tokens")


def _links(steps: tuple[StepAnalysis, ...]) -> Iterator[tuple[Link, list[int]]]:
    """For each step, the earlier step with the longest common block prefix (latest on a
    tie), and where each of its blocks ends (summed once, for the link and both reads)."""
    for s, (best, shared) in zip(steps, prefix_links(s.blocks for s in steps), strict=True):
        ends = list(accumulate(map(_TOKENS, s.blocks)))
        prev = steps[best] if best is not None else None
        yield Link(prev, shared, ends[shared - 1] if shared else 0), ends


def _compare_step(
    a: SessionAnalysis,
    step: StepAnalysis,
    link: Link,
    classes: dict[int, str],
    ends: list[int],
) -> MeasuredComparison:
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
    classes[step.step] = meas_class
    scale = sim.total / meas.total if meas.total else 1.0
    sim_end = read_end(step, sim.read, ends)
    meas_end = read_end(step, meas.read * scale, ends)
    unit = granularity(step.provider, step.model)
    error = round(abs(sim.read - meas.read * scale) / unit)
    agree = sim_class == meas_class
    head = f"step {step.step}: simulated {sim_class}, measured {meas_class}"
    reason: str | None
    changed: str | None = None
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
        previous = classes.get(prev.step) if prev is not None else None
        reason, why, changed = reason_for(a, step, link, meas, Seen(could_meas, meas_end, previous))
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
        read_end_simulated=block_name(step, sim_end),
        read_end_measured=block_name(step, meas_end),
        read_error=error,
        granularity=unit,
        changed_block=changed,
    )


def compare_measured(a: SessionAnalysis) -> list[MeasuredComparison]:
    """One comparison per step that carries measured usage, in step order."""
    if not any(s.measured is not None for s in a.steps):
        return []
    classes: dict[int, str] = {}
    return [
        _compare_step(a, s, link, classes, ends)
        for s, (link, ends) in zip(a.steps, _links(a.steps), strict=True)
        if s.measured is not None
    ]


def measured_check_json(c: MeasuredComparison) -> dict[str, object]:
    return {
        "simulated": c.simulated_class,
        "measured": c.measured_class,
        "agree": c.agree,
        "reason": c.reason,
        "sentence": c.sentence,
        "read_end": {"simulated": c.read_end_simulated, "measured": c.read_end_measured},
        "read_error": c.read_error,
        "granularity": c.granularity,
        "changed_block": c.changed_block,
    }
