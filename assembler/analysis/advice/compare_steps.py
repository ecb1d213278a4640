"""Two analyses of one session step by step: where they first differ, and how, on each side.

The first divergence is the first step where read, write, uncached tokens or cost
differ between the two layouts, whichever side got the worse of it. Each side
then says what happened there: its miss (component and sentence) or that it
missed nothing, so a banner never blames one layout for the other's expiry.
"""

from __future__ import annotations

from dataclasses import dataclass

from assembler.analysis.engine import BlockAnalysis, SessionAnalysis, StepAnalysis

#: Costs closer than this (USD) are the same cost: float sums of identical prices.
COST_EPSILON = 1e-12


@dataclass(frozen=True)
class SideAtStep:
    read: int
    write: int
    uncached: int
    usd: float
    miss_component: str | None
    miss_layer: str | None
    miss_sentence: str | None


@dataclass(frozen=True)
class StepPair:
    step: int
    base: SideAtStep
    head: SideAtStep

    @property
    def usd_difference(self) -> float:
        """head − base (USD)."""
        return self.head.usd - self.base.usd

    @property
    def differs(self) -> bool:
        b, h = self.base, self.head
        return (b.read, b.write, b.uncached) != (h.read, h.write, h.uncached) or abs(
            b.usd - h.usd
        ) > COST_EPSILON

    @property
    def worse(self) -> str | None:
        """``base`` / ``head``: the side that read less (then: paid more) here; None if equal."""
        if self.head.read != self.base.read:
            return "head" if self.head.read < self.base.read else "base"
        if abs(self.usd_difference) > COST_EPSILON:
            return "head" if self.usd_difference > 0 else "base"
        return None


def _side(s: StepAnalysis) -> SideAtStep:
    m = s.miss
    return SideAtStep(
        s.read,
        s.write,
        s.uncached,
        s.usd,
        m.component if m else None,
        m.layer if m else None,
        m.sentence if m else None,
    )


def pairs(base: SessionAnalysis, head: SessionAnalysis) -> list[StepPair]:
    return [
        StepPair(b.step, _side(b), _side(h)) for b, h in zip(base.steps, head.steps, strict=False)
    ]


def first_divergence(steps: list[StepPair]) -> StepPair | None:
    return next((p for p in steps if p.differs), None)


def side_sentence(name: str, side: SideAtStep) -> str:
    """What one side did at a step, in one sentence."""
    numbers = f"reads {side.read:,}, writes {side.write:,}, sends {side.uncached:,} uncached"
    if side.miss_sentence:
        return f"{name} {numbers}: {side.miss_sentence}"
    return f"{name} {numbers}; no miss (it kept every cacheable block it could)."


def first_block_difference(base: StepAnalysis, head: StepAnalysis) -> BlockAnalysis | None:
    """The first block the layouts lay out differently; else the first cached differently.

    A block can be cached differently only because of what the head moved after it
    (the date after breakpoint ③ is cached by ④ alone), so layout comes first.
    """
    for i, hb in enumerate(head.blocks):
        if i >= len(base.blocks):
            return hb
        bb = base.blocks[i]
        if (bb.name, bb.layer, bb.text) != (hb.name, hb.layer, hb.text):
            return hb
    if len(base.blocks) > len(head.blocks):
        return base.blocks[len(head.blocks)]
    for bb, hb in zip(base.blocks, head.blocks, strict=False):
        if bb.cache != hb.cache:
            return hb
    return None


def banner(
    pair: StepPair, base: StepAnalysis, head: StepAnalysis, ttls: tuple[str, str] = ("", "")
) -> str:
    """One sentence: where the layouts part, which side did worse there and by what measure.

    ``ttls``: each side's session lifetime (base, head), for breakpoints without their own.
    """
    worse = pair.worse
    block = first_block_difference(base, head)
    where = f"; the requests part at {block.name} ({block.layer})" if block else ""
    if worse is None:
        return f"First divergence at step {pair.step}{where}."
    b, h = pair.base, pair.head
    if b.read != h.read:
        what = f"reads less ({min(b.read, h.read):,} against {max(b.read, h.read):,} tokens)"
    else:
        sides = ((base, ttls[0]), (head, ttls[1]))
        what = _dearer(pair, sides if worse == "base" else sides[::-1])
    return f"First divergence at step {pair.step}: the {worse} layout {what}{where}."


def _lifetimes(s: StepAnalysis, ttl: str) -> str:
    """The lifetimes its written breakpoints carry: ``1h``, or ``1h and 5m``."""
    found = {
        b.marker_ttl or s.write_ttl or ttl
        for b in s.blocks
        if b.breakpoint is not None and b.cache == "write"
    }
    return " and ".join(sorted(t for t in found if t))


def _dearer(pair: StepPair, sides: tuple[tuple[StepAnalysis, str], ...]) -> str:
    """Why the side that reads as much pays more: other tokens, or the same at another rate."""
    (mine, ttl), (other, other_ttl) = sides
    more = f"${abs(pair.usd_difference):,.6f} more"
    if (mine.write, mine.uncached) != (other.write, other.uncached):
        return (
            f"writes {mine.write:,} and sends {mine.uncached:,} uncached against"
            f" {other.write:,} and {other.uncached:,}: {more}"
        )
    rate, other_rate = _lifetimes(mine, ttl), _lifetimes(other, other_ttl)
    if mine.write and rate and other_rate and rate != other_rate:
        return (
            f"writes the same {mine.write:,} tokens at the {rate} rate{'s' * (' and ' in rate)}"
            f" (the other at {other_rate}): {more}"
        )
    return f"pays {more} for the same tokens"
