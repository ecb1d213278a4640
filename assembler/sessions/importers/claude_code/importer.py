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
import os
import re
from pathlib import Path
from typing import Any

from assembler.sessions.importers.claude_code.emit import emit
from assembler.sessions.importers.claude_code.reader import read_transcript
from assembler.sessions.importers.claude_code.sizes import quiet_notifications, settle
from assembler.sessions.importers.claude_code.transcript import Dropped, Transcript
from assembler.sessions.importers.history import (
    SIDE_CALL,
    Imported,
    Request,
    TokenCount,
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
from assembler.sessions.importers.sizing import ScaleFit, Sizer, infer_hidden

AGENT = "claude-code"


def _folder(path: Path, folder: Path | None) -> Path | None:
    """``--subagents DIR``, else ``<stem>/subagents/`` or ``subagents/`` beside the file."""
    if folder is not None:
        if os.path.isdir(folder):
            return folder
        raise ImporterError(str(folder), "--subagents: expected a folder of agent-*.jsonl files")
    # strings, not Paths: a transcript without subagents (most of them) costs two stat calls
    parent = os.path.dirname(path)
    for d in (os.path.join(parent, path.stem, "subagents"), os.path.join(parent, "subagents")):
        if os.path.isdir(d):
            return Path(d)
    return None


def side_files(path: Path, folder: Path | None) -> tuple[list[Path], list[Path]]:
    """The subagent transcripts (``agent-*.jsonl``) and the compaction calls
    (``agent-acompact*.jsonl``, made on the main model) beside ``path``: the folder is
    found and listed once for both."""
    d = _folder(path, folder)
    if d is None:
        return [], []
    found = sorted(d.glob("agent-*.jsonl"))
    return (
        [p for p in found if not _is_compaction_file(p)],
        [p for p in found if _is_compaction_file(p)],
    )


def _is_compaction_file(p: Path) -> bool:
    return p.name.startswith("agent-acompact")


def _finish(t: Transcript, sizer: Sizer) -> None:
    """Sizes from the bill (see ``sizes``): the hidden blocks, which task notifications
    rewrote the conversation, each conversation's unrecorded part and what the client
    sent beyond the recorded blocks."""
    infer_hidden(t.requests, sizer)
    quiet_notifications(t)
    settle(t, sizer)


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
    sub_files, compactions = side_files(path, subagents)
    subs = inline + [
        t
        for f in sub_files
        for t in read_transcript(
            f, _records(f, skipped, dropped), count, dropped, sidechains=False, thread=f.stem
        )
    ]
    calls = [
        t
        for f in compactions
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
    # one factor per session and model fits the counted sizes to the bill, for every
    # transcript alike
    sizer = Sizer(count)
    fit = ScaleFit()
    for t in (main, *subs):
        fit.add(t.requests, sizer)
    scales = sizer.scales = fit.scales()
    for t in (main, *subs):
        _finish(t, sizer)
        if t is not main and t.agent_id is None:
            t.agent_id = Path(t.source).stem.removeprefix("agent-")
    requests = main.requests
    events = emit(main, subs)
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
        shared=True,
    )
    return Imported(data, skipped.warnings(str(path)) + dropped.warnings(), len(sub_files))
