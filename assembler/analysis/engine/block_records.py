"""Per-block change detection and records shared between steps while a block and its cache state hold.

Successive steps share most of their wire blocks as the very same objects (the
wire builder keeps a block while its text and breakpoint hold). The leading
blocks a step shares that way with the step before are counted once, at C
speed (``leading_same``); their change labels, layer sums and records
are the previous step's, taken by slicing, and Python runs only over the
blocks after them, so a step costs what changed in it, not its length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import compress, count
from operator import attrgetter, ne

from assembler.analysis.engine.results import BlockAnalysis
from assembler.cache.simulation import CacheResult
from assembler.design.layers import Layer
from assembler.design.wire import WireBlock, leading_same
from assembler.sessions.versions import SMALL, StoredText, TextVersions

_NAME = attrgetter("name")

# --- comparing blocks -------------------------------------------------------------------


def same_text(a: WireBlock, b: WireBlock) -> bool:
    """Whether two blocks carry the same text: the one place the analysis compares
    the texts of two blocks (the very same block or content object answers first; a
    call tree's pieces compare by length, then piece by piece)."""
    if a is b:
        return True
    content = a.content
    other = b.content
    return content is other or content == other


def common_length(a: Sequence[object], b: Sequence[object], limit: int) -> int:
    """How many of the first ``limit`` items of ``a`` and ``b`` are equal, at C speed
    (the index of the first unequal pair, found by the iterators, not by bisection)."""
    return min(next(compress(count(), map(ne, a, b)), limit), limit, len(a), len(b))


# --- one step -------------------------------------------------------------------------


@dataclass(slots=True)  # built at every step: a plain init costs a third of a frozen one
class PreviousStep:
    """What the previous step left behind, for change and miss detection."""

    blocks: tuple[WireBlock, ...]
    read: int
    write: int
    model: str
    provider: str
    at: datetime
    day: str
    event_index: int
    platform: str = ""  # the serving platform with a cache of its own ("" the provider's API)
    # the names of :attr:`blocks`, listed on the first question (most steps ask none)
    _names: list[str] | None = field(default=None, init=False, repr=False, compare=False)

    def block_named(self, name: str) -> WireBlock | None:
        """The first of :attr:`blocks` called ``name``, if any."""
        names = self._names
        if names is None:
            names = self._names = list(map(_NAME, self.blocks))
        # a step asks for a name or two: scans at C speed beat building a dict
        return self.blocks[names.index(name)] if name in names else None


def layer_tokens(blocks: Sequence[WireBlock], tokens: Sequence[int]) -> dict[str, int]:
    """Tokens per layer (tools apart from L0) and in all."""
    return LayerSums().of(blocks, tokens)


class LayerSums:
    """:func:`layer_tokens` of successive steps: running sums by position, of which the
    leading blocks a call shares with the previous one (the same objects with the same
    token counts) keep the previous call's."""

    def __init__(self) -> None:
        self._blocks: Sequence[WireBlock] = ()
        self._tokens: Sequence[int] = ()
        # tools, L0, L1, L2 tokens of the blocks before each position
        self._running: list[tuple[int, int, int, int]] = [(0, 0, 0, 0)]

    def of(
        self, blocks: Sequence[WireBlock], tokens: Sequence[int], same: int | None = None
    ) -> dict[str, int]:
        """``same``: how many leading ``blocks`` are the previous call's own objects
        (None: counted here)."""
        if same is None:
            same = leading_same(blocks, self._blocks)
        keep = same if tokens[:same] == self._tokens[:same] else 0
        if not keep and same:
            keep = common_length(tokens, self._tokens, same)
        running = self._running  # cut and extended in place: only this object holds it
        del running[keep + 1 :]
        tools, l0, l1, l2 = running[-1]
        for b, n in zip(blocks[keep:], tokens[keep:], strict=True):
            if b.section == "tools":
                tools += n
            elif b.layer == "L0":  # a StrEnum: equal to its value
                l0 += n
            elif b.layer == "L1":
                l1 += n
            else:
                l2 += n
            running.append((tools, l0, l1, l2))
        self._blocks, self._tokens, self._running = blocks, tokens, running
        # every block counts in one of the four: their sum is the total
        return {"total": tools + l0 + l1 + l2, "tools": tools, "L0": l0, "L1": l1, "L2": l2}


LAYER_NAMES = {layer: layer.value for layer in Layer}


def block_changes(
    blocks: Sequence[WireBlock],
    prev: PreviousStep | None,
    released: bool,
    same: int | None = None,
) -> tuple[str, ...]:
    """Per block: new, changed, unchanged or released (the call tree after a finished
    call's io was let go). ``same``: how many leading ``blocks`` are the very objects
    of the previous step's (None: counted here); they are unchanged without a look."""
    if prev is None:
        return ("new",) * len(blocks)
    if same is None:
        same = leading_same(blocks, prev.blocks)
    return step_changes(blocks, prev, released, same)[0]


def step_changes(
    blocks: Sequence[WireBlock], prev: PreviousStep, released: bool, same: int
) -> tuple[tuple[str, ...], int]:
    """:func:`block_changes` against ``prev`` and, from the same look at each block,
    :func:`first_difference`: one walk over the blocks after the ``same`` leading
    ones, which are the previous step's very objects."""
    n = len(blocks)
    head = ("unchanged",) * same
    if same == n:
        return head, n
    before = prev.blocks
    n_before = len(before)
    first = -1  # the first block not the previous step's at its place (name and text)
    out: list[str] = []
    for i in range(same, n):
        b = blocks[i]
        old = before[i] if i < n_before else None
        if old is b:  # the very block of the last step
            out.append("unchanged")
            continue
        if old is None or old.name != b.name:
            if first < 0:
                first = i
            old = prev.block_named(b.name)
        if old is None:
            out.append("new")
        elif same_text(old, b):
            out.append("unchanged")
            continue
        elif released and b.name == "call_tree":
            out.append("released")
        else:
            out.append("changed")
        if first < 0:
            first = i
    return head + tuple(out), n if first < 0 else first


def _analysis(
    b: WireBlock, tokens: int, cache: str, change: str, stored: str | StoredText
) -> BlockAnalysis:
    return BlockAnalysis(
        b.name,
        LAYER_NAMES[b.layer],
        b.section,
        tokens,
        cache,
        change,
        b.breakpoint,
        stored,
        b.cacheable,
        b.ttl if b.breakpoint is not None else None,
    )


class BlockRecords:
    """Block analyses shared between steps.

    A block that is the very wire block of an earlier step (an unchanged system
    prompt) in the same cache state gets the same record back, so a long
    session holds a few records per component rather than one per step; a
    changed long text is kept as a delta against its previous version. The
    leading blocks of a call that are the previous call's, with the same tokens,
    cache state and change, take its records by slicing.
    """

    def __init__(self) -> None:
        self._by_name: dict[str, tuple[WireBlock, dict[tuple[str, str, int], BlockAnalysis]]] = {}
        self._versions: dict[str, TextVersions] = {}
        # the previous call: its blocks, their tokens, cache states, changes and records
        self._last: tuple[
            Sequence[WireBlock],
            Sequence[int],
            Sequence[str],
            Sequence[str],
            tuple[BlockAnalysis, ...],
        ] = ((), (), (), (), ())

    def analyses(
        self,
        blocks: Sequence[WireBlock],
        result: CacheResult,
        changes: Sequence[str],
        same: int | None = None,
    ) -> tuple[BlockAnalysis, ...]:
        """``same``: how many leading ``blocks`` are the previous call's own objects
        (None: counted here)."""
        tokens, states = result.block_tokens, result.block_cache
        last_blocks, last_tokens, last_states, last_changes, last_records = self._last
        if same is None:
            same = leading_same(blocks, last_blocks)
        keep = same  # a record is a function of the block, its tokens, cache state and change
        # each narrowed only when it differs (cache states often do: a write read back)
        if keep and tokens[:keep] != last_tokens[:keep]:
            keep = common_length(tokens, last_tokens, keep)
        if keep and states[:keep] != last_states[:keep]:
            keep = common_length(states, last_states, keep)
        if keep and changes[:keep] != last_changes[:keep]:
            keep = common_length(changes, last_changes, keep)
        out = self._fresh(blocks, tokens, states, changes, keep, last_records)
        self._last = (blocks, tokens, states, changes, out)
        return out

    def _fresh(
        self,
        blocks: Sequence[WireBlock],
        tokens: Sequence[int],
        states: Sequence[str],
        changes: Sequence[str],
        start: int,
        last: tuple[BlockAnalysis, ...],
    ) -> tuple[BlockAnalysis, ...]:
        """The first ``start`` of ``last``, then the records of the blocks from ``start``
        on, through the records kept by name."""
        out = list(last[:start])
        by_name, versions = self._by_name, self._versions
        for b, n, c, ch in zip(
            blocks[start:], tokens[start:], states[start:], changes[start:], strict=True
        ):
            name = b.name
            kept = by_name.get(name)
            if kept is not None and kept[0] is b:
                records = kept[1]
                key = (c, ch, n)
                record = records.get(key)
                if record is None:  # the block's text is stored once, whatever its states
                    first = next(iter(records.values()))
                    record = records[key] = _analysis(b, n, c, ch, first.stored)
            else:
                content = b.content
                if len(content) < SMALL:  # a short text is kept as it is
                    stored: str | StoredText = content if isinstance(content, str) else str(content)
                else:
                    log = versions.get(name)
                    if log is None:
                        log = versions[name] = TextVersions()
                    stored = log.add(content)
                record = BlockAnalysis(
                    name,
                    LAYER_NAMES[b.layer],
                    b.section,
                    n,
                    c,
                    ch,
                    b.breakpoint,
                    stored,
                    b.cacheable,
                    b.ttl if b.breakpoint is not None else None,
                )
                by_name[name] = (b, {(c, ch, n): record})
            out.append(record)
        return tuple(out)


def first_difference(blocks: Sequence[WireBlock], prev: PreviousStep, start: int = 0) -> int:
    """The first block that is not the previous step's at its place (another name or
    text); ``start``: how many leading blocks are known to be the previous step's."""
    before = prev.blocks
    n_before = len(before)
    for i in range(start, len(blocks)):
        if i >= n_before:
            return i
        old = before[i]
        b = blocks[i]
        if old is not b and (old.name != b.name or not same_text(old, b)):
            return i
    return len(blocks)
