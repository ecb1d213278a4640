"""Per-block change detection and records shared between steps while a block and its cache state hold."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from assembler.analysis.results import BlockAnalysis
from assembler.cache.simulation import CacheResult
from assembler.design.layers import Layer
from assembler.design.piece_text import Content
from assembler.design.wire import WireBlock
from assembler.sessions.versions import SMALL, StoredText, TextVersions

# --- one step -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
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

    def text_of(self, name: str) -> Content | None:
        return next((b.content for b in self.blocks if b.name == name), None)


def layer_tokens(blocks: Sequence[WireBlock], tokens: Sequence[int]) -> dict[str, int]:
    out = {"total": sum(tokens), "tools": 0, "L0": 0, "L1": 0, "L2": 0}
    for b, n in zip(blocks, tokens, strict=True):
        out["tools" if b.section == "tools" else b.layer] += n  # a StrEnum: "L0" == Layer.L0
    return out


LAYER_NAMES = {layer: layer.value for layer in Layer}


def block_changes(
    blocks: Sequence[WireBlock], prev: PreviousStep | None, released: bool
) -> tuple[str, ...]:
    if prev is None:
        return ("new",) * len(blocks)
    out: list[str] = []
    before = prev.blocks
    for i, b in enumerate(blocks):
        if i < len(before) and before[i] is b:  # the very block of the last step
            out.append("unchanged")
            continue
        old = before[i].content if i < len(before) and before[i].name == b.name else None
        if old is None:
            old = prev.text_of(b.name)
        if old is None:
            out.append("new")
        elif old is b.content or old == b.content:
            out.append("unchanged")
        elif released and b.name == "call_tree":
            out.append("released")
        else:
            out.append("changed")
    return tuple(out)


class BlockRecords:
    """Block analyses shared between steps.

    A block that is the very wire block of an earlier step (an unchanged system
    prompt) in the same cache state gets the same record back, so a long
    session holds a few records per component rather than one per step; a
    changed long text is kept as a delta against its previous version.
    """

    def __init__(self) -> None:
        self._by_name: dict[str, tuple[WireBlock, dict[tuple[str, str, int], BlockAnalysis]]] = {}
        self._versions: dict[str, TextVersions] = {}

    def _stored(self, b: WireBlock) -> str | StoredText:
        if len(b.content) < SMALL:
            return b.text
        log = self._versions.get(b.name)
        if log is None:
            log = self._versions[b.name] = TextVersions()
        return log.add(b.content)

    def analyses(
        self, blocks: Sequence[WireBlock], result: CacheResult, changes: Sequence[str]
    ) -> tuple[BlockAnalysis, ...]:
        out: list[BlockAnalysis] = []
        by_name = self._by_name
        for b, n, c, ch in zip(
            blocks, result.block_tokens, result.block_cache, changes, strict=True
        ):
            kept = by_name.get(b.name)
            if kept is None or kept[0] is not b:
                kept = by_name[b.name] = (b, {})
            records = kept[1]
            key = (c, ch, n)
            record = records.get(key)
            if record is None:
                same = next(iter(records.values()), None)
                record = records[key] = BlockAnalysis(
                    name=b.name,
                    layer=LAYER_NAMES[b.layer],
                    section=b.section,
                    tokens=n,
                    cache=c,
                    change=ch,
                    breakpoint=b.breakpoint,
                    stored=same.stored if same is not None else self._stored(b),
                    cacheable=b.cacheable,
                )
            out.append(record)
        return tuple(out)


def first_difference(blocks: Sequence[WireBlock], prev: PreviousStep) -> int:
    before = prev.blocks
    for i, b in enumerate(blocks):
        if i >= len(before):
            return i
        old = before[i]
        if old is not b and (old.name != b.name or old.content != b.content):
            return i
    return len(blocks)
