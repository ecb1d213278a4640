"""A rollout's records read into entries: turns, requests with the history they sent and the
usage billed for them, and tool calls.

**Usage.** A ``token_count`` event carries the last response's ``last_token_usage``; Codex
writes it again, unchanged, after each ``turn_context`` (0.57–0.58: every usage appears
twice), so a count whose totals repeat the previous one's is the same response. Where it
stands depends on the version: before the response's items (0.57–0.58) or after them
(0.125). A new count belongs to the latest response still without usage, else (every
response so far is billed) to the next one.

**History.** Every input item and every response item is sent back, in order, except:
reasoning items leave the input at a new user turn (the request is labelled
``reasoning-dropped``: on the corpus the billed input shrinks by their size there and the
read ends before the first of them); ghost snapshots are never sent. A response that runs
a hosted tool (web search) continues after its results: what it billed as input is the
history, the items before the call and the results, so those items are part of its
request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from assembler.limits import kind_of
from assembler.sessions.importers.codex.items import (
    HOSTED_ITEMS,
    OUTPUT_ITEMS,
    RESULT_ITEMS,
    Count,
    call_input,
    call_name,
    framed,
    history_item,
    images,
)
from assembler.sessions.importers.history import (
    Entry,
    Item,
    Request,
    ToolDone,
    TurnStart,
    content_text,
)
from assembler.sessions.importers.records import (
    ImporterError,
    Record,
    as_int,
    iter_items,
    openai_usage,
)
from assembler.sessions.importers.shared_history import History, HistoryList

REASONING_DROPPED = "reasoning-dropped"


@dataclass
class Response:
    """A request and what its response's usage says of its reasoning."""

    request: Request
    reasoning: list[Item] = field(default_factory=list)  # its reasoning items
    reasoning_tokens: int = 0
    since_hosted: list[Item] = field(default_factory=list)  # its items since a hosted call

    def size_reasoning(self) -> None:
        """The response's reasoning items share its ``reasoning_output_tokens`` (their text
        is encrypted); within the turn they are sent back."""
        for item in self.reasoning:
            if item.hidden is not None:  # it holds its summary and framing until now
                item.hidden.tokens += self.reasoning_tokens // len(self.reasoning)


@dataclass
class Reader:
    """Reads a rollout record by record (``read``), then ``finish`` sizes the reasoning."""

    count: Count
    entries: list[Entry] = field(default_factory=list)
    responses: list[Response] = field(default_factory=list)
    history: HistoryList = field(default_factory=HistoryList)
    reasoning_from: int | None = None  # see ``_first_reasoning``
    reasoning_of: HistoryList | None = None
    model: str = ""
    open: Response | None = None
    calls: dict[str, tuple[str, str]] = field(default_factory=dict)  # call_id → (name, input)
    previous_total: dict[str, int] | None = None
    last_count: tuple[Any, Any] | None = None  # the last token_count's (total, last)
    pending: tuple[dict[str, int], int] | None = None  # a usage waiting for its response
    pending_label: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    explicit_turns: bool = False
    user_items: list[tuple[datetime, str]] = field(default_factory=list)
    last_input: datetime | None = None  # the input item that completed the next request
    saw_usage: bool = False
    legacy: bool = True  # no truncation policy recorded: outputs are cut as Codex 0.58 did

    def read(self, rec: Record) -> None:
        rtype = rec.data.get("type")
        if rtype not in ("session_meta", "turn_context", "response_item", "event_msg", "compacted"):
            return
        payload = rec.get_map("payload")
        at = rec.at()
        if rtype == "session_meta":
            self.meta = dict(payload)
            self.model = self.model or _name(payload.get("model"))
        elif rtype == "turn_context":
            self._model(payload)
            if "truncation_policy" in payload:
                self.legacy = False
            if isinstance(payload.get("cwd"), str):
                self.meta.setdefault("cwd", payload["cwd"])
        elif rtype == "compacted":
            self._compacted(payload)
        elif rtype == "event_msg":
            self._event(rec, at, payload)
        else:
            self._item(rec, at, payload)

    def _compacted(self, payload: Mapping[str, Any]) -> None:
        # Compaction rewrites the history: the replacement (or the summary) is all that stays.
        self.open = None
        replacement = payload.get("replacement_history")
        self.history = HistoryList()
        if isinstance(replacement, list):
            for item in iter_items(replacement):
                got = history_item(item, self.count, self.legacy)
                if got is not None:
                    self.history.append(got)
        else:
            summary = Item("user", "summary", content_text(payload.get("message")))
            self.history.append(framed(summary, self.count))
        self.pending_label = "compaction"

    def _event(self, rec: Record, at: datetime, payload: Mapping[str, Any]) -> None:
        etype = payload.get("type")
        if etype == "session_configured":
            self._model(payload)
        elif etype == "user_message":
            self.open = None
            self.explicit_turns = True
            k = self._first_reasoning()
            if k is not None:
                rest = [i for i in self.history[k:] if i.kind != "reasoning"]
                self.history = HistoryList([*self.history[:k], *rest])
                self.reasoning_of, self.reasoning_from = self.history, None
                self.pending_label = self.pending_label or REASONING_DROPPED
            self.entries.append(TurnStart(at, content_text(payload.get("message"))))
        elif etype == "token_count":
            info = payload.get("info")
            if info is None:
                return  # emitted before any usage is known (rate limits only)
            if not isinstance(info, Mapping):
                raise rec.fail(f"payload.info: expected an object or null, found {kind_of(info)}")
            self._count(info)

    def _count(self, info: Mapping[str, Any]) -> None:
        seen = (info.get("total_token_usage"), info.get("last_token_usage"))
        if seen == self.last_count:
            return  # the same response's count written again
        self.last_count = seen
        usage = self._usage(info)
        if usage is None:
            return
        last = info.get("last_token_usage")
        reasoning = as_int(last.get("reasoning_output_tokens")) if isinstance(last, Mapping) else 0
        self.saw_usage = True
        last_response = self.responses[-1] if self.responses else None
        if last_response is not None and last_response.request.usage is None:
            self._bill(last_response, usage, reasoning)
        else:
            self.pending = (usage, reasoning)
        self.open = None

    @staticmethod
    def _bill(response: Response, usage: dict[str, int], reasoning: int) -> None:
        response.request.usage = usage
        response.reasoning_tokens = reasoning

    def _usage(self, info: Mapping[str, Any]) -> dict[str, int] | None:
        last, total = info.get("last_token_usage"), info.get("total_token_usage")
        if isinstance(total, Mapping):
            total_now = {
                k: as_int(total.get(k))
                for k in ("input_tokens", "cached_input_tokens", "output_tokens")
            }
            if not isinstance(last, Mapping) and self.previous_total is not None:
                last = {k: v - self.previous_total[k] for k, v in total_now.items()}
            elif not isinstance(last, Mapping):
                last = total_now
            self.previous_total = total_now
        if not isinstance(last, Mapping):
            return None
        # Codex's input_tokens INCLUDES cached_input_tokens; output_tokens includes reasoning.
        return openai_usage(
            as_int(last.get("input_tokens")),
            as_int(last.get("cached_input_tokens")),
            0,
            as_int(last.get("output_tokens")),
        )

    def _item(self, rec: Record, at: datetime, payload: Mapping[str, Any]) -> None:
        itype = payload.get("type")
        item = history_item(payload, self.count, self.legacy)
        assistant_side = (
            itype == "message" and payload.get("role") == "assistant"
        ) or itype in OUTPUT_ITEMS
        if assistant_side or itype == "reasoning":
            response = self.open or self._open(rec, at)
            if item is not None:
                response.request.output.append(item)
                response.since_hosted.append(item)
                if item.kind == "reasoning":
                    response.reasoning.append(item)
        elif itype != "ghost_snapshot":
            self.open = None
            self.last_input = at
        if itype in OUTPUT_ITEMS and isinstance(payload.get("call_id"), str):
            self.calls[payload["call_id"]] = (call_name(payload), call_input(payload))
        if itype in RESULT_ITEMS:
            name, args = self.calls.get(str(payload.get("call_id")), ("tool", ""))
            self.entries.append(ToolDone(at, name, args, content_text(payload.get("output"))))
        if itype == "message" and payload.get("role") == "user" and item is not None:
            self.user_items.append((at, item.text))
        if item is not None:
            if item.kind == "reasoning" and self._first_reasoning() is None:
                self.reasoning_from = len(self.history)
            self.history.append(item)
            if itype == "message":
                self.history.extend(images(payload))
        if itype in HOSTED_ITEMS and self.open is not None:
            # the response read its results: what came before them is part of its input
            history = self.open.request.history
            assert isinstance(history, History)  # a view handed out by ``_open``
            history.extend(self.open.since_hosted)
            self.open.since_hosted = []

    def _first_reasoning(self) -> int | None:
        """Where the history's first reasoning item is (None: it holds none); found once
        per history, then kept as items are appended (a scan per turn would be n²)."""
        if self.reasoning_of is not self.history:  # a history rewritten: found again
            self.reasoning_of = self.history
            self.reasoning_from = next(
                (k for k, i in enumerate(self.history) if i.kind == "reasoning"), None
            )
        return self.reasoning_from

    def _open(self, rec: Record, at: datetime) -> Response:
        if not self.model:
            raise ImporterError(
                rec.source,
                "no turn_context record names the model (expected a line "
                '{"type": "turn_context", "payload": {"model": …}} before the first '
                "response_item)",
            )
        sent = self.last_input if self.last_input is not None else at
        request = Request(sent, self.model, self.history.view(), label=self.pending_label)
        self.pending_label = None
        response = Response(request)
        if self.pending is not None:
            self._bill(response, *self.pending)
            self.pending = None
        self.entries.append(request)
        self.responses.append(response)
        self.open = response
        return response

    def _model(self, payload: Mapping[str, Any]) -> None:
        self.model = _name(payload.get("model")) or self.model

    def finish(self) -> None:
        for response in self.responses:
            response.size_reasoning()


def _name(value: Any) -> str:
    return value if isinstance(value, str) and value else ""
