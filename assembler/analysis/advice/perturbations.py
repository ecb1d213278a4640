"""Controlled changes of a context, to find out which components' text depends on what.

Each perturbation derives a new :class:`Context` from a step's one, changing one
thing a real session changes (the clock, the session id, a tool result arriving,
the key order of data a component may serialise). ``within_session`` says
whether it happens between two calls of one session; ``every_call`` whether it
happens between most of them (a clock minute, a new tool result), as opposed to
now and then (an hour, midnight).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from assembler.design.calltree import CallNode, Status, ToolUse
from assembler.design.context import Bindings, Context, Memory, Profile, Tool

Apply = Callable[[Context], "Context | None"]


@dataclass(frozen=True)
class Perturbation:
    key: str
    label: str  # how the lint table says it: "every minute (clock)"
    within_session: bool
    every_call: bool
    fix: str  # the fix when a component changes under it ahead of stable content
    apply: Apply


def _zone(ctx: Context) -> ZoneInfo:
    try:
        return ZoneInfo(ctx.profile.environment.timezone)
    except (KeyError, ValueError):
        return ZoneInfo("UTC")


def _shift(delta: timedelta) -> Apply:
    """The clock moved by ``delta`` on the same local day (backwards if forwards would cross midnight)."""

    def apply(ctx: Context) -> Context:
        zone = _zone(ctx)
        day = ctx.now.astimezone(zone).date()
        moved = ctx.now + delta
        if moved.astimezone(zone).date() != day:
            moved = ctx.now - delta
        return replace(ctx, now=moved)

    return apply


def _midnight(ctx: Context) -> Context:
    zone = _zone(ctx)
    local = ctx.now.astimezone(zone)
    next_day = datetime.combine(local.date() + timedelta(days=1), time(0, 1), tzinfo=zone)
    return replace(ctx, now=next_day.astimezone(ctx.now.tzinfo))


def _with_profile(ctx: Context, **changes: Any) -> Context:
    return replace(ctx, profile=replace(ctx.profile, **changes))


def _new_session(ctx: Context) -> Context:
    b = ctx.profile.bindings or Bindings(session_id="", model=ctx.profile.model)
    return _with_profile(ctx, bindings=replace(b, session_id=b.session_id + "-next"))


def _other_cwd(ctx: Context) -> Context:
    env = ctx.profile.environment
    return _with_profile(ctx, environment=replace(env, cwd=env.cwd.rstrip("/") + "/other"))


_PROBE_TOOL = Tool(
    name="probe_tool",
    description="A tool added to the session.",
    input_schema={"type": "object", "properties": {}},
)


def _tool_added(ctx: Context) -> Context:
    return _with_profile(ctx, tools=(*ctx.profile.tools, _PROBE_TOOL))


def _memory_updated(ctx: Context) -> Context | None:
    memory: Memory = ctx.profile.memory
    if not memory.enabled:
        return None
    return _with_profile(
        ctx,
        memory=replace(
            memory,
            global_summary=memory.global_summary + "\n- A note written since.",
            project=memory.project + "\n- A project note written since.",
        ),
    )


def _append_to_running(node: CallNode, child: CallNode, use: ToolUse) -> CallNode:
    """The tree with ``child`` and ``use`` added to its deepest running call."""
    if node.children and node.children[-1].status is Status.RUNNING:
        inner = _append_to_running(node.children[-1], child, use)
        return replace(node, children=(*node.children[:-1], inner), rendered={})
    return replace(node, children=(*node.children, child), tools=(*node.tools, use), rendered={})


def _tool_result(ctx: Context) -> Context | None:
    frame = ctx.frame
    if frame is None or frame.tree is None:
        return None
    result = CallNode(
        call_id=-1,
        function="probe_lookup",
        status=Status.DONE,
        input="probe",
        output='{"found": 1}',
    )
    use = ToolUse("probe_lookup", "probe", '{"found": 1}')
    tree = _append_to_running(frame.tree, result, use)
    return replace(ctx, frame=replace(frame, tree=tree))


def _reorder(value: Any) -> Any:
    """The same data with every mapping's keys in reverse order."""
    if isinstance(value, dict):
        return {k: _reorder(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reorder(v) for v in value]
    return value


def _reorder_json_text(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    if not isinstance(parsed, dict | list):
        return text
    return json.dumps(_reorder(parsed), ensure_ascii=False)


def _reorder_tree(node: CallNode) -> CallNode:
    tools = tuple(replace(u, output=_reorder_json_text(u.output)) for u in node.tools)
    return replace(
        node,
        output=_reorder_json_text(node.output),
        key_output=_reorder_json_text(node.key_output),
        children=tuple(_reorder_tree(c) for c in node.children),
        tools=tools,
        rendered={},
    )


def _tool_result_keys(ctx: Context) -> Context | None:
    """The recorded tool results (JSON ones) serialised with another key order."""
    frame = ctx.frame
    if frame is None or frame.tree is None:
        return None
    return replace(ctx, frame=replace(frame, tree=_reorder_tree(frame.tree)))


def _output_schema_keys(ctx: Context) -> Context | None:
    """This call's output schema with another key order."""
    frame = ctx.frame
    if frame is None or not frame.output_schema:
        return None
    return replace(ctx, frame=replace(frame, output_schema=_reorder(frame.output_schema)))


def _schema_keys(ctx: Context) -> Context | None:
    profile: Profile = ctx.profile
    if not profile.tools:
        return None
    tools = tuple(replace(t, input_schema=_reorder(t.input_schema)) for t in profile.tools)
    return _with_profile(ctx, tools=tools)


PERTURBATIONS: tuple[Perturbation, ...] = (
    Perturbation("clock+1m", "every minute (clock)", True, True, "drop minutes", _shift(timedelta(minutes=1))),
    Perturbation("clock+1h", "every hour (clock)", True, False, "drop the hour", _shift(timedelta(hours=1))),
    Perturbation("midnight", "across midnight", True, False, "move after ③", _midnight),
    Perturbation("tool-result", "a tool result appended", True, True, "move after ④", _tool_result),
    Perturbation("result-keys", "key order of a tool result", True, True, "sort keys", _tool_result_keys),
    Perturbation("output-keys", "key order of an output schema", True, True, "sort keys", _output_schema_keys),
    Perturbation("session-id", "new session id", False, False, "move after ③", _new_session),
    Perturbation("cwd", "another cwd", False, False, "move after ③", _other_cwd),
    Perturbation("tool-added", "a tool added", False, False, "keep tools first", _tool_added),
    Perturbation("memory", "memory updated", False, False, "move after ②", _memory_updated),
    Perturbation("schema-keys", "key order of a tool schema", False, False, "sort keys", _schema_keys),
)  # fmt: skip


#: Not a change lint makes but one it reads: the session's own calls, each against the one
#: before. A component whose text differs on most of them is per-call content.
NEXT_CALL = Perturbation(
    "next-call", "from one call to the next", True, True, "move after ④", lambda ctx: None
)

#: Everything the lint table has a column for.
ALL_PERTURBATIONS: tuple[Perturbation, ...] = (*PERTURBATIONS, NEXT_CALL)
