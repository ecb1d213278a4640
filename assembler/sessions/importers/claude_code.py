"""Claude Code transcripts (JSON Lines under ``~/.claude/projects/``).

Read: ``user`` / ``assistant`` records (``message.content`` blocks ``text``,
``tool_use``, ``tool_result``, ``thinking``, ``image``), ``message.model``,
``message.usage``, ``requestId``, ``timestamp``, ``isSidechain``, ``agentId``,
``isMeta``, ``isCompactSummary``, ``system`` records with subtype
``compact_boundary``, and subagent transcripts ``subagents/agent-<id>.jsonl``.
Everything else (summaries, file-history snapshots, queue operations) is ignored
except ``summary`` for the title. See docs/importers.md.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from assembler.sessions.importers.claude_code_reader import (
    Dropped,
    Transcript,
    read_transcript,
)
from assembler.sessions.importers.history import (
    SIDE_CALL,
    Events,
    Imported,
    Request,
    TokenCount,
    ToolDone,
    TurnStart,
    history_blocks,
    infer_hidden,
    infer_prefix,
    session_doc,
    unrecorded_block,
)
from assembler.sessions.importers.records import (
    MAX_RECORD_BYTES,
    ImporterError,
    Record,
    Skipped,
    no_requests,
    read_jsonl,
)

Block = dict[str, Any]
AGENT = "claude-code"
ROOT = "claude_code_session"
_IDLE = timedelta(minutes=5)  # the shortest lifetime a prefix of the thread may have had
CONTEXT_TEXT = "[context the client prepends to the first message: not recorded in the transcript]"


def _folder(path: Path, folder: Path | None) -> Path | None:
    """``--subagents DIR``, else ``<stem>/subagents/`` or ``subagents/`` beside the file."""
    candidates = (
        [folder]
        if folder is not None
        else [path.parent / path.stem / "subagents", path.parent / "subagents"]
    )
    for d in candidates:
        if d.is_dir():
            return d
    if folder is not None:
        raise ImporterError(str(folder), "--subagents: expected a folder of agent-*.jsonl files")
    return None


def subagent_files(path: Path, folder: Path | None) -> list[Path]:
    """The subagent transcripts: every ``agent-*.jsonl`` but the compaction calls."""
    d = _folder(path, folder)
    if d is None:
        return []
    return sorted(p for p in d.glob("agent-*.jsonl") if not _is_compaction_file(p))


def compaction_files(path: Path, folder: Path | None) -> list[Path]:
    """``agent-acompact-*.jsonl``: the /compact calls, made on the main model."""
    d = _folder(path, folder)
    return sorted(d.glob("agent-acompact*.jsonl")) if d is not None else []


def _is_compaction_file(p: Path) -> bool:
    return p.name.startswith("agent-acompact")


def _finish(t: Transcript, count: TokenCount) -> Transcript:
    t.prefix = infer_prefix([(r.usage, r.history) for r in t.requests], count)
    # the part of the prefix a bill mixing lifetimes wrote for an hour
    t.hour = max(
        (r.usage.get("cache_write_1h", 0) for r in t.requests if r.usage and r.ttl == "5m"),
        default=0,
    )
    infer_hidden(t.requests, count)
    return t


# Requests whose read is the system prompt alone: after a compaction its messages are new,
# and after a task notification the client re-sends them rewritten.
_SYSTEM_ONLY = ("compaction", "task-notification")


def _system_part(t: Transcript) -> int | None:
    """The system prompt's own size, when the bill shows it apart from the context the
    client prepends to the first message: the read of a main-thread request whose
    messages are all new (see ``_SYSTEM_ONLY``)."""
    requests = t.requests
    for k, r in enumerate(requests):
        label = r.label or ""
        if r.thread == "" and label != SIDE_CALL and label.startswith(_SYSTEM_ONLY):
            after = next((x for x in requests[k:] if x.usage is not None), None)
            if after is not None and after.usage is not None:
                read = after.usage["cache_read"]
                if 0 < read < t.prefix:
                    return read
    return None


@dataclass
class _Emitter:
    events: Events
    model: str
    main_model: str
    platform: str
    unlinked: list[Transcript]
    system: int | None = None  # the main prompt's own size when separable
    # per thread, what earlier traffic of the same client had left cached for its first
    # request (its bill's read: the tools and system prompt); the threads started so far
    warm: dict[str, int] = field(default_factory=dict)
    started: dict[str, tuple[str, datetime]] = field(default_factory=dict)  # its last request

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
        prefix = _prefix_blocks(t, who, self.system, r.ttl, r.rewrites)
        shared = self.warm.get(who, 0)
        prefix = _warm(prefix, shared, self._warm_now(who, r, shared))
        blocks = [*_retooled(prefix, r.retools), *history_blocks(r.history)]
        # Claude Code marks the tail of every request; results that finished out of call
        # order are sent in call order with the marker on the one recorded last
        marker = -1 if r.marker is None else len(blocks) - len(r.history) + r.marker
        blocks[marker]["breakpoint"] = True
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
            request={"blocks": blocks},
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
                answer = self.request(t, e, f"subagent {t.agent_id}") or answer
            elif isinstance(e, ToolDone):
                self.events.add(
                    "tool", e.at, name=_tool_name(e.name), input=e.input, output=e.output
                )
        self.events.exit(last, answer or None)

    def flush_unlinked(self, before: datetime | None) -> None:
        while self.unlinked and (before is None or (self.unlinked[0].start or before) < before):
            self.subagent(self.unlinked.pop(0))


def _prefix_blocks(
    t: Transcript, who: str, system: int | None, ttl: str | None, rewrites: int = 0
) -> list[Block]:
    """The unrecorded system prompt and tools; apart from the context prepended to the
    first message when the bill separates them: by the read after a compaction or a
    rewrite (main agent), or by a bill mixing lifetimes (Claude Code writes its system
    prompt and tools for an hour, the messages for five minutes). In a request of
    5-minute writes the part billed for an hour carries its own lifetime. After the
    client re-sent the conversation rewritten, the context is another text."""
    size = system if system is not None and not who else None
    if size is None and 0 < t.hour < t.prefix:
        size = t.hour
    if size is None:
        blocks = [unrecorded_block(t.prefix, who)]
    else:
        head = unrecorded_block(size, who)
        head["name"] = "unrecorded system prompt"
        head["inferred"] = True
        text = CONTEXT_TEXT if not who else CONTEXT_TEXT.replace("[", f"[{who}: ", 1)
        if rewrites:
            text = text.replace("]", f" (re-sent rewritten, {rewrites}×)]", 1)
        context = {
            "section": "messages",
            "name": "unrecorded first-message context",
            "role": "user",
            "text": text,
            "tokens": max(0, t.prefix - size),
            "inferred": True,
        }
        blocks = [head, context]
    if t.hour and ttl == "5m":
        blocks[0]["ttl"] = "1h"
    return blocks


def _first_reads(main: Transcript, subs: list[Transcript]) -> dict[str, int]:
    """Per thread (``who``), the read billed to its first request."""
    out: dict[str, int] = {}
    for t in (main, *subs):
        who = "" if t is main else f"subagent {t.agent_id}"
        usage = next((r.usage for r in t.requests if r.usage is not None), None)
        if usage is not None:
            out.setdefault(who, usage["cache_read"])
    return out


def _warm(blocks: list[Block], tokens: int, first: bool) -> list[Block]:
    """The unrecorded blocks with their first ``tokens`` split off the block they end in,
    so that every request of the thread has the same blocks; on the thread's first
    request that part is marked as cached before the session (the simulator finds it
    warm, as the provider did)."""
    if tokens <= 0:
        return blocks
    out: list[Block] = []
    left = tokens
    for k, b in enumerate(blocks):
        size = b["tokens"]
        if 0 < left < size:
            head = {**b, "name": f"{b['name']}, cached before", "tokens": left}
            head.pop("breakpoint", None)
            head.pop("ttl", None)
            head["text"] = b["text"].replace("]", " (the part cached before the session)]", 1)
            if first:
                head["warm"] = True
            return [*out, head, {**b, "tokens": size - left}, *blocks[k + 1 :]]
        left -= size
        out.append(b)
        if left <= 0 or k == len(blocks) - 1:
            if first:
                out[-1] = {**b, "warm": True}
            return [*out, *blocks[k + 1 :]]
    return out


def _retooled(blocks: list[Block], times: int) -> list[Block]:
    """After the client listed its tools again, the system prompt and tools past the part
    other traffic shares are another text."""
    if not times:
        return blocks
    k = next(i for i, b in enumerate(blocks) if "cached before" not in b["name"])
    again = blocks[k]["text"].replace("]", f" (tools listed again, {times}×)]", 1)
    return [*blocks[:k], {**blocks[k], "text": again}, *blocks[k + 1 :]]


def _start(t: Transcript) -> datetime:
    return t.entries[0].at


def _tool_name(name: str) -> str:
    return name[:200] or "tool"


def _emit(main: Transcript, subs: list[Transcript]) -> Events:
    """The call tree: the root, one call per user turn, subagents inside their turn."""
    requests = main.requests
    by_id = {t.agent_id: t for t in subs if t.agent_id}
    linked = {e.agent_id for e in main.entries if isinstance(e, ToolDone) and e.agent_id}
    # Subagents no tool result names are placed by time, inside the turn running then.
    unlinked = sorted((t for t in subs if t.agent_id not in linked and t.entries), key=_start)
    events = Events()
    first_request = requests[0]
    emit = _Emitter(
        events,
        first_request.model,
        first_request.model,
        first_request.platform or "anthropic",
        unlinked,
        _system_part(main),
        _first_reads(main, subs),
    )
    first = main.entries[0].at
    events.enter(first, ROOT)
    turn, last_answer = 0, ""
    in_turn = False
    for e in main.entries:
        if in_turn:
            emit.flush_unlinked(e.at)
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
            last_answer = emit.request(main, e, "") or last_answer
        else:
            if e.agent_id in by_id:
                emit.subagent(by_id.pop(e.agent_id))
            events.add("tool", e.at, name=_tool_name(e.name), input=e.input, output=e.output)
    emit.flush_unlinked(None)
    end = events.last or first
    if in_turn:
        events.exit(end, last_answer or None)
    events.exit(end)
    return events


def _merge_compactions(main: Transcript, calls: list[Transcript]) -> None:
    """A /compact call is a request on the main model with the main system prompt: it
    joins the main thread at its time, labelled ``compaction-call``; it reads the main
    history's entry and refreshes the system entry the next request reads."""
    extra: list[Request] = []
    for t in calls:
        # the file re-emits the conversation before its own call: the call is the last request
        for r in t.requests[-1:]:
            r.thread, r.label = "", SIDE_CALL
            extra.append(r)
    if extra:
        main.entries = sorted([*main.entries, *extra], key=lambda e: e.at)


def _missing_main(path: Path, main: Transcript, inline: list[Transcript]) -> ImporterError:
    """Name what is missing when the file has no main-thread request."""
    source = str(path)
    side = [t for t in inline if t.requests]
    if _is_compaction_file(path):
        return ImporterError(
            source,
            "this is a compaction call (agent-acompact-*) without its session: import the "
            "session file; its compaction calls are read from <session>/subagents/",
        )
    if main.records == 0 and inline:
        aid = inline[0].agent_id or "unknown"
        session = inline[0].session_id or "<sessionId>"
        return ImporterError(
            source,
            f"this is a subagent transcript (agentId {aid}) without its session: import "
            f"{session}.jsonl; its subagents are read from {session}/subagents/",
        )
    if side:
        n = sum(len(t.requests) for t in side)
        return ImporterError(
            source,
            f"no main-thread request: the {n} requests in this file are all sidechain records "
            "(isSidechain: true); the main conversation is missing",
        )
    return no_requests(source, "assistant records with message.model and message.usage")


_ASSISTANT = re.compile(rb'"type"\s*:\s*"assistant"')


def _records(path: Path, skipped: Skipped, dropped: Dropped) -> list[Record]:
    """The file's records; one over the size a record may have (a base64 file a tool
    read) is skipped and counted, unless it is a response: the session needs its request."""

    def oversized(number: int, line: bytes) -> Record | None:
        if _ASSISTANT.search(line):
            raise ImporterError(
                str(path),
                f"the line is {len(line):,} bytes; one record may hold at most "
                f"{MAX_RECORD_BYTES:,}, and this one is a response the session needs (an "
                "oversized record of another kind is skipped)",
                line=number,
            )
        dropped.too_large(str(path), number, len(line))
        try:
            value = json.loads(line)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        # what the conversation tree needs of a skipped record: its place
        keep = ("uuid", "parentUuid", "isSidechain", "agentId", "timestamp")
        link = {key: value[key] for key in keep if key in value}
        return Record(number, {**link, "type": "oversized"}, str(path))

    return read_jsonl(path, skipped, oversized=oversized)


def import_claude_code(path: Path, count: TokenCount, *, subagents: Path | None = None) -> Imported:
    skipped, dropped = Skipped(), Dropped()
    main, *inline = read_transcript(path, _records(path, skipped, dropped), count, dropped)
    if not main.requests:
        raise _missing_main(path, main, inline)
    subs = inline + [
        t
        for f in subagent_files(path, subagents)
        for t in read_transcript(
            f, _records(f, skipped, dropped), count, dropped, sidechains=False, thread=f.stem
        )
    ]
    calls = [
        t
        for f in compaction_files(path, subagents)
        for t in read_transcript(
            f,
            _records(f, skipped, dropped),
            count,
            dropped,
            sidechains=False,
            thread="",
            base=main.marks,
        )
    ]
    _merge_compactions(main, calls)
    for t in (main, *subs):
        _finish(t, count)
        if t is not main and t.agent_id is None:
            t.agent_id = Path(t.source).stem.removeprefix("agent-")
    requests = main.requests
    events = _emit(main, subs)
    environment: dict[str, Any] = {"harness": "Claude Code"}
    if main.cwd:
        environment["cwd"] = main.cwd
    if main.git_branch is not None:
        environment["git_repo"] = bool(main.git_branch)
    data = session_doc(
        id=main.session_id or path.stem,
        agent=AGENT,
        provider=requests[0].platform or "anthropic",
        model=requests[0].model,
        environment=environment,
        events=events.events,
        title=main.title,
    )
    return Imported(data, skipped.warnings(str(path)) + dropped.warnings())
