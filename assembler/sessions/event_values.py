"""Typed events from validated raw ones: times parsed once per distinct text, and
each event built without its per-field ``__init__`` (``model.built``).

An llm event, which may resolve ``keep`` against the previous request, is built
in ``loader``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from assembler.design.calltree import Expose, Outcome
from assembler.design.context import ContractKind, MemoryState, OutputContract, Tool
from assembler.limits import FIRST_YEAR, LAST_YEAR, time_problem
from assembler.sessions.model import Change, Enter, Exit, SessionError, ToolCall, built
from assembler.sessions.reader import kind_of


def time_value(text: str, source: str, line: int | None, field: str) -> datetime:
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
        # An offset is under a day, so a local year strictly inside the limits is one in
        # UTC too, and only the calendar's ends need the conversion.
        if not FIRST_YEAR < at.year < LAST_YEAR and time_problem(at) is not None:
            raise OverflowError
        return at
    except (ValueError, OverflowError):
        raise SessionError(
            source,
            "expected a real date and time between the years "
            f"{FIRST_YEAR} and {LAST_YEAR}, found {kind_of(text)}",
            line=line,
            field=field,
        ) from None


def tool_value(raw: Mapping[str, Any]) -> Tool:
    return Tool(raw["name"], raw["description"], raw["input_schema"], raw.get("source"))


#: Time text → its value, for one parse: a session repeats its times (parallel
#: calls, a tool and its result within the same second).
Times = dict[str, datetime]


def at_value(text: str, times: Times, source: str, line: int | None, field: str) -> datetime:
    at = times.get(text)
    if at is None:
        at = times[text] = time_value(text, source, line, field)
    return at


def enter_event(raw: dict[str, Any], index: int, at: datetime, line: int | None) -> Enter:
    get = raw.get
    expose = get("expose")
    return built(
        Enter,
        {
            "index": index,
            "at": at,
            "line": line,
            "function": raw["function"],
            "input": get("input"),
            "dispatched_by": get("dispatched_by"),
            "doc": get("doc"),
            "expose": Expose(expose) if expose else None,
            "id": get("id"),
            "parent": get("parent"),
            "retry_of": get("retry_of"),
        },
    )


def exit_event(raw: dict[str, Any], index: int, at: datetime, line: int | None) -> Exit:
    get = raw.get
    outcome = get("outcome")
    return built(
        Exit,
        {
            "index": index,
            "at": at,
            "line": line,
            "function": raw["function"],
            "output": get("output"),
            "key_output": get("key_output"),
            "id": get("id"),
            "outcome": Outcome.OK if outcome is None else Outcome(outcome),
            "error": get("error"),
        },
    )


def tool_event(raw: dict[str, Any], index: int, at: datetime, line: int | None) -> ToolCall:
    get = raw.get
    return built(
        ToolCall,
        {
            "index": index,
            "at": at,
            "line": line,
            "name": raw["name"],
            "input": get("input"),
            "output": get("output"),
            "call": get("call"),
        },
    )


def contract_value(c: Mapping[str, Any] | None) -> OutputContract | None:
    if not c:
        return None
    return OutputContract(
        kind=ContractKind(c["kind"]),
        artifact=c.get("artifact"),
        consumer=c.get("consumer"),
        next_function=c.get("next_function"),
        param=c.get("param"),
    )


def change_event(raw: dict[str, Any], index: int, at: datetime, line: int | None) -> Change:
    state = raw.get("memory_state")
    return Change(
        index,
        at,
        line,
        memory_state=MemoryState(state) if state else None,
        add_tools=tuple(tool_value(t) for t in raw.get("add_tools", [])),
        remove_tools=tuple(raw.get("remove_tools", [])),
        provider=raw.get("provider"),
        model=raw.get("model"),
        channel=raw.get("channel"),
    )


#: The events built from their raw fields alone (an llm event needs the previous request).
BUILDERS = {"enter": enter_event, "exit": exit_event, "tool": tool_event}
