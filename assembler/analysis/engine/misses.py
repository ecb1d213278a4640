"""Why a step missed: the first block that breaks the cached prefix, and the cause in one sentence."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from assembler.analysis.engine.block_records import LAYER_NAMES, PreviousStep
from assembler.analysis.engine.causes import REASON_CAUSES, expiry_cause
from assembler.analysis.engine.results import Miss
from assembler.cache.rules import rules
from assembler.cache.simulation import CacheResult
from assembler.design.layers import Placement
from assembler.design.wire import WireBlock


def duration_text(d: timedelta) -> str:
    minutes = int(d.total_seconds() // 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


@dataclass(slots=True)  # built at every step: a plain init costs a third of a frozen one
class MissInput:
    blocks: Sequence[WireBlock]
    result: CacheResult
    changes: Sequence[str]  # block_changes of ``blocks`` against the previous step
    model: str
    provider: str
    at: datetime
    day: str
    minimum: int
    ttl: str
    compacted: bool = False  # the step is labelled as the first after a compaction
    platform: str = ""  # the serving platform with a cache of its own ("" the provider's API)
    first: int = 0  # the first block that is not the previous step's (first_difference)


def _not_read(res: CacheResult) -> str:
    """What became of tokens the cache no longer served, in the step's own numbers."""
    return f"not reused (this step writes {res.write:,} and sends {res.uncached:,} uncached)"


def find_miss(x: MissInput, prev: PreviousStep | None) -> Miss | None:
    """The first block that breaks the prefix the previous request left cached, and why."""
    if prev is None or not x.blocks:
        return None
    res = x.result
    d = x.first
    common = sum(res.block_tokens[:d])
    kept = prev.read + prev.write
    expected = min(common, kept)
    at_read = min(res.cached_blocks, len(x.blocks) - 1)

    def make(index: int, reason: str, lost: int, sentence: str) -> Miss:
        b = x.blocks[index]
        layer = LAYER_NAMES[b.layer]
        cause = expiry_cause(x.ttl) if reason == "expired" else REASON_CAUSES[reason]
        return Miss(b.name, layer, reason, lost, f"{b.name} ({layer}) {sentence}", cause)

    if res.read < expected:
        lost = expected - res.read
        if prev.platform != x.platform and prev.model == x.model:
            return make(
                at_read,
                "model switched",
                lost,
                f"lost its cache: the platform serving {x.model} switched from "
                f"{prev.platform or x.provider + ' API'} to {x.platform or x.provider + ' API'}, "
                f"whose cache is separate; {lost:,} tokens were re-sent uncached.",
            )
        if prev.model != x.model or prev.provider != x.provider:
            return make(
                at_read,
                "model switched",
                lost,
                f"lost its cache: the model switched from {prev.model} to {x.model}, "
                f"whose cache is separate; {lost:,} tokens were {_not_read(res)}.",
            )
        if res.cause == "cache_key_changed":
            return make(
                at_read,
                "cache key changed",
                lost,
                f"lost its cache: the request's prompt_cache_key changed, which routes it to "
                f"another cache; {lost:,} tokens were {_not_read(res)}.",
            )
        if res.expired:
            gap = duration_text(x.at - prev.at)
            return make(
                at_read,
                "expired",
                lost,
                f"expired from the cache after a {gap} idle gap (lifetime {x.ttl}): "
                f"{lost:,} tokens were {_not_read(res)}.",
            )
        if res.cause is not None:  # most steps: the simulator saw nothing to explain
            simulated = _simulated_cause(x, at_read, lost, make)
            if simulated is not None:
                return simulated
        if res.below_minimum or expected < x.minimum:
            return make(
                at_read,
                "below minimum",
                lost,
                f"sits in a prefix below {x.model}'s minimum of {x.minimum:,} cacheable tokens: "
                f"{lost:,} tokens were sent uncached.",
            )
        index = d if d < len(x.blocks) else at_read
        # A change after a breakpoint loses the whole segment back to it (e.g. the
        # date between ③ and the tree), not only the part before the changed block.
        lost = max(lost, min(kept, res.total) - res.read)
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
        if all(b.breakpoint is None for b in x.blocks):
            return make(
                0,
                "no breakpoint",
                common,
                f"starts a request with no cache breakpoint: nothing is written, "
                f"{common:,} repeated tokens were sent uncached.",
            )
    return None


def _simulated_cause(
    x: MissInput, index: int, lost: int, make: Callable[[int, str, int, str], Miss]
) -> Miss | None:
    """A shortfall the simulator itself explained (a provider rule, not a changed block)."""
    res = x.result
    if res.cause == "setting_changed" and res.setting_changes:
        what = "; ".join(f"{name} changed ({a} → {b})" for name, a, b in res.setting_changes)
        return make(
            index,
            "setting changed",
            lost,
            f"lost its cache: {what}, which invalidates this part of the prefix; "
            f"{lost:,} tokens were {_not_read(res)}.",
        )
    if res.cause == "concurrent_cold_write":
        return make(
            index,
            "parallel cold write",
            lost,
            f"was written by a request whose response had not started yet (sent in parallel): "
            f"this one paid the write again; {lost:,} tokens were not read.",
        )
    if res.cause == "lookback_exceeded":
        return make(
            index,
            "lookback exceeded",
            lost,
            f"was cached, but more than {rules()['anthropic']['lookback']['value']} positions "
            f"before the breakpoint, beyond the lookback: {lost:,} tokens were {_not_read(res)}.",
        )
    if res.cause == "breakpoint_mismatch":
        return make(
            index,
            "breakpoint mismatch",
            lost,
            f"sits in a stable prefix with no breakpoint at its end: the cache matches only "
            f"at a breakpoint, so {lost:,} tokens were {_not_read(res)}.",
        )
    if res.cause == "prefix_unit_mismatch":
        return make(
            index,
            "prefix unit mismatch",
            lost,
            f"sits in a prefix no stored unit fully matches: {lost:,} tokens were "
            f"{_not_read(res)}.",
        )
    return None


def _changed(
    x: MissInput,
    prev: PreviousStep,
    index: int,
    lost: int,
    make: Callable[[int, str, int, str], Miss],
) -> Miss:
    b = x.blocks[index]
    if x.changes[index] == "released":
        return make(
            index,
            "io released",
            lost,
            f"changed because a finished call's io was released: "
            f"{lost:,} tokens after it were {_not_read(x.result)}.",
        )
    if x.compacted and b.section == "messages":
        return make(
            index,
            "history compacted",
            lost,
            f"changed because the history was compacted into a summary: "
            f"{lost:,} tokens after it were {_not_read(x.result)}.",
        )
    if x.changes[index] == "new":  # no block of its name in the previous step
        return make(
            index,
            "component added",
            lost,
            f"was added: {lost:,} tokens after it were {_not_read(x.result)}.",
        )
    if index < len(prev.blocks) and prev.blocks[index].name != b.name:
        gone = prev.blocks[index].name
        if gone not in {blk.name for blk in x.blocks}:
            return Miss(
                gone,
                LAYER_NAMES[b.layer],
                "component removed",
                lost,
                f"{gone} was removed: {lost:,} tokens after it were {_not_read(x.result)}.",
                "component_removed",
            )
    if b.placement == Placement.HISTORY and b.name.startswith("messages["):
        # a recorded request whose earlier history differs from what was sent before
        return make(
            index,
            "history re-sent",
            lost,
            f"was re-sent by the client with other content than before: "
            f"{lost:,} tokens after it were {_not_read(x.result)}.",
        )
    when = " at midnight" if x.day != prev.day else ""
    return make(
        index,
        "content changed",
        lost,
        f"changed{when}: {lost:,} tokens after it were {_not_read(x.result)}.",
    )
