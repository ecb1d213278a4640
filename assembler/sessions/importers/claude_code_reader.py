"""Reading one Claude Code transcript: records → turns, requests and tool calls.

The conversation is a tree (``parentUuid``): rewinds and checkpoints start a new
branch from an earlier record, so the history of a request is the chain of its
ancestors, not every earlier line. See docs/importers.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from assembler.sessions.importers.hidden import Hidden, image_hidden, nested_hidden
from assembler.sessions.importers.history import (
    Entry,
    Item,
    Request,
    TokenCount,
    ToolDone,
    TurnStart,
    content_text,
    json_text,
)
from assembler.sessions.importers.records import (
    MAX_RECORD_BYTES,
    Record,
    anthropic_usage,
    anthropic_write_ttl,
    iter_items,
    kind,
)
from assembler.sessions.importers.request_cache import anthropic_diagnostic, service_tier

SYNTHETIC = "<synthetic>"  # locally made assistant messages (errors): never sent to the API
TASK_TOOLS = ("Task", "Agent")
THINKING_TEXT = "[thinking: its text is not recorded in the transcript]"
_AGENT_ID = re.compile(r"agentId:\s*([A-Za-z0-9_-]+)")
_BEDROCK_MODEL = re.compile(r"^(us|eu|apac|global)\.anthropic\.|^anthropic\.")


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
    hour: int = 0  # the prefix's part a bill mixing lifetimes wrote for an hour
    records: int = 0  # user / assistant records read
    sidechain_records: int = 0  # of which isSidechain: true

    @property
    def requests(self) -> list[Request]:
        return [e for e in self.entries if isinstance(e, Request)]

    @property
    def start(self) -> datetime | None:
        return self.entries[0].at if self.entries else None


def platform_of(message: Mapping[str, Any], model: str) -> str:
    """Who served a response: Bedrock and Vertex ids carry their prefix, and their model
    names their own spelling (``us.anthropic.…``, ``…@20250929``)."""
    mid = message.get("id")
    mid = mid if isinstance(mid, str) else ""
    if mid.startswith("msg_bdrk_") or _BEDROCK_MODEL.match(model):
        return "anthropic-bedrock"
    if mid.startswith("msg_vrtx_") or "@" in model:
        return "anthropic-vertex"
    return "anthropic"


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


@dataclass
class _Reader:
    """Walks one transcript's records in file order, keeping the history of the branch
    the latest record is on."""

    transcript: Transcript
    count: TokenCount
    thread: str = ""
    history: list[Item] = field(default_factory=list)
    open_requests: dict[str, Request] = field(default_factory=dict)
    tool_uses: dict[str, tuple[str, str]] = field(default_factory=dict)  # id → (name, input)
    pending_label: str | None = None
    last_input: datetime | None = None  # the record that completed the next request
    ttl: str | None = None  # the lifetime of the latest writes, for a request that wrote none
    # the tree: uuid → (parent uuid, history items the record added)
    nodes: dict[str, tuple[str | None, tuple[Item, ...]]] = field(default_factory=dict)
    tip: str | None = None
    turn_of: dict[int, str] = field(default_factory=dict)  # id(assistant item) → its request

    def read(self, rec: Record) -> None:
        rtype = rec.data.get("type")
        t = self.transcript
        if rtype == "summary" and isinstance(rec.data.get("summary"), str):
            t.title = t.title or rec.data["summary"]
            return
        uuid = _opt_str(rec, "uuid")
        if rtype not in ("user", "assistant", "system"):
            if uuid:  # progress, attachments: links of the chain, adding nothing
                self._follow(rec, uuid, ())
            return
        t.session_id = t.session_id or _opt_str(rec, "sessionId")
        t.cwd = t.cwd or _opt_str(rec, "cwd")
        t.git_branch = t.git_branch if t.git_branch is not None else _opt_str(rec, "gitBranch")
        t.agent_id = t.agent_id or _opt_str(rec, "agentId")
        if rtype == "system":
            if rec.data.get("subtype") == "compact_boundary":
                # Compaction rewrites the history: later requests start from the summary.
                self.history = []
                self.open_requests.clear()
                self.pending_label = "compaction"
                self.tip = None
                if uuid:
                    self.nodes[uuid] = (None, ())
                    self.tip = uuid
            elif uuid:
                self._follow(rec, uuid, ())
            return
        t.records += 1
        t.sidechain_records += rec.data.get("isSidechain") is True
        message = rec.get_map("message")
        start = len(self.history)
        if rtype == "user":
            self._branch(rec)
            self._user(rec, message)
            added = tuple(self.history[start:])
        else:
            added = self._assistant(rec, message)
        if uuid:
            self.nodes[uuid] = (_opt_str(rec, "parentUuid"), added)
            self.tip = uuid

    def _follow(self, rec: Record, uuid: str, items: tuple[Item, ...]) -> None:
        self.nodes[uuid] = (_opt_str(rec, "parentUuid"), items)
        self.tip = uuid

    def _branch(self, rec: Record) -> None:
        """A user record whose parent is not the latest record continues an earlier point:
        the history becomes the chain of its ancestors (a rewind drops what followed)."""
        parent = _opt_str(rec, "parentUuid")
        if parent is None or parent == self.tip or parent not in self.nodes:
            return
        chain: list[tuple[Item, ...]] = []
        node: str | None = parent
        seen: set[str] = set()
        while node is not None and node in self.nodes and node not in seen:
            seen.add(node)
            up, items = self.nodes[node]
            chain.append(items)
            node = up
        history: list[Item] = []
        for items in reversed(chain):
            for item in items:
                _place(history, item, self.turn_of.get(id(item)), self.turn_of)
        if len(history) < len(self.history):
            self.history = history
            self.pending_label = self.pending_label or "branch"

    def _user(self, rec: Record, message: Mapping[str, Any]) -> None:
        at = rec.at()
        self.last_input = at
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
            elif ptype == "image":
                self.history.append(Item("user", "image", "[image]", hidden=image_hidden(part)))
            elif ptype == "document":
                self.history.append(Item("user", "document", "[document]", hidden=Hidden()))
        if (
            texts
            and not rec.data.get("isMeta")
            and not any(p.get("type") == "tool_result" for p in iter_items(content))
        ):
            self.transcript.entries.append(TurnStart(at, "\n".join(texts)))

    def _tool_result(self, rec: Record, at: datetime, part: Mapping[str, Any]) -> None:
        use_id = part.get("tool_use_id")
        use_id = use_id if isinstance(use_id, str) else ""
        name, tool_input = self.tool_uses.get(use_id, ("", ""))
        content = part.get("content")
        output = content_text(content)
        hidden = nested_hidden(content, self.count)
        self.history.append(Item("user", "tool_result", output, name, hidden, use_id))
        agent_id = None
        if name in TASK_TOOLS:
            result = rec.data.get("toolUseResult")
            if isinstance(result, Mapping) and isinstance(result.get("agentId"), str):
                agent_id = result["agentId"]
            elif m := _AGENT_ID.search(output):
                agent_id = m.group(1)
        self.transcript.entries.append(ToolDone(at, name or "tool", tool_input, output, agent_id))

    def _assistant(self, rec: Record, message: Mapping[str, Any]) -> tuple[Item, ...]:
        model = message.get("model")
        if model == SYNTHETIC:
            return ()
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
            marker = _call_order(self.history)
            # sent when its last input was recorded, not when the answer began to stream
            sent = self.last_input if self.last_input is not None and self.last_input <= at else at
            request = Request(
                sent,
                model,
                list(self.history),
                label=self.pending_label,
                marker=marker,
                platform=platform_of(message, model),
                thread=self.thread,
            )
            self.pending_label = None
            self.open_requests[key] = request
            self.transcript.entries.append(request)
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        added: list[Item] = []
        for part in iter_items(content):
            item = self._assistant_item(rec, part)
            if item is not None:
                request.output.append(item)
                added.append(item)
                self.turn_of[id(item)] = key
                _place(self.history, item, key, self.turn_of)
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
        return tuple(added)

    def _assistant_item(self, rec: Record, part: Mapping[str, Any]) -> Item | None:
        ptype = part.get("type")
        if ptype == "text":
            return Item("assistant", "text", _text(part, rec))
        if ptype == "tool_use":
            name = part.get("name")
            if not isinstance(name, str):
                raise rec.fail(f"tool_use.name: expected a string, found {kind(name)}")
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


def _place(history: list[Item], item: Item, key: str | None, turn_of: dict[int, str]) -> None:
    """Append ``item``; a block of a response whose tools ran while it streamed goes before
    the results recorded in between: the API takes all of one message's tool_use blocks,
    then their results in the next message."""
    k = len(history)
    while k > 0 and history[k - 1].kind == "tool_result":
        k -= 1
    if key is not None and 0 < k < len(history) and turn_of.get(id(history[k - 1])) == key:
        history.insert(k, item)
    else:
        history.append(item)


def _call_order(history: list[Item]) -> int | None:
    """Put the trailing tool results back in call order (the client sends them so; the
    transcript records them as they finished) and return the index of the one recorded
    last, which carries the cache marker; ``None`` when the history does not end in
    results out of order."""
    end = len(history)
    start = end
    while start > 0 and history[start - 1].kind == "tool_result":
        start -= 1
    if end - start < 2:
        return None
    calls = {item.use_id: k for k, item in enumerate(history[:start]) if item.kind == "tool_use"}
    results = history[start:]
    ordered = sorted(results, key=lambda i: calls.get(i.use_id, len(calls)))
    if ordered == results:
        return None
    history[start:] = ordered
    return start + ordered.index(results[-1])


def _opt_str(rec: Record, key: str) -> str | None:
    value = rec.data.get(key)
    return value if isinstance(value, str) and value else None


def _text(part: Mapping[str, Any], rec: Record) -> str:
    text = part.get("text")
    if not isinstance(text, str):
        raise rec.fail(f"text block: expected a string in text, found {kind(text)}")
    return text


def read_transcript(
    path: Path,
    records: list[Record],
    count: TokenCount,
    dropped: Dropped,
    *,
    sidechains: bool = True,
    thread: str = "",
) -> list[Transcript]:
    """The main conversation first, then inline sidechains grouped by ``agentId``, or
    without one by their own chain of ``parentUuid`` links."""
    main = _Reader(Transcript(str(path)), count, thread=thread)
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
