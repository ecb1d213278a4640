"""A recorded request as a wire: its own blocks and breakpoints, with layers read from its sections."""

from __future__ import annotations

from collections.abc import Sequence

from assembler.design.layers import Layer, Placement
from assembler.design.wire import Wire, WireBlock, leading_same
from assembler.sessions.model import RecordedBlock


def recorded_wire(blocks: Sequence[RecordedBlock]) -> Wire:
    """A request replayed as recorded: its own blocks, its own breakpoints.

    Layers are a reading, not a fact, for a recorded request: tools and system
    count as L0, the history as L1, the last user message as L2, unless the
    recording says otherwise. Every recorded marker is kept, numbered in order:
    each simulator applies its provider's own limit (Anthropic takes 4
    ``cache_control`` blocks and rejects more; OpenAI GPT-5.6+ writes at most 4
    of its ``prompt_cache_breakpoint`` markers and matches the latest 80).
    """
    return RecordedWires().build(blocks)


class RecordedWires:
    """The recorded requests of one session as wires, in order: a block that is the very
    object it was in the request before, at the same place with the same reading, keeps
    its :class:`WireBlock`, so later stages tell an unchanged block by identity (a
    request that keeps the one before's blocks shares them as objects)."""

    def __init__(self) -> None:
        self._src: Sequence[RecordedBlock] = ()
        self._out: list[WireBlock] = []
        self._marks: list[int] = []  # per block, the markers numbered up to it
        self._last_user = -1

    def build(self, blocks: Sequence[RecordedBlock]) -> Wire:
        blocks = tuple(blocks)
        # looked for from the end, where a request's last user message stands
        last_user = next(
            (
                i
                for i in range(len(blocks) - 1, -1, -1)
                if blocks[i].section == "messages" and blocks[i].role == "user"
            ),
            -1,
        )
        same = leading_same(blocks, self._src)
        out = self._out[:same]
        marks = self._marks[:same]
        # the last user message moved: the blocks it was and is read again
        for i in (self._last_user, last_user):
            if 0 <= i < same:
                out[i] = _wire_block(blocks[i], i == last_user, out[i].breakpoint)
        number = marks[-1] if marks else 0
        for i in range(same, len(blocks)):
            b = blocks[i]
            mark = None
            if b.breakpoint:
                number += 1
                mark = number
            out.append(_wire_block(b, i == last_user, mark))
            marks.append(number)
        self._src, self._out, self._marks, self._last_user = blocks, out, marks, last_user
        return Wire(tuple(out))


def _wire_block(b: RecordedBlock, last_user: bool, mark: int | None) -> WireBlock:
    if b.section == "tools":
        placement, layer = Placement.TOOLS, Layer.L0
    elif b.section == "system":
        placement, layer = Placement.SYSTEM, Layer.L0
    elif last_user:
        placement, layer = Placement.USER_MESSAGE, Layer.L2
    else:
        placement, layer = Placement.HISTORY, Layer.L1
    if b.layer is not None:
        layer = Layer(b.layer)
    return WireBlock(
        name=b.name,
        layer=layer,
        placement=placement,
        content=b.text,
        cacheable=True,
        breakpoint=mark,
        declared_tokens=b.tokens,
        role=b.role,
        ttl=b.ttl if mark is not None else None,
        warm=b.warm,
    )
