"""What one component did in one assembly: a block record and its status."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from assembler.design.layers import Layer, Placement, wire_section
from assembler.design.piece_text import Content, text_of


class BlockStatus(StrEnum):
    EMITTED = "emitted"
    CONDITION_FALSE = "condition_false"
    EMPTY = "empty"
    ERROR = "error"


# never changed once made; not frozen, as an assembly makes a few per step (see WireBlock)
@dataclass(slots=True, unsafe_hash=True)
class BlockRecord:
    """What one component did in one assembly."""

    name: str
    layer: Layer
    order: int
    status: BlockStatus
    placement: Placement
    cacheable: bool
    content: Content | None = None  # the text built, or the pieces it is joined from
    error: str | None = None
    tail: bool = False  # L1 tail content, after breakpoint ③ (see ContextComponent.tail)

    @property
    def text(self) -> str | None:
        """The text built (joined, when the component built it from pieces)."""
        return None if self.content is None else text_of(self.content)

    @property
    def section(self) -> str:
        """tools, system or messages."""
        return wire_section(self.placement)
