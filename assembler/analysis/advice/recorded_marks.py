"""Cache markers on recorded requests, named by rules a client can apply to every request.

A recorded request's blocks change from one request to the next (the history
grows, a compaction replaces it), so a marker is placed by a rule that finds its
block in any request: the last tool, the end of the system prompt, the end of the
last message. A message is a run of blocks of one role in ``messages`` (the API
merges consecutive turns of one role); a rule on it marks its last block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from operator import attrgetter

from assembler.cache.providers import normalize_provider
from assembler.errors import UsageError
from assembler.sessions.model import Change, LLMCall, RecordedBlock, RecordedRequest, Session


@dataclass(frozen=True)
class Rule:
    """A block found by its section and its index there (negative: from the end)."""

    section: str  # tools | system | messages
    index: int  # a block of tools or system; a message (its last block) of messages

    @property
    def name(self) -> str:
        if self.section == "messages":
            return f"messages[{self.index}].content[-1]"
        return f"{self.section}[{self.index}]"

    @property
    def meaning(self) -> str:
        if self.section == "tools":
            return "the last tool" if self.index == -1 else f"tool {self.index + 1}"
        if self.section == "system":
            if self.index == -1:
                return "the end of the system prompt"
            return f"system block {self.index + 1}"
        if self.index >= 0:
            return f"the end of message {self.index + 1}"
        if self.index == -1:
            return "the end of the last message"
        return f"the end of message {-self.index} from the end"


#: Messages counted from the start and from the end that a rule may mark.
FIRST_MESSAGES = 2
LAST_MESSAGES = 6
#: System blocks counted from the start (the last is its own rule).
SYSTEM_BLOCKS = 4


def candidate_rules(requests: Iterable[Sequence[RecordedBlock]]) -> tuple[Rule, ...]:
    """The rules worth trying on ``requests``, in wire order (a rule's block never comes
    after a later rule's on the same request)."""
    tools = system = 0
    for blocks in requests:
        tools = max(tools, sum(b.section == "tools" for b in blocks))
        system = max(system, sum(b.section == "system" for b in blocks))
    rules: list[Rule] = []
    if tools:
        rules.append(Rule("tools", -1))
    rules += [Rule("system", i) for i in range(min(system - 1, SYSTEM_BLOCKS))]
    if system:
        rules.append(Rule("system", -1))
    rules += [Rule("messages", i) for i in range(FIRST_MESSAGES)]
    rules += [Rule("messages", -i) for i in range(LAST_MESSAGES, 0, -1)]
    return tuple(rules)


def _message_ends(blocks: Sequence[RecordedBlock]) -> list[int]:
    ends: list[int] = []
    for i, b in enumerate(blocks):
        if b.section != "messages":
            continue
        if ends and ends[-1] == i - 1 and blocks[i - 1].role == b.role:
            ends[-1] = i
        else:
            ends.append(i)
    return ends


class Resolver:
    """Where each rule lands in one request (a block index, or None where it has none)."""

    def __init__(self, blocks: Sequence[RecordedBlock]) -> None:
        self._sections: dict[str, list[int]] = {"tools": [], "system": []}
        for i, b in enumerate(blocks):
            if b.section in self._sections:
                self._sections[b.section].append(i)
        self._sections["messages"] = _message_ends(blocks)

    def __call__(self, rule: Rule) -> int | None:
        found = self._sections.get(rule.section, [])
        i = rule.index
        return found[i] if -len(found) <= i < len(found) else None


class Resolvers:
    """The :class:`Resolver` of each request, made once: a plan search resolves every
    request once per plan it bills. Keyed by the blocks object, held beside its resolver
    so that its id is not reused while the memo lives."""

    def __init__(self) -> None:
        self._made: dict[int, tuple[Sequence[RecordedBlock], Resolver]] = {}

    def __call__(self, blocks: Sequence[RecordedBlock]) -> Resolver:
        hit = self._made.get(id(blocks))
        if hit is None or hit[0] is not blocks:
            hit = self._made[id(blocks)] = (blocks, Resolver(blocks))
        return hit[1]


Marks = tuple[tuple[Rule, str], ...]  # (rule, lifetime) in wire order
_MARKED = attrgetter("breakpoint")


def resolve(
    marks: Marks, blocks: Sequence[RecordedBlock], where: Resolver | None = None
) -> dict[int, str]:
    """The block index and lifetime of each mark on one request, in wire order. Two rules on
    one block mark it once, with the first one's lifetime (the longer: 1h marks come
    first); a short history can put a rule from the end ahead of one from the start, and a
    mark after a 5m one is then 5m too, as the API accepts no 1h entry after a 5m one."""
    if where is None:
        where = Resolver(blocks)
    found: dict[int, str] = {}
    for rule, ttl in marks:
        i = where(rule)
        if i is not None and i not in found:
            found[i] = ttl
    out: dict[int, str] = {}
    five = False
    for i in sorted(found):
        five = five or found[i] == "5m"
        out[i] = "5m" if five else found[i]
    return out


def marked_calls(session: Session, provider: str | None = None) -> Iterator[LLMCall]:
    """The recorded calls of ``session`` sent to a cache with markers (Anthropic's), at
    ``provider`` if given, else at the provider each was recorded at."""
    current = session.profile.provider
    for e in session.events:
        if isinstance(e, Change) and e.provider:
            current = e.provider
        elif isinstance(e, LLMCall) and e.request is not None:
            try:
                anthropic = normalize_provider(provider or current) == "anthropic"
            except UsageError:
                anthropic = False
            if anthropic:
                yield e


def flattened(session: Session) -> Session:
    """``session`` with every recorded request held whole rather than as a chain of kept
    blocks: resolved once here, each later read of its blocks is a tuple."""
    events = tuple(
        replace(e, request=RecordedRequest(e.request.blocks()))
        if isinstance(e, LLMCall) and e.request is not None
        else e
        for e in session.events
    )
    return replace(session, events=events)


MarksOf = Callable[[LLMCall, Sequence[RecordedBlock]], Mapping[int, str]]


def with_marks(session: Session, marks_of: MarksOf, provider: str | None = None) -> Session:
    """``session`` with the markers of every request of :func:`marked_calls` replaced by
    ``marks_of`` its call and blocks (block index → lifetime). Each marker carries its own lifetime, so the request's own
    write lifetime is the 5-minute default: what is written past the last 1h marker is
    priced at the 5m rate."""
    marked = {id(c) for c in marked_calls(session, provider)}
    # A block re-marked alike in request after request stays one object, as kept blocks
    # are: the analysis tells an unchanged block by identity (RecordedWires), and a new
    # object for the system prompt's marker in every request would read every block again.
    # (The block is kept beside its copy: its id is not reused while the memo lives.)
    remarked: dict[tuple[int, str | None], tuple[RecordedBlock, RecordedBlock]] = {}

    def marked_as(b: RecordedBlock, ttl: str | None) -> RecordedBlock:
        key = (id(b), ttl)
        hit = remarked.get(key)
        if hit is None:
            hit = remarked[key] = (b, replace(b, breakpoint=ttl is not None, ttl=ttl))
        return hit[1]

    events = []
    for e in session.events:
        if isinstance(e, LLMCall) and e.request is not None and id(e) in marked:
            blocks = e.request.blocks()
            marks = marks_of(e, blocks)
            # only the blocks marked before or after change: found by C-level iteration,
            # not a Python step per block of every request of every plan
            new = list(blocks)
            for i in compress(range(len(blocks)), map(_MARKED, blocks)):
                if i not in marks:
                    new[i] = marked_as(blocks[i], None)
            for i, ttl in marks.items():
                new[i] = marked_as(blocks[i], ttl)
            e = replace(e, request=RecordedRequest(tuple(new)), ttl="5m")
        events.append(e)
    return replace(session, events=tuple(events))


def recorded_marks(ttl: str | None = None) -> MarksOf:
    """The markers as recorded, each with its own lifetime, else its request's as billed
    (``ttl`` given: that one for all)."""

    def marks_of(call: LLMCall, blocks: Sequence[RecordedBlock]) -> dict[int, str]:
        return {i: ttl or b.ttl or call.ttl or "5m" for i, b in enumerate(blocks) if b.breakpoint}

    return marks_of


def plan_marks(marks: Marks, resolvers: Resolvers | None = None) -> MarksOf:
    """The markers a plan's rules place on each request (``resolvers``: shared by the plans
    of one search)."""
    where = resolvers or Resolvers()
    return lambda _call, blocks: resolve(marks, blocks, where(blocks))


def first_words(text: str, words: int = 6) -> str:
    """The opening words of a block, for a reader to recognise it."""
    parts = text.split()
    head = " ".join(parts[:words])
    return head + (" …" if len(parts) > words else "")
