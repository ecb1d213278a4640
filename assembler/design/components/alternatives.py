"""Components no default layout registers, kept for what-if layouts.

``call_structure`` + ``call_io`` split the call tree in two blocks: the
structure (which changes at every call) and the io of the calls. The design's
§1 argues against exactly this; a layout can add them to measure why.

``computer_use`` is a block the design leaves unregistered (§4, Appendix); a
layout can add it to see what a desktop-operating agent would carry in L0.
"""

from __future__ import annotations

from collections.abc import Iterator

from assembler.design.calltree import CallNode, Status
from assembler.design.calltree_scalars import field_lines, name_scalar
from assembler.design.context import Context
from assembler.design.layers import Layer, Placement
from assembler.design.registry import ContextComponent


def _computer_use(ctx: Context) -> str | None:
    if not ctx.profile.computer_use:
        return None
    return (
        "<computer_use>\n"
        "You can see and operate a desktop through the computer tools.\n"
        "- Take a screenshot before each action and after it, and act on what the\n"
        "  screenshot shows, not on what you expect.\n"
        "- Prefer keyboard shortcuts to hunting for small targets with the pointer.\n"
        "- Stop and ask before anything that sends, buys, deletes or signs in.\n"
        "</computer_use>"
    )


def _walk(node: CallNode, depth: int = 0) -> Iterator[tuple[CallNode, int]]:
    yield node, depth
    for child in node.children:
        if not child.off_path:  # failed and abandoned calls are on no active path
            yield from _walk(child, depth + 1)


def _structure(ctx: Context) -> str:
    assert ctx.frame is not None
    lines = ["<call_structure>"]
    for node, depth in (pair for root in ctx.frame.top_level_calls() for pair in _walk(root)):
        lines.append(f"{'  ' * depth}- {name_scalar(node.function)} [{node.status.value}]")
    return "\n".join([*lines, "</call_structure>"])


def _io(ctx: Context) -> str | None:
    assert ctx.frame is not None
    lines = ["<call_io>"]
    for node, _ in (pair for root in ctx.frame.top_level_calls() for pair in _walk(root)):
        if node.input is None and node.output is None:
            continue
        lines.append(f"- function: {name_scalar(node.function)}")
        if node.input is not None:
            lines += field_lines("input", node.input, 2)
        if node.output is not None and node.status is Status.DONE:
            lines += field_lines("output", node.output, 2)
    return "\n".join([*lines, "</call_io>"]) if len(lines) > 1 else None


ALTERNATIVES: dict[str, ContextComponent] = {
    c.name: c
    for c in (
        ContextComponent(
            name="call_structure",
            layer=Layer.L1,
            order=100,
            build=_structure,
            condition=lambda ctx: ctx.frame is not None and ctx.frame.tree is not None,
            placement=Placement.HISTORY,
            condition_text="the call runs inside an agentic function",
            template="<call_structure>- function [status] per node</call_structure>",
        ),
        ContextComponent(
            name="call_io",
            layer=Layer.L1,
            order=101,
            build=_io,
            condition=lambda ctx: ctx.frame is not None and ctx.frame.tree is not None,
            placement=Placement.HISTORY,
            condition_text="the call runs inside an agentic function",
            template="<call_io>input/output of every call</call_io>",
        ),
        ContextComponent(
            name="computer_use",
            layer=Layer.L0,
            order=6,
            build=_computer_use,
            condition=lambda ctx: ctx.profile.computer_use,
            condition_text="computer-use tools are enabled",
            template="<computer_use>screenshot, act, verify</computer_use>",
            profile_only=True,
        ),
    )
}
