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

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from assembler.sessions.importers.history import (
    Entry,
    Events,
    Imported,
    Item,
    Request,
    TokenCount,
    ToolDone,
    TurnStart,
    content_text,
    history_blocks,
    infer_prefix,
    json_text,
    session_doc,
    unrecorded_block,
)
from assembler.sessions.importers.records import (
    ImporterError,
    Record,
    Skipped,
    anthropic_usage,
    iter_items,
    kind,
    no_requests,
    read_jsonl,
)

AGENT = "claude-code"
ROOT = "claude_code_session"
SYNTHETIC = "<synthetic>"  # locally made assistant messages (errors): never sent to the API
TASK_TOOLS = ("Task", "Agent")
_AGENT_ID = re.compile(r"agentId:\s*([A-Za-z0-9_-]+)")


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
    prefix: int = 0

    @property
    def requests(self) -> list[Request]:
        return [e for e in self.entries if isinstance(e, Request)]

    @property
    def start(self) -> datetime | None:
        return self.entries[0].at if self.entries else None


@dataclass
class _Reader:
    """Walks one transcript's records in file order, keeping the history."""

    transcript: Transcript
    history: list[Item] = field(default_factory=list)
    open_requests: dict[str, Request] = field(default_factory=dict)
    tool_uses: dict[str, tuple[str, str]] = field(default_factory=dict)  # id → (name, input)
    pending_label: str | None = None

    def read(self, rec: Record) -> None:
        kind = rec.data.get("type")
        t = self.transcript
        if kind == "summary" and isinstance(rec.data.get("summary"), str):
            t.title = t.title or rec.data["summary"]
            return
        if kind not in ("user", "assistant", "system"):
            return
        t.session_id = t.session_id or _opt_str(rec, "sessionId")
        t.cwd = t.cwd or _opt_str(rec, "cwd")
        t.git_branch = t.git_branch if t.git_branch is not None else _opt_str(rec, "gitBranch")
        t.agent_id = t.agent_id or _opt_str(rec, "agentId")
        if kind == "system":
            if rec.data.get("subtype") == "compact_boundary":
                # Compaction rewrites the history: later requests start from the summary.
                self.history = []
                self.open_requests.clear()
                self.pending_label = "compaction"
            return
        message = rec.get_map("message")
        if kind == "user":
            self._user(rec, message)
        else:
            self._assistant(rec, message)

    def _user(self, rec: Record, message: Mapping[str, Any]) -> None:
        at = rec.at()
        content = message.get("content")
        if rec.data.get("isCompactSummary"):
            self.history.append(Item("user", "summary", content_text(content)))
            return
        if isinstance(content, str):
            self.history.append(Item("user", "text", content))
            if not rec.data.get("isMeta"):
                self.transcript.entries.append(TurnStart(at, content))
            return
        if not isinstance(content, list):
            raise rec.fail(f"message.content: expected a string or a list, found {kind(content)}")
        texts: list[str] = []
        for part in iter_items(content):
            ptype = part.get("type")
            if ptype == "text":
                text = _text(part, rec)
                texts.append(text)
                self.history.append(Item("user", "text", text))
            elif ptype == "tool_result":
                self._tool_result(rec, at, part)
            elif ptype in ("image", "document"):
                self.history.append(Item("user", str(ptype), f"[{ptype}]"))
        if (
            texts
            and not rec.data.get("isMeta")
            and not any(p.get("type") == "tool_result" for p in iter_items(content))
        ):
            self.transcript.entries.append(TurnStart(at, "\n".join(texts)))

    def _tool_result(self, rec: Record, at: datetime, part: Mapping[str, Any]) -> None:
        use_id = part.get("tool_use_id")
        name, tool_input = self.tool_uses.get(use_id if isinstance(use_id, str) else "", ("", ""))
        output = content_text(part.get("content"))
        self.history.append(Item("user", "tool_result", output, name))
        agent_id = None
        if name in TASK_TOOLS:
            result = rec.data.get("toolUseResult")
            if isinstance(result, Mapping) and isinstance(result.get("agentId"), str):
                agent_id = result["agentId"]
            elif m := _AGENT_ID.search(output):
                agent_id = m.group(1)
        self.transcript.entries.append(ToolDone(at, name or "tool", tool_input, output, agent_id))

    def _assistant(self, rec: Record, message: Mapping[str, Any]) -> None:
        model = message.get("model")
        if model == SYNTHETIC:
            return
        if not isinstance(model, str) or not model:
            raise rec.fail(f"message.model: expected the model name, found {kind(model)}")
        at = rec.at()
        # Claude Code writes one record per content block; they share the requestId.
        key = next(
            (v for v in (rec.data.get("requestId"), message.get("id")) if isinstance(v, str)),
            f"line {rec.line}",
        )
        request = self.open_requests.get(key)
        if request is None:
            request = Request(at, model, list(self.history), label=self.pending_label)
            self.pending_label = None
            self.open_requests[key] = request
            self.transcript.entries.append(request)
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for part in iter_items(content):
            item = self._assistant_item(rec, part)
            if item is not None:
                request.output.append(item)
                self.history.append(item)
        raw_usage = message.get("usage")
        if isinstance(raw_usage, Mapping):
            new = anthropic_usage(raw_usage)
            if request.usage is not None:  # streamed records: the last carries the final output
                new["output"] = max(new["output"], request.usage["output"])
            request.usage = new

    def _assistant_item(self, rec: Record, part: Mapping[str, Any]) -> Item | None:
        ptype = part.get("type")
        if ptype == "text":
            return Item("assistant", "text", _text(part, rec))
        if ptype == "tool_use":
            name = part.get("name")
            if not isinstance(name, str):
                raise rec.fail(f"tool_use.name: expected a string, found {kind(name)}")
            tool_input = json_text(part.get("input", {}))
            if isinstance(part.get("id"), str):
                self.tool_uses[part["id"]] = (name, tool_input)
            body = {"type": "tool_use", "id": part.get("id"), "name": name}
            return Item(
                "assistant", "tool_use", json_text({**body, "input": part.get("input")}), name
            )
        # Thinking is omitted: the API drops earlier turns' thinking from the prompt.
        return None


def _opt_str(rec: Record, key: str) -> str | None:
    value = rec.data.get(key)
    return value if isinstance(value, str) and value else None


def _text(part: Mapping[str, Any], rec: Record) -> str:
    text = part.get("text")
    if not isinstance(text, str):
        raise rec.fail(f"text block: expected a string in text, found {kind(text)}")
    return text


def read_transcript(path: Path, skipped: Skipped, *, sidechains: bool = True) -> list[Transcript]:
    """The main conversation first, then inline sidechains grouped by ``agentId``."""
    main = _Reader(Transcript(str(path)))
    inline: dict[str, _Reader] = {}
    for rec in read_jsonl(path, skipped):
        if sidechains and rec.data.get("isSidechain") is True:
            aid = _opt_str(rec, "agentId") or "sidechain"
            inline.setdefault(aid, _Reader(Transcript(str(path), agent_id=aid))).read(rec)
        else:
            main.read(rec)
    return [main.transcript] + [r.transcript for r in inline.values()]


def subagent_files(path: Path, folder: Path | None) -> list[Path]:
    """``--subagents DIR``, else ``<stem>/subagents/`` or ``subagents/`` beside the file."""
    candidates = (
        [folder]
        if folder is not None
        else [
            path.parent / path.stem / "subagents",
            path.parent / "subagents",
        ]
    )
    for d in candidates:
        if d.is_dir():
            # agent-acompact-* files are Claude Code's own compaction calls, not subagents.
            return sorted(p for p in d.glob("agent-*.jsonl") if "acompact" not in p.name)
    if folder is not None:
        raise ImporterError(str(folder), "--subagents: expected a folder of agent-*.jsonl files")
    return []


def _finish(t: Transcript, count: TokenCount) -> Transcript:
    t.prefix = infer_prefix([(r.usage, r.history) for r in t.requests], count)
    return t


@dataclass
class _Emitter:
    events: Events
    model: str
    main_model: str
    unlinked: list[Transcript]

    def request(self, t: Transcript, r: Request, who: str) -> str:
        label = r.label
        if r.model != self.model:
            # The profile follows every request's model (caches are per model), but only
            # the main agent changing its own model is labelled a switch: a subagent
            # running on another model, and the return from it, are not.
            self.events.add("change", r.at, model=r.model)
            self.model = r.model
        if not who:
            if r.model != self.main_model:
                label = label or "model-switch"
            self.main_model = r.model
        blocks = [unrecorded_block(t.prefix, who), *history_blocks(r.history)]
        blocks[-1]["breakpoint"] = True  # Claude Code marks the tail of every request
        output = "\n".join(
            i.text if i.kind == "text" else f"[{i.kind} {i.label}]" for i in r.output
        )
        self.events.add(
            "llm",
            r.at,
            label=self.events.unique_label(label) if label else None,
            output=output,
            usage=r.usage,
            request={"blocks": blocks},
        )
        return next((i.text for i in reversed(r.output) if i.kind == "text"), "")

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
    emit = _Emitter(events, requests[0].model, requests[0].model, unlinked)
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


def import_claude_code(path: Path, count: TokenCount, *, subagents: Path | None = None) -> Imported:
    skipped = Skipped()
    main, *inline = read_transcript(path, skipped)
    subs = inline + [
        t
        for f in subagent_files(path, subagents)
        for t in read_transcript(f, skipped, sidechains=False)
    ]
    for t in (main, *subs):
        _finish(t, count)
        if t is not main and t.agent_id is None:
            t.agent_id = Path(t.source).stem.removeprefix("agent-")
    requests = main.requests
    if not requests:
        raise no_requests(str(path), "assistant records with message.model and message.usage")
    events = _emit(main, subs)
    environment: dict[str, Any] = {"harness": "Claude Code"}
    if main.cwd:
        environment["cwd"] = main.cwd
    if main.git_branch is not None:
        environment["git_repo"] = bool(main.git_branch)
    data = session_doc(
        id=main.session_id or path.stem,
        agent=AGENT,
        provider="anthropic",
        model=requests[0].model,
        environment=environment,
        events=events.events,
        title=main.title,
    )
    return Imported(data, skipped.warnings(str(path)))
