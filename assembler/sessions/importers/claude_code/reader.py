"""Reading one Claude Code transcript: records → turns, requests and tool calls.

The conversation is a tree (``parentUuid``): rewinds and checkpoints start a new
branch from an earlier record, so the history of a request is the chain of its
ancestors, not every earlier line. See docs/importers.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from assembler.limits import kind_of
from assembler.sessions.importers.claude_code.transcript import (
    Dropped,
    Mark,
    Transcript,
)
from assembler.sessions.importers.hidden import Hidden, image_hidden, nested_hidden
from assembler.sessions.importers.history import (
    Item,
    Request,
    TokenCount,
    ToolDone,
    TurnStart,
    content_text,
    json_text,
)
from assembler.sessions.importers.records import (
    Record,
    anthropic_usage,
    anthropic_write_ttl,
    iter_items,
    platform_of,
)
from assembler.sessions.importers.request_cache import anthropic_diagnostic, service_tier
from assembler.sessions.importers.shared_history import HistoryList

SYNTHETIC = "<synthetic>"  # locally made assistant messages (errors): never sent to the API
TASK_TOOLS = ("Task", "Agent")
THINKING_TEXT = "[thinking: its text is not recorded in the transcript]"
# A background task's notification, delivered as the prompt of a new turn. The client then
# re-sends the conversation rewritten from its first message: in every such request of
# the real transcripts we checked, the bill reads the system prompt and nothing after it.
TASK_NOTIFICATION = "<task-notification>"
# An MCP server reconnected (``/mcp``): the client lists its tools again, after the built-in
# ones, so the tool definitions change from there on.
MCP_RECONNECTED = "<local-command-stdout>Reconnected to "
_AGENT_ID = re.compile(r"agentId:\s*([A-Za-z0-9_-]+)")


@dataclass
class _Reader:
    """Walks one transcript's records in file order, keeping the history as the client
    sends it: each response's blocks in the order they streamed, then its tool results in
    the order of their tool uses, then what the user added."""

    transcript: Transcript
    count: TokenCount
    thread: str = ""
    history: HistoryList = field(default_factory=HistoryList)
    open_requests: dict[str, Request] = field(default_factory=dict)
    tool_uses: dict[str, tuple[str, str]] = field(default_factory=dict)  # id → (name, input)
    pending_label: str | None = None
    last_input: datetime | None = None  # the record that completed the next request
    ttl: str | None = None  # the lifetime of the latest writes, for a request that wrote none
    latest: str | None = None  # the latest conversational record
    # A compaction call's file re-emits only its own prompt: its history is the main
    # conversation's where that prompt's parent stands.
    base: Transcript | None = None
    base_at: str | None = None
    rewrites: int = 0  # how often the client re-sent the conversation rewritten
    retools: int = 0  # how often the client listed its tools again
    # The response still streaming: its key, where its blocks end, its tool uses' order.
    response: str | None = None
    response_end: int = 0
    call_order: dict[str, int] = field(default_factory=dict)
    last_result: Item | None = None  # the tool result recorded last

    def read(self, rec: Record) -> None:
        rtype = rec.data.get("type")
        t = self.transcript
        if rtype == "summary" and isinstance(rec.data.get("summary"), str):
            t.title = t.title or rec.data["summary"]
            return
        uuid = _opt_str(rec, "uuid")
        if uuid is not None and self.base is not None and uuid in self.base.marks:
            return  # a record of the conversation itself, written again beside the call
        if rtype not in ("user", "assistant", "system"):
            if uuid:  # progress, attachments: links of the chain, adding nothing
                self.links[uuid] = _opt_str(rec, "parentUuid")
            return
        t.session_id = t.session_id or _opt_str(rec, "sessionId")
        t.cwd = t.cwd or _opt_str(rec, "cwd")
        t.git_branch = t.git_branch if t.git_branch is not None else _opt_str(rec, "gitBranch")
        t.agent_id = t.agent_id or _opt_str(rec, "agentId")
        if rtype == "system":
            if rec.data.get("subtype") == "compact_boundary":
                # Compaction rewrites the history: later requests start from the summary.
                self.history = HistoryList()
                self.open_requests.clear()
                self.response = None
                self.pending_label = "compaction"
                if uuid:
                    self._mark(uuid)
            elif uuid:
                self.links[uuid] = _opt_str(rec, "parentUuid")
            return
        t.records += 1
        t.sidechain_records += rec.data.get("isSidechain") is True
        message = rec.get_map("message")
        if rtype == "user":
            self._user(rec, message)
        elif not self._assistant(rec, message):
            if uuid:  # a message the client made itself (an error): a link, never sent
                self.links[uuid] = _opt_str(rec, "parentUuid")
            return
        if uuid:
            self._mark(uuid)

    @property
    def marks(self) -> dict[str, Mark]:
        return self.transcript.marks

    @property
    def links(self) -> dict[str, str | None]:
        return self.transcript.links

    def _mark(self, uuid: str) -> None:
        self.marks[uuid] = Mark(self.history, len(self.history), self.rewrites)
        self.latest = uuid

    def _conversational_parent(self, rec: Record) -> str | None:
        return _through_links(_opt_str(rec, "parentUuid"), self.links)

    def _branch(self, rec: Record) -> None:
        """A new prompt whose parent is not the latest conversational record continues an
        earlier point (a rewind or an edit): the history becomes what it was there. A tool
        result attached to its own tool use is no branch, nor are the progress and hook
        records between them."""
        parent = self._conversational_parent(rec)
        if parent is None or parent == self.latest or parent not in self.marks:
            return
        mark = self.marks[parent]
        self.history = HistoryList(mark.items[: mark.length])
        self.response = None
        self.pending_label = self.pending_label or "branch"

    def _user(self, rec: Record, message: Mapping[str, Any]) -> None:
        at = rec.at()
        self.last_input = at
        content = message.get("content")
        if rec.data.get("isCompactSummary"):
            self._append(Item("user", "summary", content_text(content)))
            return
        if self.base is not None:
            parent = _through_links(_opt_str(rec, "parentUuid"), self.base.links)
            if parent in self.base.marks:
                self.base_at = parent
        if isinstance(content, str):
            self._branch(rec)
            if content.startswith(TASK_NOTIFICATION):
                self.rewrites += 1
                self.pending_label = self.pending_label or "task-notification"
            elif content.startswith(MCP_RECONNECTED):
                self.retools += 1
                self.pending_label = self.pending_label or "tools-changed"
            self._append(Item("user", "text", content))
            if not rec.data.get("isMeta"):
                self.transcript.entries.append(TurnStart(at, content))
            return
        if not isinstance(content, list):
            raise rec.fail(
                f"message.content: expected a string or a list, found {kind_of(content)}"
            )
        parts = list(iter_items(content))
        results = any(p.get("type") == "tool_result" for p in parts)
        if not results:
            self._branch(rec)
        texts: list[str] = []
        for part in parts:
            ptype = part.get("type")
            if ptype == "text":
                text = _text(part, rec)
                texts.append(text)
                self._append(Item("user", "text", text))
            elif ptype == "tool_result":
                self._tool_result(rec, at, part)
            elif ptype == "image":
                self._append(Item("user", "image", "[image]", hidden=image_hidden(part)))
            elif ptype == "document":
                self._append(Item("user", "document", "[document]", hidden=Hidden()))
        if texts and not rec.data.get("isMeta") and not results:
            self.transcript.entries.append(TurnStart(at, "\n".join(texts)))

    def _append(self, item: Item) -> None:
        """A user block after the response: the response is over."""
        self.history.append(item)
        self.response = None

    def _tool_result(self, rec: Record, at: datetime, part: Mapping[str, Any]) -> None:
        use_id = part.get("tool_use_id")
        use_id = use_id if isinstance(use_id, str) else ""
        name, tool_input = self.tool_uses.get(use_id, ("", ""))
        content = part.get("content")
        output = content_text(content)
        hidden = nested_hidden(content, self.count)
        item = Item("user", "tool_result", output, name, hidden, use_id)
        order = self.call_order.get(use_id) if self.response is not None else None
        if order is None:
            self._append(item)
        else:
            # the results of one response follow its blocks, in the order of its tool uses
            # (the transcript records them as they finished)
            k = self.response_end
            while k < len(self.history) and self._after(self.history[k], order):
                k += 1
            self.history.insert(k, item)
        self.last_result = item
        agent_id = None
        if name in TASK_TOOLS:
            result = rec.data.get("toolUseResult")
            if isinstance(result, Mapping) and isinstance(result.get("agentId"), str):
                agent_id = result["agentId"]
            elif m := _AGENT_ID.search(output):
                agent_id = m.group(1)
        self.transcript.entries.append(ToolDone(at, name or "tool", tool_input, output, agent_id))

    def _after(self, placed: Item, order: int) -> bool:
        """Whether a result already placed comes before one of call position ``order``."""
        return placed.kind == "tool_result" and self.call_order.get(placed.use_id, -1) < order

    def _assistant(self, rec: Record, message: Mapping[str, Any]) -> bool:
        model = message.get("model")
        if model == SYNTHETIC:
            return False
        if not isinstance(model, str) or not model:
            raise rec.fail(f"message.model: expected the model name, found {kind_of(model)}")
        at = rec.at()
        # Claude Code writes one record per content block; they share the requestId.
        key = next(
            (v for v in (rec.data.get("requestId"), message.get("id")) if isinstance(v, str)),
            f"line {rec.line}",
        )
        request = self.open_requests.get(key)
        if request is None:
            # sent when its last input was recorded, not when the answer began to stream
            sent = self.last_input if self.last_input is not None and self.last_input <= at else at
            history: Sequence[Item] = self.history.view()
            rewrites = self.rewrites
            if self.base is not None and self.base_at is not None:
                mark = self.base.marks[self.base_at]
                history = [*mark.items[: mark.length], *history]
                rewrites += mark.rewrites
            request = Request(
                sent,
                model,
                history,
                label=self.pending_label,
                platform=platform_of(message, model),
                thread=self.thread,
                marker=_marker(history, self.last_result),
                rewrites=rewrites,
                retools=self.retools,
            )
            self.pending_label = None
            self.open_requests[key] = request
            self.transcript.entries.append(request)
        if key != self.response:
            self.response, self.response_end = key, len(self.history)
            self.call_order = {}
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for part in iter_items(content):
            item = self._assistant_item(rec, part)
            if item is not None:
                request.output.append(item)
                # a block streamed after tools of its response ran goes before their results
                self.history.insert(self.response_end, item)
                self.response_end += 1
                if item.kind == "tool_use":
                    self.call_order[item.use_id] = len(self.call_order)
        diagnostics = message.get("diagnostics")
        if isinstance(diagnostics, Mapping):  # the client asked for the provider's verdict
            request.diagnostic = anthropic_diagnostic(diagnostics)
        raw_usage = message.get("usage")
        if isinstance(raw_usage, Mapping):
            new = anthropic_usage(raw_usage)
            if request.usage is not None:  # streamed records: the last carries the final output
                new["output"] = max(new["output"], request.usage["output"])
                if searches := max(
                    new.get("web_searches", 0), request.usage.get("web_searches", 0)
                ):
                    new["web_searches"] = searches
            request.usage = new
            self.ttl = anthropic_write_ttl(raw_usage) or self.ttl
            request.ttl = self.ttl
            request.service_tier = service_tier(raw_usage.get("service_tier"))
        return True

    def _assistant_item(self, rec: Record, part: Mapping[str, Any]) -> Item | None:
        ptype = part.get("type")
        if ptype == "text":
            return Item("assistant", "text", _text(part, rec))
        if ptype == "tool_use":
            name = part.get("name")
            if not isinstance(name, str):
                raise rec.fail(f"tool_use.name: expected a string, found {kind_of(name)}")
            tool_input = json_text(part.get("input", {}))
            raw_id = part.get("id")
            use_id = raw_id if isinstance(raw_id, str) else ""
            if use_id:
                self.tool_uses[use_id] = (name, tool_input)
            body = {"type": "tool_use", "id": part.get("id"), "name": name}
            return Item(
                "assistant",
                "tool_use",
                json_text({**body, "input": part.get("input")}),
                name,
                use_id=use_id,
            )
        if ptype in ("thinking", "redacted_thinking"):
            # Sent back with the turn it belongs to; its text is empty or signed away, so
            # its size comes from the billed growth.
            return Item("assistant", "thinking", THINKING_TEXT, hidden=Hidden())
        return None


def _through_links(parent: str | None, links: Mapping[str, str | None]) -> str | None:
    """The nearest conversational record at or above ``parent``."""
    seen: set[str] = set()
    while parent is not None and parent in links and parent not in seen:
        seen.add(parent)
        parent = links[parent]
    return parent


def _marker(history: Sequence[Item], last: Item | None) -> Item | None:
    """Where the client puts the tail cache marker when the history ends in tool results
    that finished out of call order: on the result recorded last (it is sent in call
    order, and the bill leaves the results after it uncached). ``None``: the last item."""
    if last is None or not history or history[-1] is last:
        return None
    k = len(history) - 1
    while k >= 0 and history[k].kind == "tool_result":
        if history[k] is last:
            return last
        k -= 1
    return None


def _opt_str(rec: Record, key: str) -> str | None:
    value = rec.data.get(key)
    return value if isinstance(value, str) and value else None


def _text(part: Mapping[str, Any], rec: Record) -> str:
    text = part.get("text")
    if not isinstance(text, str):
        raise rec.fail(f"text block: expected a string in text, found {kind_of(text)}")
    return text


def read_transcript(
    path: Path,
    records: list[Record],
    count: TokenCount,
    dropped: Dropped,
    *,
    sidechains: bool = True,
    thread: str = "",
    base: Transcript | None = None,
) -> list[Transcript]:
    """The main conversation first, then inline sidechains grouped by ``agentId``, or
    without one by their own chain of ``parentUuid`` links."""
    main = _Reader(Transcript(str(path)), count, thread=thread, base=base)
    inline: dict[str, _Reader] = {}
    seen: set[str] = set()
    chains: dict[str, str] = {}  # sidechain record uuid → its sidechain, when no agentId
    for rec in records:
        uuid = _opt_str(rec, "uuid")
        if uuid is not None:
            # a record written twice would repeat its content blocks in the history
            if uuid in seen:
                dropped.repeat(str(path), rec.line)
                continue
            seen.add(uuid)
        if sidechains and rec.data.get("isSidechain") is True:
            aid = _opt_str(rec, "agentId") or _chain(rec, chains, inline)
            reader = inline.get(aid)
            if reader is None:
                reader = inline[aid] = _Reader(Transcript(str(path), agent_id=aid), count, aid)
            reader.read(rec)
        else:
            main.read(rec)
    return [main.transcript] + [r.transcript for r in inline.values()]


def _chain(rec: Record, chains: dict[str, str], inline: Mapping[str, _Reader]) -> str:
    """The sidechain a record without ``agentId`` belongs to: its parent's; a new one at a
    root (no parent), so parallel subagents written interleaved stay apart."""
    parent = _opt_str(rec, "parentUuid")
    group = chains.get(parent or "")
    if group is None:
        unnamed = [k for k in inline if k == "sidechain" or k.startswith("sidechain-")]
        if parent is None or not unnamed:
            group = f"sidechain-{len(unnamed) + 1}" if unnamed else "sidechain"
        else:  # linked to a record outside the sidechains: the latest one
            group = unnamed[-1]
    uuid = _opt_str(rec, "uuid")
    if uuid is not None:
        chains[uuid] = group
    return group
