"""The recorded-session values: profile, events, usage; frozen, typed."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, TypeVar, overload

from assembler.design.calltree import Expose, Outcome, RenderRange
from assembler.design.context import (
    Attachment,
    MemoryState,
    OutputContract,
    Profile,
    Tool,
)
from assembler.limits import MAX_SESSION_BYTES

FORMAT = "context-session/1"
#: Session files past this are refused before they are read. The analysis grows
#: linearly with the session; this admits about 150,000 generated steps (see
#: docs/benchmarks.md for the memory a 100,000-step analysis takes).
MAX_BYTES = MAX_SESSION_BYTES


class SessionError(ValueError):
    """A session file is malformed. ``str()`` is one line naming file, line and field."""

    def __init__(
        self, source: str, message: str, *, line: int | None = None, field: str | None = None
    ) -> None:
        self.source = source
        self.line = line
        self.field = field
        message = " ".join(message.split())  # always one line
        self.message = message
        where = source if line is None else f"{source}:{line}"
        at = f" {field}:" if field else ""
        super().__init__(f"{where}:{at} {message}")


# --- typed values --------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    """Measured usage of a real request (tokens, and the server-side web searches it ran)."""

    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    cache_write_1h: int = 0  # the part of cache_write written with a 1-hour lifetime
    web_searches: int = 0  # billed per search on top of the tokens


@dataclass(frozen=True)
class FunctionSpec:
    doc: str = ""
    expose: Expose | None = None
    render_range: RenderRange | None = None


_T = TypeVar("_T")


def built(cls: type[_T], fields: dict[str, Any]) -> _T:
    """A frozen dataclass instance from a dict of EVERY one of its fields, by value.

    Its ``__init__`` sets each field through ``object.__setattr__`` (an llm event
    has 18: 3 µs); the loader builds one event per line, so it hands the instance
    its attribute dict whole (0.5 µs). Same class, values, equality, hash, pickling.
    """
    obj = object.__new__(cls)
    object.__setattr__(obj, "__dict__", fields)
    return obj


@dataclass(frozen=True)
class Event:
    index: int
    at: datetime
    line: int | None

    @property
    def field(self) -> str:
        return f"events[{self.index}]"


@dataclass(frozen=True)
class Enter(Event):
    function: str = ""
    input: str | None = None
    dispatched_by: str | None = None
    doc: str | None = None
    expose: Expose | None = None
    id: str | None = None  # the recording's name for this call
    parent: str | None = None  # the running call it starts in (parallel children)
    retry_of: str | None = None  # the failed or abandoned call it retries


@dataclass(frozen=True)
class Exit(Event):
    function: str = ""
    output: str | None = None
    key_output: str | None = None
    id: str | None = None
    outcome: Outcome = Outcome.OK
    error: str | None = None


@dataclass(frozen=True)
class RecordedBlock:
    """A block of a request recorded verbatim (imported logs and transcripts)."""

    section: str  # tools | system | messages
    name: str
    text: str = ""
    role: str = "user"
    layer: str | None = None
    tokens: int | None = None
    breakpoint: bool = False
    inferred: bool = False  # tokens inferred from billed usage
    ttl: str | None = None  # its marker's own lifetime (5m, 1h); None: the request's
    warm: bool = False  # the provider held the prefix through this block before the request


class RecordedRequest(Sequence[RecordedBlock]):
    """A recorded request that may start with the previous request's first blocks.

    A request written with ``keep`` shares the previous request's blocks rather
    than copying them, so a chain of n requests that each keep the one before
    takes memory linear in the blocks written, not in the blocks resolved. The
    block list is built when it is read, in time linear in its length.

    Only the request itself says which kept blocks carry a cache marker
    (``marks``), so materialising takes the original blocks from the chain and
    the markers from this node alone.
    """

    __slots__ = (
        "_hour_marks",
        "_keep",
        "_len",
        "_marks",
        "_plain",
        "_positions",
        "_previous",
        "_start",
        "_tail",
        "_variants",
        "warm_end",
    )

    def __init__(
        self,
        tail: tuple[RecordedBlock, ...],
        previous: RecordedRequest | None = None,
        keep: int = 0,
        marks: frozenset[int] = frozenset(),
        hour_marks: frozenset[int] = frozenset(),
        start: Mapping[str, int] | None = None,
    ) -> None:
        """``start``: ``kept_counts(previous, keep)`` where the caller has it already."""
        previous = _owner(previous, keep)
        self._previous = previous
        self._keep = keep
        self._marks = marks
        self._hour_marks = hour_marks  # kept blocks whose marker asks for one hour
        self._tail = tail
        self._plain: tuple[RecordedBlock, ...] | None = None  # see ``_unmarked``
        self._variants: dict[tuple[int, bool, str | None], RecordedBlock] | None = None
        self._len = keep + len(tail)
        # the last block of the prefix that was cached before this request was sent (-1: none)
        self.warm_end = max((keep + i for i, b in enumerate(tail) if b.warm), default=-1)
        # per section, its blocks before the tail (and, once a later request keeps part of
        # this one, its tail positions: ``_section_positions``), for ``kept_counts``
        if start is None:
            start = kept_counts(previous, keep)
        self._start = start
        self._positions: dict[str, list[int]] | None = None

    def __len__(self) -> int:
        return self._len

    def _section_positions(self) -> dict[str, list[int]]:
        """Per section, where its blocks stand in the tail; made when a later request first
        keeps part of this one (most requests are never kept from)."""
        if self._positions is None:
            positions: dict[str, list[int]] = {name: [] for name in self._start}
            for i, b in enumerate(self._tail):
                at = positions.get(b.section)
                if at is None:
                    at = positions[b.section] = []
                at.append(i)
            self._positions = positions
        return self._positions

    def blocks(self) -> tuple[RecordedBlock, ...]:
        """The resolved blocks, markers as this request records them."""
        if self._whole:
            return self._tail  # its own blocks, the same object each read
        return self._with_marks(*self._kept())

    @property
    def _whole(self) -> bool:
        """A whole request: nothing kept from another, no marker of its own."""
        return not self._keep and not self._marks and not self._hour_marks

    def _kept(self) -> tuple[tuple[RecordedBlock, ...], tuple[RecordedRequest, ...]]:
        """The first ``_keep`` blocks without markers, and the request whose tail holds
        each: read along the chain of owners."""
        chain: list[tuple[RecordedRequest, int]] = []
        node = self._previous
        need = self._keep
        while node is not None and need > 0:
            if need > node._keep:
                chain.append((node, need))
            need = min(need, node._keep)
            node = node._previous
        plain: list[RecordedBlock] = []
        owners: list[RecordedRequest] = []
        for node, upto in reversed(chain):
            plain.extend(node._unmarked()[: upto - node._keep])
            owners.extend([node] * (upto - node._keep))
        return tuple(plain), tuple(owners)

    def _with_marks(
        self, kept: tuple[RecordedBlock, ...], owners: tuple[RecordedRequest, ...]
    ) -> tuple[RecordedBlock, ...]:
        """``kept`` (see :meth:`_kept`), then the tail, each marker as this request says."""
        marks, hours = self._marks, self._hour_marks
        if not marks and not hours:
            return kept + self._tail
        out = [*kept, *self._tail]
        for k in marks | hours if hours else marks:
            owner = owners[k] if k < len(owners) else self
            out[k] = owner._marked(k - owner._keep, k in marks, "1h" if k in hours else None)
        return tuple(out)

    def _marked(self, j: int, breakpoint: bool, ttl: str | None) -> RecordedBlock:
        """Tail block ``j`` with a later request's marker: the very block when it was
        recorded so, else a copy made once, so that each request that keeps it marked
        reads the same object (later stages tell an unchanged block by identity)."""
        block = self._tail[j]
        if block.breakpoint == breakpoint and block.ttl == ttl:
            return block
        if self._variants is None:
            self._variants = {}
        key = (j, breakpoint, ttl)
        variant = self._variants.get(key)
        if variant is None:
            variant = self._variants[key] = replace(block, breakpoint=breakpoint, ttl=ttl)
        return variant

    def _unmarked(self) -> tuple[RecordedBlock, ...]:
        """The tail without markers, as a later request that keeps it starts from: made
        once, when a later request first reads it, not once per later request."""
        if self._plain is None:
            self._plain = tuple(
                replace(b, breakpoint=False, ttl=None) if b.breakpoint or b.ttl else b
                for b in self._tail
            )
        return self._plain

    @overload
    def __getitem__(self, index: int) -> RecordedBlock: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[RecordedBlock, ...]: ...
    def __getitem__(self, index: int | slice) -> RecordedBlock | tuple[RecordedBlock, ...]:
        return self.blocks()[index]

    def __iter__(self) -> Iterator[RecordedBlock]:
        return iter(self.blocks())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RecordedRequest):
            return self.blocks() == other.blocks()
        if isinstance(other, tuple):
            return self.blocks() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.blocks())

    def __repr__(self) -> str:
        return f"RecordedRequest({self.blocks()!r})"


class RequestResolver:
    """:meth:`RecordedRequest.blocks` for one session's requests in order. A request that
    keeps part of the one resolved before it (or of that one's owners, where each kept as
    much) takes that part from the resolution just made, and the request owning each kept
    block with it, instead of reading its chain of owners back to the start: a transcript's
    requests keep the one before, so that chain grows with the session (the 221-request
    session's: 54 requests on average)."""

    def __init__(self) -> None:
        self._last: RecordedRequest | None = None
        # the last request's kept blocks without markers, and the request whose tail holds
        # each; its own tail is added when a request keeps part of it
        self._kept: tuple[RecordedBlock, ...] = ()
        self._owners: tuple[RecordedRequest, ...] = ()

    def blocks(self, request: RecordedRequest) -> tuple[RecordedBlock, ...]:
        if self._continues(request):
            kept, owners = self._prefix(request._keep)
        else:
            kept, owners = request._kept()
        self._last, self._kept, self._owners = request, kept, owners
        if request._whole:
            return request._tail
        return request._with_marks(kept, owners)

    def _continues(self, request: RecordedRequest) -> bool:
        """Whether the first ``_keep`` blocks of the last request resolved are ``request``'s:
        its owner is that request, or one in its chain reached through requests that each
        kept at least as many."""
        keep, owner, node = request._keep, request._previous, self._last
        if not keep or owner is None:
            return False
        while node is not None and node is not owner and node._keep >= keep:
            node = node._previous
        return node is owner

    def _prefix(self, keep: int) -> tuple[tuple[RecordedBlock, ...], tuple[RecordedRequest, ...]]:
        """The last request's first ``keep`` blocks without markers, and their owners."""
        last, kept, owners = self._last, self._kept, self._owners
        assert last is not None
        more = keep - len(kept)
        if more <= 0:
            return kept[:keep], owners[:keep]
        return kept + last._unmarked()[:more], owners + (last,) * more


def _owner(previous: RecordedRequest | None, keep: int) -> RecordedRequest | None:
    """The earliest request in ``previous``'s chain whose own blocks reach past ``keep``.

    Skipped requests hold none of their own blocks in the kept prefix; along the
    chain ``keep`` then strictly decreases, every request visited when reading adds
    at least one block, and a request once skipped is never visited again (a stack).
    """
    if not keep:
        return None
    while previous is not None and keep <= previous._keep:
        previous = previous._previous
    return previous


def kept_counts(previous: RecordedRequest | None, keep: int) -> dict[str, int]:
    """How many blocks of each section the first ``keep`` blocks of ``previous`` hold."""
    owner = _owner(previous, keep)
    if owner is None:
        return {}
    at = keep - owner._keep
    start = owner._start
    return {
        name: start.get(name, 0) + bisect_left(tail, at)
        for name, tail in owner._section_positions().items()
    }


#: Service tiers and speeds that are billed at the standard price: nothing to record.
STANDARD_TIERS = frozenset({"standard", "default", "auto"})


@dataclass(frozen=True)
class RequestSettings:
    """Request settings a provider's cache depends on, as recorded (None: not recorded)."""

    tool_choice: str | None = None
    thinking: str | None = None
    effort: str | None = None
    web_search: bool | None = None
    citations: bool | None = None
    speed: str | None = None  # "fast" mode
    images: int | None = None  # how many images the request carries
    prompt_cache_key: str | None = None
    retention: str | None = None  # in_memory | 24h | 30m
    cache_mode: str | None = None  # implicit | explicit (prompt_cache_options.mode)
    cache_ttl: str | None = None  # prompt_cache_options.ttl
    response_started: datetime | None = None  # when the first response began (concurrency)
    # the tier that served it (priority, flex, batch, …): it prices the request, never the cache
    service_tier: str | None = None


@dataclass(frozen=True)
class ProviderDiagnostic:
    """The provider's own verdict on a request's cache, as its response reported it."""

    provider: str  # anthropic | openai
    type: str | None  # the provider's type; None: no divergence (or still computing)
    reason: str | None = None  # OpenAI's reason within a cache_miss
    missed_tokens: int | None = None


@dataclass(frozen=True)
class LLMCall(Event):
    label: str | None = None
    input: str = ""
    output: str = ""
    position: str | None = None
    contract: OutputContract | None = None
    output_schema: dict[str, Any] | None = None
    memory_prefetch: str | None = None
    usage: Usage | None = None
    request: RecordedRequest | None = None
    settings: RequestSettings | None = None
    diagnostic: ProviderDiagnostic | None = None
    ttl: str | None = None  # the lifetime of this request's cache writes, as billed
    call: str | None = None  # the running call it is made in; none running: top level
    attachments: tuple[Attachment, ...] = ()


@dataclass(frozen=True)
class ToolCall(Event):
    name: str = ""
    input: str | None = None
    output: str | None = None
    call: str | None = None


@dataclass(frozen=True)
class Change(Event):
    memory_state: MemoryState | None = None
    add_tools: tuple[Tool, ...] = ()
    remove_tools: tuple[str, ...] = ()
    provider: str | None = None
    model: str | None = None
    channel: str | None = None


@dataclass(frozen=True)
class Session:
    source: str
    id: str
    title: str
    profile: Profile
    functions: Mapping[str, FunctionSpec] = field(default_factory=dict)
    events: tuple[Event, ...] = ()
    # per model, the factor that fits counted sizes to the bill (an imported session's)
    token_scale: Mapping[str, float] = field(default_factory=dict)
