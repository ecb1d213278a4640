"""The unified call tree: agentic-function calls as data (design §1, §4', §6).

Finished subtrees are immutable and shared between snapshots, so a snapshot at
an LLM call costs only the active path (root to the running frame), not the
number of calls made so far.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Expose(StrEnum):
    """How much of itself a function shows to others (design §5)."""

    IO = "io"  # default: interface only; internals collapsed, io released on completion
    LLM = "llm"  # also its own LLM exchanges, kept after completion
    FULL = "full"  # nothing dropped: io, LLM exchanges, plain tool calls, whole subtree
    HIDDEN = "hidden"  # leaves no node; its children take its place


class Status(StrEnum):
    RUNNING = "running"
    DONE = "done"


@dataclass(frozen=True)
class RenderRange:
    """How much history the current call takes (design §5).

    ``callers``: None = unlimited, 0 = walled off, N = the last N finished calls
    at each level above the frame. ``subcalls``: -1 = unlimited, N = the most
    recent N calls inside the frame.
    """

    callers: int | None = None
    subcalls: int = -1


@dataclass(frozen=True)
class LLMExchange:
    input: str
    output: str


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: str | None = None
    output: str | None = None


@dataclass(frozen=True, eq=False)
class CallNode:
    """One agentic-function call. Identity-hashed: a node is a unique event."""

    call_id: int
    function: str
    status: Status
    input: str | None = None
    output: str | None = None
    key_output: str | None = None
    children: tuple[CallNode, ...] = ()
    llm: tuple[LLMExchange, ...] = ()
    tools: tuple[ToolUse, ...] = ()
    # Renderings of this (finished, immutable) node, kept with the node so they
    # live exactly as long as it does; filled by calltree_yaml.
    rendered: dict[tuple[int, str, int], str] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def shown_output(self) -> str | None:
        """The key output kept after release: the summary if one was recorded."""
        return self.key_output if self.key_output is not None else self.output


@dataclass(frozen=True)
class TreeOptions:
    """Rendering knobs: per-function ``expose`` and ``render_range``."""

    default_expose: Expose = Expose.IO
    expose: tuple[tuple[str, Expose], ...] = ()
    default_range: RenderRange = field(default_factory=RenderRange)
    render_range: tuple[tuple[str, RenderRange], ...] = ()

    # lookups for the renderer, which asks for every node of every snapshot
    _exposes: dict[str, Expose] = field(init=False, repr=False, compare=False)
    _ranges: dict[str, RenderRange] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the first entry for a name wins, as it would in a scan of the tuple
        object.__setattr__(self, "_exposes", dict(reversed(self.expose)))
        object.__setattr__(self, "_ranges", dict(reversed(self.render_range)))

    def expose_of(self, function: str) -> Expose:
        return self._exposes.get(function, self.default_expose)

    def range_of(self, function: str) -> RenderRange:
        return self._ranges.get(function, self.default_range)


class CallTreeError(ValueError):
    """An event does not fit the call tree (unbalanced enter/exit and the like)."""


@dataclass
class _OpenCall:
    call_id: int
    function: str
    input: str | None
    children: list[CallNode] = field(default_factory=list)
    llm: list[LLMExchange] = field(default_factory=list)
    tools: list[ToolUse] = field(default_factory=list)


@dataclass(frozen=True)
class _CallInfo:
    function: str
    called_by: int | None


class CallTreeBuilder:
    """Builds the tree event by event and hands out frozen snapshots."""

    def __init__(self) -> None:
        self._stack: list[_OpenCall] = []
        self._info: dict[int, _CallInfo] = {}
        self._next_id = 1
        self.root: CallNode | None = None

    @property
    def depth(self) -> int:
        return len(self._stack)

    @property
    def current(self) -> str | None:
        return self._stack[-1].function if self._stack else None

    def enter(self, function: str, input: str | None, dispatched_by: str | None = None) -> int:
        if not self._stack and self.root is not None:
            raise CallTreeError(
                f"cannot enter {function!r}: the root call {self.root.function!r} already finished"
            )
        called_by: int | None = self._stack[-1].call_id if self._stack else None
        if dispatched_by is not None:
            if not self._stack:
                raise CallTreeError(
                    f"{function!r} names dispatched_by {dispatched_by!r} but is the root call"
                )
            decision = next(
                (c for c in reversed(self._stack[-1].children) if c.function == dispatched_by),
                None,
            )
            if decision is None:
                raise CallTreeError(
                    f"{function!r} names dispatched_by {dispatched_by!r}, but no finished call "
                    f"of that name precedes it inside {self._stack[-1].function!r}"
                )
            called_by = decision.call_id
        call_id = self._next_id
        self._next_id += 1
        self._info[call_id] = _CallInfo(function, called_by)
        self._stack.append(_OpenCall(call_id, function, input))
        return call_id

    def exit(self, function: str, output: str | None, key_output: str | None = None) -> CallNode:
        if not self._stack:
            raise CallTreeError(f"exit from {function!r} but no call is running")
        top = self._stack[-1]
        if top.function != function:
            raise CallTreeError(f"exit from {function!r} but the running call is {top.function!r}")
        self._stack.pop()
        node = CallNode(
            call_id=top.call_id,
            function=top.function,
            status=Status.DONE,
            input=top.input,
            output=output,
            key_output=key_output,
            children=tuple(top.children),
            llm=tuple(top.llm),
            tools=tuple(top.tools),
        )
        if self._stack:
            self._stack[-1].children.append(node)
        else:
            self.root = node
        return node

    def llm(self, exchange: LLMExchange) -> None:
        if not self._stack:
            raise CallTreeError("an LLM call outside any agentic function")
        self._stack[-1].llm.append(exchange)

    def tool(self, use: ToolUse) -> None:
        if not self._stack:
            raise CallTreeError(f"tool call {use.name!r} outside any agentic function")
        self._stack[-1].tools.append(use)

    def call_path(self) -> tuple[str, ...]:
        """Names along the called-by chain, root first, ending at the running call."""
        if not self._stack:
            return ()
        names: list[str] = []
        call_id: int | None = self._stack[-1].call_id
        while call_id is not None:
            info = self._info[call_id]
            names.append(info.function)
            call_id = info.called_by
        return tuple(reversed(names))

    def snapshot(self) -> CallNode:
        """The tree as it stands: running nodes along the stack, finished ones shared."""
        if not self._stack:
            if self.root is None:
                raise CallTreeError("the call tree is empty")
            return self.root
        node: CallNode | None = None
        for open_call in reversed(self._stack):
            children = tuple(open_call.children)
            if node is not None:
                children += (node,)
            node = CallNode(
                call_id=open_call.call_id,
                function=open_call.function,
                status=Status.RUNNING,
                input=open_call.input,
                children=children,
                llm=tuple(open_call.llm),
                tools=tuple(open_call.tools),
            )
        assert node is not None
        return node
