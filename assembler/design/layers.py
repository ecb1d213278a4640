"""The three layers and the places on the wire a block can land."""

from __future__ import annotations

from enum import StrEnum


class Layer(StrEnum):
    """Where information flows after the call ends (design §1)."""

    L0 = "L0"  # system level: unchanged for the whole session
    L1 = "L1"  # session level: grows only at its tail
    L2 = "L2"  # this call only


class Placement(StrEnum):
    """The part of a provider request a component's block lands in.

    Wire order is the order of this enum: tools, system, history, user message.
    """

    TOOLS = "tools"
    SYSTEM = "system"
    HISTORY = "history"
    USER_MESSAGE = "user_message"


#: Which placements each layer may use, and the one it gets by default.
#: Anything outside this table would register a block nothing places on the wire.
ALLOWED_PLACEMENTS: dict[Layer, tuple[Placement, ...]] = {
    Layer.L0: (Placement.SYSTEM, Placement.TOOLS),
    Layer.L1: (Placement.SYSTEM, Placement.HISTORY),
    Layer.L2: (Placement.USER_MESSAGE,),
}

PLACEMENT_RANK: dict[Placement, int] = {p: i for i, p in enumerate(Placement)}
LAYER_RANK: dict[Layer, int] = {layer: i for i, layer in enumerate(Layer)}


def wire_section(placement: Placement) -> str:
    """The provider-neutral request section: tools, system or messages."""
    if placement is Placement.TOOLS:
        return "tools"
    if placement is Placement.SYSTEM:
        return "system"
    return "messages"
