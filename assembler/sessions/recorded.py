"""A recorded request as a wire: its own blocks and breakpoints, with layers read from its sections."""

from __future__ import annotations

from collections.abc import Sequence

from assembler.design.layers import Layer, Placement
from assembler.design.wire import Wire, WireBlock
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
    last_user = max(
        (i for i, b in enumerate(blocks) if b.section == "messages" and b.role == "user"),
        default=-1,
    )
    out: list[WireBlock] = []
    number = 0
    for i, b in enumerate(blocks):
        if b.section == "tools":
            placement, layer = Placement.TOOLS, Layer.L0
        elif b.section == "system":
            placement, layer = Placement.SYSTEM, Layer.L0
        elif i == last_user:
            placement, layer = Placement.USER_MESSAGE, Layer.L2
        else:
            placement, layer = Placement.HISTORY, Layer.L1
        if b.layer is not None:
            layer = Layer(b.layer)
        mark = None
        if b.breakpoint:
            number += 1
            mark = number
        out.append(
            WireBlock(
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
        )
    return Wire(tuple(out))
