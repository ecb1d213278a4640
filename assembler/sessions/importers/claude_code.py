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
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from assembler.sessions.importers.claude_code_prefix import (
    first_reads,
    prefix_blocks,
    retooled,
    system_part,
    warm_split,
)
from assembler.sessions.importers.claude_code_reader import read_transcript
from assembler.sessions.importers.claude_code_transcript import Dropped, Transcript
from assembler.sessions.importers.history import (
    SIDE_CALL,
    Events,
    Imported,
    Request,
    ScaleFit,
    TokenCount,
    ToolDone,
    TurnStart,
    history_blocks,
    infer_hidden,
    infer_prefix,
    session_doc,
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


def _finish(t: Transcript, count: TokenCount, scales: Mapping[str, float]) -> Transcript:
    requests = t.requests
    t.prefix = infer_prefix(
        [(r.usage, r.history) for r in requests],
        count,
        [scales.get(r.model, 1.0) for r in requests],
    )
    # the part of the prefix a bill mixing lifetimes wrote for an hour
    t.hour = max(
        (r.usage.get("cache_write_1h", 0) for r in t.requests if r.usage and r.ttl == "5m"),
        default=0,
    )
    infer_hidden(t.requests, count, scales)
    return t


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
        prefix = prefix_blocks(t, who, self.system, r.ttl, r.rewrites)
        shared = self.warm.get(who, 0)
        prefix = warm_split(prefix, shared, self._warm_now(who, r, shared))
        blocks = [*retooled(prefix, r.retools), *history_blocks(r.history)]
        # Claude Code marks the tail of every request; results that finished out of call
        # order are sent in call order with the marker on the one recorded last
        at = next((k for k, i in enumerate(r.history) if i is r.marker), None)
        blocks[-1 if at is None else len(blocks) - len(r.history) + at]["breakpoint"] = True
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
        system_part(main),
        first_reads(main, subs),
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
            base=main,
        )
    ]
    _merge_compactions(main, calls)
    # one factor per model fits the counted sizes to the bill, for every transcript alike
    fit = ScaleFit()
    for t in (main, *subs):
        fit.add(t.requests, count)
    scales = fit.scales()
    for t in (main, *subs):
        _finish(t, count, scales)
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
        token_scale=scales,
    )
    return Imported(data, skipped.warnings(str(path)) + dropped.warnings())
