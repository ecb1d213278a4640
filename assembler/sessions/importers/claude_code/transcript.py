"""What reading a Claude Code transcript collects: one agent's conversation (its entries,
where its history stood after each record, the tree's links), the records left out on
purpose."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from assembler.sessions.importers.history import Entry, Item, Request
from assembler.sessions.importers.records import MAX_RECORD_BYTES


class Conversation(NamedTuple):
    """What a request shares with the others of its conversation (one first message, one
    rewrite of it, one model): the size of what its blocks do not hold (the system prompt,
    tools and the context the client prepends), fitted to the bill of its first request,
    and how often the thread had restarted from a new first message (a compaction)."""

    unrecorded: int
    restarts: int


class Mark(NamedTuple):
    """The history as it stood after a conversational record: the first ``length`` items
    of ``items`` (a list only ever appended to at its open end), and how often the client
    had re-sent the conversation rewritten by then."""

    items: list[Item]
    length: int
    rewrites: int


@dataclass
class Transcript:
    """One agent's conversation: the main session or one subagent."""

    source: str
    entries: list[Entry] = field(default_factory=list)
    agent_id: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    title: str | None = None
    # per request (by id), its conversation; set once the sizes are fitted to the bill
    conversations: dict[int, Conversation] = field(default_factory=dict)
    marks: dict[str, Mark] = field(default_factory=dict)  # uuid → where the history stood
    # The conversation tree. Only user and assistant records are its nodes: progress,
    # hook, attachment and other system records are links passed through to their parent.
    links: dict[str, str | None] = field(default_factory=dict)
    records: int = 0  # user / assistant records read
    sidechain_records: int = 0  # of which isSidechain: true

    @property
    def requests(self) -> list[Request]:
        return [e for e in self.entries if isinstance(e, Request)]

    @property
    def start(self) -> datetime | None:
        return self.entries[0].at if self.entries else None


@dataclass
class Dropped:
    """Records left out on purpose, each kind counted for one warning."""

    repeated: int = 0  # a line repeating an earlier record's uuid
    repeated_first: str = ""
    oversized: int = 0  # a record over the size one may have, not a request
    oversized_first: str = ""

    def repeat(self, source: str, line: int) -> None:
        self.repeated_first = self.repeated_first or f"line {line} of {source}"
        self.repeated += 1

    def too_large(self, source: str, line: int, size: int) -> None:
        self.oversized_first = self.oversized_first or f"line {line} of {source}, {size:,} bytes"
        self.oversized += 1

    def warnings(self) -> tuple[str, ...]:
        out: tuple[str, ...] = ()
        if n := self.repeated:
            out += (
                f"skipped {n} repeated record{'s' if n > 1 else ''} (a uuid written again, "
                f"the first copy kept; first at {self.repeated_first})",
            )
        if n := self.oversized:
            out += (
                f"skipped {n} oversized record{'s' if n > 1 else ''} (over "
                f"{MAX_RECORD_BYTES:,} bytes, e.g. an attached file; its content is missing "
                f"from the history; first at {self.oversized_first})",
            )
        return out
