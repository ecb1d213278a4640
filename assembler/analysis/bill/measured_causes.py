"""The causes of a disagreement between a simulated and a measured cache read: the classes,
what a previous request left cached, where a read ended, and the named reasons
(the table is in :mod:`assembler.analysis.bill.measured`)."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from itertools import accumulate
from operator import attrgetter

from assembler.analysis.engine import SessionAnalysis, StepAnalysis
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
BRANCH = "branch"
BLOCK_CHANGED = "block changed"
HISTORY_RESENT = "history re-sent by the client"
ROUTING = "provider-side routing"
UNEXPLAINED = "unexplained"
REASONS = (
    COLD_START,
    MODEL_SWITCH,
    BRANCH,
    COMPACTION,
    EXPIRY,
    BLOCK_CHANGED,
    HISTORY_RESENT,
    ROUTING,
    UNEXPLAINED,
)

MIN_TOLERANCE = 128
RELATIVE_TOLERANCE = 0.005
ROUTING_WINDOW = timedelta(seconds=60)  # a miss this soon after a hit, nothing changed


@dataclass(frozen=True)
class Side:
    """One side's numbers for a step: read, write, uncached (tokens)."""

    read: int
    write: int
    uncached: int

    @property
    def total(self) -> int:
        return self.read + self.write + self.uncached


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
    if total < _minimum(prev.provider, prev.model):
        return 0
    return total - _uncounted(prev)


def _uncounted(step: StepAnalysis) -> int:
    """The tokens of ``step`` a read of all of it leaves out of the cached count (images)."""
    sim = _prefix_simulator(step.provider)
    if sim is None:
        return 0
    return sim.uncounted_tokens(step.model, ((b.name, b.tokens) for b in step.blocks))


@cache
def _prefix_simulator(provider: str) -> TokenPrefixSimulator | None:
    try:
        sim = simulator(provider, _segmenter())
    except UsageError:
        return None
    return sim if isinstance(sim, TokenPrefixSimulator) else None


@dataclass(frozen=True)
class Link:
    """The request a step continues and how much of it the step shares."""

    prev: StepAnalysis | None
    shared_blocks: int
    shared_tokens: int


def history_reset(step: StepAnalysis, link: Link) -> bool:
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


@cache
def granularity(provider: str, model: str) -> int:
    """Tokens per step of a read as the provider reports it: the model's rounding on
    token-prefix caches (from the rules file), 1 where reads are not rounded."""
    try:
        sim = simulator(provider, _segmenter())
    except UsageError:
        return 1
    return max(1, sim.unit_for(model)) if isinstance(sim, TokenPrefixSimulator) else 1


_TOKENS = attrgetter("tokens")


def read_end(step: StepAnalysis, read: float, ends: list[int] | None = None) -> int:
    """The index of the block a read of ``read`` tokens ended in (-1: nothing read);
    ``ends``: where each of the step's blocks ends, if the caller has them.

    Anthropic reads end at a cache entry, a block boundary: the nearest one. Token-prefix
    reads end anywhere: the block containing the read's last token."""
    if read <= 0 or not step.blocks:
        return -1
    if ends is None:
        ends = list(accumulate(map(_TOKENS, step.blocks)))  # never decreasing
    above = bisect_left(ends, read)  # the first block whose end reaches the read
    if step.provider != "anthropic":
        return min(above, len(ends) - 1)
    # the nearest end, the first block of those ending there on a tie (blocks of 0 tokens
    # end where the one before them does)
    if above == len(ends) or (above and read - ends[above - 1] <= ends[above] - read):
        return bisect_left(ends, ends[above - 1])
    return above


def block_name(step: StepAnalysis, index: int) -> str | None:
    return step.blocks[index].name if 0 <= index < len(step.blocks) else None


def _system_floor(step: StepAnalysis) -> int:
    """The last block before the messages: what a request reads when its history is not."""
    return max((i for i, b in enumerate(step.blocks) if b.section != "messages"), default=-1)


def _step_lifetime(a: SessionAnalysis, step: StepAnalysis) -> timedelta:
    """How long the entries ``step`` wrote live: its billed lifetime when recorded."""
    if step.write_ttl:
        try:
            return parse_duration(step.write_ttl)
        except UsageError:
            pass
    return _lifetime(step.provider, step.model, (a.provider, a.model, a.ttl))


@dataclass(frozen=True)
class Seen:
    """What the reasons need besides the step and its link."""

    could: int
    read_end: int  # the provider's read end (block index)
    previous_class: str | None  # the previous request's measured class


def reason_for(
    a: SessionAnalysis, step: StepAnalysis, link: Link, side: Side, seen: Seen
) -> tuple[str, str, str | None]:
    """The cause of a partial or miss on ``side``, its explanation, and the block it names."""
    prev, could = link.prev, seen.could
    lost = max(0, could - side.read)
    if prev is None or could <= tolerance(could):
        return COLD_START, "no earlier request left a matching prefix cached", None
    if (prev.provider, prev.model) != (step.provider, step.model):
        return (
            MODEL_SWITCH,
            f"the model switched from {prev.model} to {step.model}, whose cache is separate; "
            f"{lost:,} tokens cached for step {prev.step} were not read",
            None,
        )
    if (step.label or "").startswith("branch"):
        return (
            BRANCH,
            f"the conversation was rewound: this request continues an earlier point than "
            f"step {prev.step}, so {lost:,} tokens of the abandoned branch were not read",
            None,
        )
    if (step.label or "").startswith("compaction") or history_reset(step, link):
        return (
            COMPACTION,
            f"the history was compacted after step {prev.step}: "
            f"{lost:,} tokens of the old history are no longer sent",
            None,
        )
    life = _step_lifetime(a, prev)
    gap = step.timestamp - prev.timestamp
    if gap > life:
        return (
            EXPIRY,
            f"{_duration(gap)} idle since step {prev.step}, the last "
            f"request of {step.model} with this prefix (lifetime {_duration(life)}): "
            f"{lost:,} tokens expired",
            None,
        )
    if link.shared_tokens < could - tolerance(could):
        # the block of the previous request the two part at (a dropped block is named)
        changed = block_name(prev, link.shared_blocks) or block_name(step, link.shared_blocks)
        return (
            BLOCK_CHANGED,
            f"{changed or '?'} of step {prev.step} is not sent the same way, before the end of "
            f"what that request left cached: {lost:,} tokens from there on were not read",
            changed,
        )
    floor = _system_floor(step)
    if side.read > 0 and 0 <= seen.read_end <= floor:
        return (
            HISTORY_RESENT,
            f"nothing recorded changed since step {prev.step}, yet the provider read only up to "
            f"{block_name(step, seen.read_end)}: the client sent the history differently",
            None,
        )
    if gap <= ROUTING_WINDOW and seen.previous_class == FULL_HIT:
        return (
            ROUTING,
            f"{int(gap.total_seconds())} s after step {prev.step}'s full hit with nothing "
            f"changed or expired: the request reached a machine without the entry",
            None,
        )
    return UNEXPLAINED, f"{lost:,} tokens step {prev.step} left cached were not read", None
