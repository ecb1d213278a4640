"""The provider-neutral request and its renderings.

Wire order: tools → system (L0 part, then L1 project part, then the L1 tail:
the date) → messages (the call tree, then the L2 blocks of the current user
message). Breakpoints ①–④ sit after the tools, after the L0 part, after the L1
project part (before the date) and after the call tree. What the model reads is the blocks' text, nothing else: no layer
labels, no breakpoint markers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, is_
from typing import Any

from assembler.design.assembly import Assembly
from assembler.design.blocks import BlockRecord, BlockStatus
from assembler.design.layers import Layer, Placement
from assembler.design.piece_text import Content, text_of

SEPARATOR = "\n\n"
CIRCLED = "①②③④"

#: Default breakpoint anchors, the design's ①–④.
DEFAULT_BREAKPOINTS: tuple[str, ...] = ("tools", "system:L0", "system:L1", "history")
BREAKPOINT_ANCHORS = {
    "tools": "after the last tools block",
    "system:L0": "after the L0 part of the system prompt",
    "system:L1": "after the L1 project part of the system prompt (before the date)",
    "system:L1:tail": "after the L1 tail of the system prompt (the date)",
    "history": "after the call tree at the end of the history",
}
MAX_BREAKPOINTS = 4


class WireError(ValueError):
    pass


#: The provider-neutral request section of each placement.
SECTIONS = {
    Placement.TOOLS: "tools",
    Placement.SYSTEM: "system",
    Placement.HISTORY: "messages",
    Placement.USER_MESSAGE: "messages",
}


# Never changed once made. Not frozen: a step makes a few and a frozen dataclass
# costs 2.5x to make (each field set through object.__setattr__); hashable by value
# all the same.
@dataclass(slots=True, unsafe_hash=True)
class WireBlock:
    name: str
    layer: Layer
    placement: Placement
    content: Content  # the text, or the pieces it is joined from (the call tree)
    cacheable: bool
    breakpoint: int | None = None  # 1-based number of the breakpoint placed after this block
    declared_tokens: int | None = None  # size of content the recording lacks (no text to count)
    role: str = "user"
    tail: bool = False  # L1 tail content: after breakpoint ③, not part of its segment
    ttl: str | None = None  # the breakpoint's own lifetime (5m, 1h); None: the request's
    warm: bool = False  # a recorded request's prefix through here was cached before it was sent
    section: str = field(init=False, default="")  # tools, system or messages

    def __post_init__(self) -> None:
        # stored, not a property: the simulators read it for every block of every step
        self.section = SECTIONS[self.placement]

    @property
    def text(self) -> str:
        """The text the model reads. A call tree is joined from its pieces on each
        ask: per-step work reads :attr:`content` instead."""
        return text_of(self.content)


@dataclass(frozen=True, slots=True)
class Wire:
    blocks: tuple[WireBlock, ...]

    def section(self, name: str) -> tuple[WireBlock, ...]:
        return tuple(b for b in self.blocks if b.section == name)

    @property
    def breakpoints(self) -> tuple[int, ...]:
        """Indices of the blocks that carry a breakpoint."""
        return tuple(i for i, b in enumerate(self.blocks) if b.breakpoint is not None)

    def system_text(self) -> str:
        return SEPARATOR.join(b.text for b in self.section("system"))

    def messages_text(self) -> str:
        return SEPARATOR.join(b.text for b in self.section("messages"))

    def text(self) -> str:
        """The continuous text the model reads: system, then messages."""
        parts = [self.system_text(), self.messages_text()]
        return SEPARATOR.join(p for p in parts if p)


def _anchor_key(block: WireBlock | BlockRecord) -> str | None:
    """The standard anchor a block belongs to."""
    if block.placement is Placement.TOOLS:
        return "tools"
    if block.placement is Placement.SYSTEM:
        if block.layer is Layer.L0:
            return "system:L0"
        # ③ closes the project part; the tail (the date) sits after it (reading 5)
        return "system:L1:tail" if block.tail else "system:L1"
    if block.placement is Placement.HISTORY:
        return "history"
    return None


def _anchor_positions(
    blocks: Sequence[WireBlock | BlockRecord], anchors: Sequence[str]
) -> dict[str, int]:
    """Anchor → the index of its last block, in one pass over the blocks."""
    last: dict[str, int] = {}
    for i, b in enumerate(blocks):
        key = _anchor_key(b)
        if key is not None:
            last[key] = i
        last["after:" + b.name] = i
    if blocks:
        last["last"] = len(blocks) - 1
    found: dict[str, int] = {}
    for anchor in anchors:
        if (
            anchor not in BREAKPOINT_ANCHORS
            and anchor != "last"
            and not anchor.startswith("after:")
        ):
            raise WireError(
                f"unknown breakpoint anchor {anchor!r}; expected one of "
                f"{', '.join(BREAKPOINT_ANCHORS)}, 'last' or 'after:<component>'"
            )
        if anchor in last:
            found[anchor] = last[anchor]
    return found


def _anchor_indices(blocks: Sequence[WireBlock | BlockRecord], anchors: Sequence[str]) -> set[int]:
    return set(_anchor_positions(blocks, anchors).values())


Mark = tuple[int, str | None]  # breakpoint number, its own lifetime


def _marks(
    records: Sequence[BlockRecord],
    breakpoints: Sequence[str],
    ttls: Mapping[str, str] | None = None,
) -> dict[int, Mark]:
    """Block index → breakpoint number and lifetime. A breakpoint goes on the last
    block of its anchor; anchors with no block place none; nothing at or after the
    first non-cacheable block is marked. Two anchors on one block: the longer
    lifetime. A 5m breakpoint ahead of a 1h one is refused, as the provider does."""
    if len(breakpoints) > MAX_BREAKPOINTS:
        raise WireError(f"at most {MAX_BREAKPOINTS} breakpoints, got {len(breakpoints)}")
    first_uncacheable = next((i for i, r in enumerate(records) if not r.cacheable), len(records))
    own: dict[int, str | None] = {}
    for anchor, i in _anchor_positions(records, breakpoints).items():
        if i < first_uncacheable:
            life = (ttls or {}).get(anchor)
            own[i] = "1h" if "1h" in (life, own.get(i)) else life or own.get(i)
    marks = sorted(own)
    lives = [own[i] for i in marks]
    if "5m" in lives and "1h" in lives[lives.index("5m") :]:
        raise WireError(
            f"a 1h breakpoint after a 5m one at {records[marks[lives.index('5m')]].name};"
            " expected 1h breakpoints first"
        )
    return {index: (number, own[index]) for number, index in enumerate(marks, start=1)}


def leading_same(a: Sequence[object], b: Sequence[object]) -> int:
    """How many leading items of ``a`` are the very objects of ``b``: by identity, at C
    speed (successive requests share their unchanged blocks as the same objects)."""
    flags = list(map(is_, a, b))
    flags.append(False)
    return flags.index(False)


def prefix_links(requests: Iterable[Sequence[Any]]) -> Iterator[tuple[int | None, int]]:
    """For each request (blocks with ``section`` and ``text``), the earlier request with the
    longest common block prefix (the latest on a tie) and how many blocks they share: the
    request it continues, as a prefix cache sees it; None where it shares no block with
    any. Leading blocks that are the very objects of the request before have its prefix
    hashes, and each of those prefixes was last seen there, so they are not hashed again.

    ``hashes`` holds the prefixes of the request before, each held since it was made; a
    prefix is entered in ``latest`` when it leaves the list, with the last request that
    held it. Only the prefixes past ``same`` are looked up, and those have just left: so
    ``latest`` answers as if every request had entered all its prefixes, at the cost of
    entering each prefix once instead of once per request that holds it."""
    latest: dict[int, int] = {}  # prefix hash → index of the latest request with that prefix
    before: Sequence[Any] = ()
    hashes: list[int] = []
    for i, blocks in enumerate(requests):
        same = leading_same(blocks, before)
        if len(hashes) > same:
            latest.update(dict.fromkeys(hashes[same:], i - 1))
        del hashes[same:]
        h = hashes[-1] if hashes else 0
        for b in blocks[same:]:
            h = hash((h, b.section, b.text))
            hashes.append(h)
        best: int | None = i - 1 if same else None
        shared = same
        for k in range(same, len(hashes)):
            j = latest.get(hashes[k])
            if j is None:
                break
            best, shared = j, k + 1
        yield best, shared
        before = blocks


_NAME = attrgetter("name")


class WireBuilder:
    """Lays the emitted blocks of successive assemblies out in wire order.

    For the assemblies of one registry, where a component name always has the
    same layer, placement and cacheability: the breakpoints are worked out once
    per set of emitted names, and a block whose text and breakpoint are those
    of the last build keeps its :class:`WireBlock`, so later stages can tell an
    unchanged block by identity.
    """

    def __init__(
        self,
        breakpoints: Sequence[str] = DEFAULT_BREAKPOINTS,
        ttls: Mapping[str, str] | None = None,
    ) -> None:
        self.breakpoints = tuple(breakpoints)
        self.ttls = dict(ttls or {})  # anchor → its own lifetime
        _marks([], self.breakpoints)  # reject a bad anchor list before the first step
        self._marks: dict[tuple[str, ...], dict[int, Mark]] = {}
        self._blocks: dict[str, tuple[Content, int | None, WireBlock]] = {}
        # the last build: its emitted records and blocks, the wire, the names
        self._last: tuple[list[BlockRecord], list[WireBlock]] = ([], [])
        self._last_wire = Wire(())
        self._numbers: dict[int, Mark] = {}

    def build(self, assembly: Assembly) -> Wire:
        emitted = BlockStatus.EMITTED  # looked up once, not per record
        records = [r for r in assembly.records if r.status is emitted]
        last_records, last_blocks = self._last
        # the leading records that are the very records of the last build keep their
        # blocks, unless a breakpoint moved among them
        first = leading_same(records, last_records)
        if first == len(records) == len(last_records):
            return self._last_wire
        names = tuple(map(_NAME, records))
        numbers = self._marks.get(names)
        if numbers is None:
            numbers = self._marks[names] = _marks(records, self.breakpoints, self.ttls)
        before = self._numbers
        if numbers is not before:
            for i in numbers.keys() | before.keys():
                if i < first and numbers.get(i) != before.get(i):
                    first = i
        kept = self._blocks
        blocks: list[WireBlock] = last_blocks[:first]
        for i in range(first, len(records)):
            r = records[i]
            number, life = numbers.get(i, (None, None))
            text = r.content or ""
            hit = kept.get(r.name)
            if (
                hit is not None
                and hit[1] == number
                and hit[2].ttl == life
                and (hit[0] is text or hit[0] == text)
            ):
                blocks.append(hit[2])
                continue
            block = WireBlock(
                r.name, r.layer, r.placement, text, r.cacheable, number, tail=r.tail, ttl=life
            )
            kept[r.name] = (text, number, block)
            blocks.append(block)
        wire = Wire(tuple(blocks))
        self._last, self._last_wire, self._numbers = (records, blocks), wire, numbers
        return wire


def build_wire(
    assembly: Assembly,
    breakpoints: Sequence[str] = DEFAULT_BREAKPOINTS,
    ttls: Mapping[str, str] | None = None,
) -> Wire:
    """Lay the emitted blocks out in wire order and mark the breakpoints."""
    return WireBuilder(breakpoints, ttls).build(assembly)


def _tool_list(wire: Wire) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    for block in wire.section("tools"):
        parsed = json.loads(block.text)
        tools.extend(parsed if isinstance(parsed, list) else [parsed])
    return tools


def _joined(blocks: Sequence[WireBlock]) -> list[tuple[WireBlock, str]]:
    """Block texts with the separator the continuous text has between them."""
    return [(b, b.text + (SEPARATOR if i < len(blocks) - 1 else "")) for i, b in enumerate(blocks)]


def to_anthropic(wire: Wire, model: str, max_tokens: int = 4096, ttl: str = "5m") -> dict[str, Any]:
    """An Anthropic Messages request with ``cache_control`` at the breakpoints,
    each with its own lifetime where it has one, else ``ttl``."""

    def marker(block: WireBlock) -> dict[str, Any]:
        life = block.ttl or ttl
        return {"type": "ephemeral"} | ({"ttl": life} if life != "5m" else {})

    request: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    tools = _tool_list(wire)
    tool_blocks = wire.section("tools")
    if tools:
        marked = [b for b in tool_blocks if b.breakpoint]
        if marked:
            tools[-1] = {**tools[-1], "cache_control": marker(marked[-1])}
        request["tools"] = tools
    system = []
    for block, text in _joined(wire.section("system")):
        item: dict[str, Any] = {"type": "text", "text": text}
        if block.breakpoint:
            item["cache_control"] = marker(block)
        system.append(item)
    if system:
        request["system"] = system
    messages: list[dict[str, Any]] = []
    for block, text in _joined(wire.section("messages")):
        item = {"type": "text", "text": text}
        if block.breakpoint:
            item["cache_control"] = marker(block)
        if messages and messages[-1]["role"] == block.role:
            messages[-1]["content"].append(item)
        else:
            messages.append({"role": block.role, "content": [item]})
    request["messages"] = messages
    return request


def to_openai(wire: Wire, model: str, cache_key: str) -> dict[str, Any]:
    """An OpenAI Chat Completions request: no markers, a ``prompt_cache_key``."""
    request: dict[str, Any] = {"model": model, "prompt_cache_key": cache_key}
    tools = _tool_list(wire)
    if tools:
        request["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t.get("description", ""),
                    "parameters": t.get("input_schema", {"type": "object"}),
                },
            }
            for t in tools
        ]
    messages: list[dict[str, Any]] = []
    if wire.section("system"):
        messages.append({"role": "system", "content": wire.system_text()})
    for block, text in _joined(wire.section("messages")):
        part = {"type": "text", "text": text}
        if len(messages) > 1 and messages[-1]["role"] == block.role:
            messages[-1]["content"].append(part)
        else:
            messages.append({"role": block.role, "content": [part]})
    request["messages"] = messages
    return request
