"""The call tree of a Claude Code session: the root, one call per user turn, subagents inside
their turn, and each request as its blocks: the unrecorded prefix laid out for its
conversation, then the history with the client's tail marker."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from assembler.sessions.importers.claude_code.prefix import (
    first_reads,
    hour_parts,
    prefix_blocks,
    retooled,
    system_parts,
    warm_split,
    who_of,
)
from assembler.sessions.importers.claude_code.transcript import Transcript
from assembler.sessions.importers.history import (
    Events,
    Request,
    ToolDone,
    TurnStart,
)
from assembler.sessions.importers.shared_history import SharedWriter, last_index

ROOT = "claude_code_session"
_IDLE = timedelta(minutes=5)  # the shortest lifetime a prefix of the thread may have had


@dataclass
class _Emitter:
    events: Events
    model: str
    main_model: str
    platform: str
    unlinked: list[Transcript]
    # per model, the main prompt's own size where separable; per thread and model, where
    # the part a bill mixing lifetimes wrote for an hour ends; per thread, what earlier
    # traffic of the same client had left cached for its first request (its bill's read)
    system: dict[str, int] = field(default_factory=dict)
    hour: dict[tuple[str, str], int] = field(default_factory=dict)
    warm: dict[str, int] = field(default_factory=dict)
    started: dict[str, tuple[str, datetime]] = field(default_factory=dict)  # its last request
    writer: SharedWriter = field(default_factory=SharedWriter)

    def request(self, t: Transcript, r: Request, who: str) -> str:
        label = r.label
        platform = r.platform or self.platform
        if r.model != self.model or platform != self.platform:
            # The profile follows every request's model (caches are per model), but only
            # the main agent changing its own model is labelled a switch: a subagent
            # running on another model, and the return from it, are not.
            provider = platform if platform != self.platform else None
            self.events.add("change", r.at, model=r.model, provider=provider)
            self.model, self.platform = r.model, platform
        if not who:
            if r.model != self.main_model:
                label = label or "model-switch"
            self.main_model = r.model
        conversation = t.conversations[id(r)]
        system = self.system.get(r.model)
        hour = self.hour.get((who, r.model), 0)
        prefix = prefix_blocks(who, conversation, system, hour, r.ttl, r.rewrites)
        shared = self.warm.get(who, 0)
        prefix = warm_split(prefix, shared, self._warm_now(who, r, shared))
        head = retooled(prefix, r.retools)
        # Claude Code marks the tail of every request; results that finished out of call
        # order are sent in call order with the marker on the one recorded last
        at = last_index(r.history, r.marker) if r.marker is not None else None
        end = len(head) + len(r.history) - 1
        request = self.writer.request(head, r.history, end if at is None else len(head) + at)
        output = "\n".join(
            i.text if i.kind == "text" else f"[{i.kind} {i.label}]"
            for i in r.output
            if i.kind != "thinking"
        )
        self.events.add(
            "llm",
            r.at,
            label=self.events.unique_label(label) if label else None,
            output=output,
            usage=r.usage,
            ttl=r.ttl,
            request=request,
            diagnostic=r.diagnostic,
            settings={"service_tier": r.service_tier} if r.service_tier else None,
        )
        return next((i.text for i in reversed(r.output) if i.kind == "text"), "")

    def _warm_now(self, who: str, r: Request, shared: int) -> bool:
        """Whether the prefix other traffic of the client shares (what the thread's first
        request found cached) is marked as cached before this request: at the thread's
        first request, and where the thread's own entries may be gone (another model
        than its last request's, or an idle gap past five minutes) while the bill reads
        at least that prefix. Other sessions keep it warm; only the bill shows it."""
        last = self.started.get(who)
        self.started[who] = (r.model, r.at)
        if last is None:
            return True
        model, at = last
        stale = model != r.model or r.at - at > _IDLE
        return stale and r.usage is not None and r.usage["cache_read"] >= shared

    def subagent(self, t: Transcript) -> None:
        start = t.start
        if start is None:
            return
        prompt = next((e.prompt for e in t.entries if isinstance(e, TurnStart)), None)
        self.events.enter(start, f"subagent:{t.agent_id or 'sidechain'}"[:200], prompt)
        answer, last = "", start
        for e in t.entries:
            last = e.at
            if isinstance(e, Request):
                answer = self.request(t, e, who_of(None, t)) or answer
            elif isinstance(e, ToolDone):
                self.events.add(
                    "tool", e.at, name=_tool_name(e.name), input=e.input, output=e.output
                )
        self.events.exit(last, answer or None)

    def flush_unlinked(self, before: datetime | None) -> None:
        while self.unlinked and (before is None or (self.unlinked[0].start or before) < before):
            self.subagent(self.unlinked.pop(0))


def _start(t: Transcript) -> datetime:
    return t.entries[0].at


def _tool_name(name: str) -> str:
    return name[:200] or "tool"


def emit(main: Transcript, subs: list[Transcript]) -> Events:
    """The call tree: the root, one call per user turn, subagents inside their turn."""
    requests = main.requests
    by_id = {t.agent_id: t for t in reversed(subs) if t.agent_id}  # the first file of an id
    linked = {e.agent_id for e in main.entries if isinstance(e, ToolDone) and e.agent_id}
    # Subagents no tool result names (or a second file of one id) go by time, in their turn.
    placed = {id(by_id[a]) for a in linked if a in by_id}
    unlinked = sorted((t for t in subs if id(t) not in placed and t.entries), key=_start)
    events = Events()
    first_request = requests[0]
    out = _Emitter(
        events,
        first_request.model,
        first_request.model,
        first_request.platform or "anthropic",
        unlinked,
        system_parts(main),
        {(who_of(main, t), m): n for t in (main, *subs) for m, n in hour_parts(t).items()},
        first_reads(main, subs),
    )
    first = main.entries[0].at
    events.enter(first, ROOT)
    turn, last_answer = 0, ""
    in_turn = False
    for e in main.entries:
        if in_turn:
            out.flush_unlinked(e.at)
        if isinstance(e, TurnStart):
            if in_turn:
                events.exit(events.last or e.at, last_answer or None)
            turn += 1
            events.enter(e.at, f"turn_{turn}", e.prompt)
            in_turn, last_answer = True, ""
            continue
        if not in_turn:  # a transcript resumed mid-turn starts without a prompt
            turn += 1
            events.enter(e.at, f"turn_{turn}")
            in_turn = True
        if isinstance(e, Request):
            last_answer = out.request(main, e, "") or last_answer
        else:
            if e.agent_id in by_id:
                out.subagent(by_id.pop(e.agent_id))
            events.add("tool", e.at, name=_tool_name(e.name), input=e.input, output=e.output)
    out.flush_unlinked(None)
    end = events.last or first
    if in_turn:
        events.exit(end, last_answer or None)
    events.exit(end)
    return events
