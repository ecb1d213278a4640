"""The unified call tree: agentic-function calls as data (design §1, §4', §6).

Finished subtrees are immutable and shared between snapshots, so a snapshot at
an LLM call costs only the active path (root to the running frame), not the
number of calls made so far.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import chain, islice
from typing import TypeVar, overload

T = TypeVar("T")


class Expose(StrEnum):
    """How much of itself a function shows to others (design §5)."""

    IO = "io"  # default: interface only; internals collapsed, io released on completion
    LLM = "llm"  # also its own LLM exchanges, kept after completion
    FULL = "full"  # nothing dropped: io, LLM exchanges, plain tool calls, whole subtree
    HIDDEN = "hidden"  # leaves no node; its children take its place


class Status(StrEnum):
    RUNNING = "running"
    DONE = "done"


class Outcome(StrEnum):
    """How a finished call ended. Only ``ok`` calls stay on the active path (§1)."""

    OK = "ok"
    FAILED = "failed"  # raised; a retry may follow
    ABANDONED = "abandoned"  # its result was discarded (a branch not taken)


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


class SharedPrefix(Sequence[T]):
    """The first ``n`` items of an append-only list, then ``rest``: what a running
    call holds in a snapshot (its finished children, its LLM exchanges, its tools).

    Those lists only ever grow at their end, so every snapshot of the call shares
    them instead of copying them: a snapshot costs what changed, not what the call
    has done so far. ``head``, ``n`` and ``rest`` are read (never changed) by the
    renderer, which reaches an item directly rather than through ``__getitem__``.
    """

    __slots__ = ("_len", "head", "n", "rest")

    def __init__(self, head: list[T], n: int, rest: tuple[T, ...] = ()) -> None:
        self.head, self.n, self.rest = head, n, rest
        self._len = n + len(rest)

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            return tuple(self)[index] if index.step not in (None, 1) else self._slice(index)
        i = index + self._len if index < 0 else index
        if 0 <= i < self.n:
            return self.head[i]
        if self.n <= i < self._len:
            return self.rest[i - self.n]
        raise IndexError("children index out of range")

    def _slice(self, index: slice) -> tuple[T, ...]:
        start, stop, _ = index.indices(len(self))
        if stop <= start:
            return ()
        n = self.n
        head = tuple(self.head[start : min(stop, n)]) if start < n else ()
        rest = self.rest[max(start - n, 0) : stop - n] if stop > n else ()
        return head + rest

    def __iter__(self) -> Iterator[T]:
        return chain(islice(self.head, self.n), self.rest)

    def __reversed__(self) -> Iterator[T]:
        return chain(reversed(self.rest), (self.head[i] for i in range(self.n - 1, -1, -1)))

    def __repr__(self) -> str:
        return f"SharedPrefix({list(self)!r})"


#: A running call's children in a snapshot.
SharedChildren = SharedPrefix["CallNode"]


@dataclass(eq=False, slots=True)
class CallNode:
    """One agentic-function call. Identity-hashed: a node is a unique event.

    Never changed once made (finished subtrees are shared between snapshots), but
    not a frozen dataclass: a snapshot makes one per running call at every step,
    and a frozen one costs 2.5× as much to make (each field set through
    ``object.__setattr__``).
    """

    call_id: int
    function: str
    status: Status
    input: str | None = None
    output: str | None = None
    key_output: str | None = None
    # tuples, or a running call's shared lists (SharedPrefix)
    children: Sequence[CallNode] = ()
    llm: Sequence[LLMExchange] = ()
    tools: Sequence[ToolUse] = ()
    outcome: Outcome = Outcome.OK
    error: str | None = None  # why it failed; for the inspector, never for the model
    retry_of: int | None = None  # call_id of the failed attempt this call retries
    ref: str | None = None  # the id the recording gave the call
    # A running call beside the frame's path (a parallel sibling): the model sees
    # that it runs, not what happens inside it.
    detached: bool = False
    # Renderings of this (finished, immutable) node, kept with the node so they
    # live exactly as long as it does; filled by calltree_yaml.
    rendered: dict[tuple[int, str, int], str] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def off_path(self) -> bool:
        """Failed or abandoned: on no active path, so out of the model's tree (reading 10)."""
        return self.outcome is not Outcome.OK

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
    #: "Compress only when over budget" (§5): the most tokens the call tree may take
    #: before finished work is folded; None = never fold.
    budget: int | None = None

    # lookups for the renderer, which asks for every node of every snapshot
    _exposes: dict[str, Expose] = field(init=False, repr=False, compare=False)
    _ranges: dict[str, RenderRange] = field(init=False, repr=False, compare=False)
    #: the functions whose calls are hidden; None when hiding is the default
    hidden_names: frozenset[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the first entry for a name wins, as it would in a scan of the tuple
        exposes = dict(reversed(self.expose))
        object.__setattr__(self, "_exposes", exposes)
        object.__setattr__(self, "_ranges", dict(reversed(self.render_range)))
        hidden = frozenset(n for n, e in exposes.items() if e is Expose.HIDDEN)
        object.__setattr__(
            self, "hidden_names", None if self.default_expose is Expose.HIDDEN else hidden
        )

    def expose_of(self, function: str) -> Expose:
        return self._exposes.get(function, self.default_expose)

    def range_of(self, function: str) -> RenderRange:
        return self._ranges.get(function, self.default_range)

    def hidden(self, function: str) -> bool:
        return self.expose_of(function) is Expose.HIDDEN


class CallTreeError(ValueError):
    """An event does not fit the call tree (unbalanced enter/exit and the like)."""
