"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``. Read: ``session_meta`` (id,
cwd, model_provider, git), ``turn_context`` (model), ``response_item``
(``message``, ``function_call`` / ``function_call_output``,
``custom_tool_call`` / ``custom_tool_call_output``, ``local_shell_call``,
``web_search_call``; ``reasoning`` is left out), ``event_msg`` (``user_message``
starts a turn, ``token_count`` closes a request with its usage) and
``compacted``. See docs/importers.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from assembler.sessions.importers.hidden import Hidden
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
    as_int,
    iter_items,
    kind,
    no_requests,
    openai_usage,
    read_jsonl,
)

AGENT = "codex"
ROOT = "codex_session"
OUTPUT_ITEMS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
RESULT_ITEMS = ("function_call_output", "custom_tool_call_output")


# Codex names a provider by its config id: Azure OpenAI serves OpenAI's models with
# OpenAI's prompt caching; these keep their own simulator.
_OWN_SIMULATOR = ("openai", "deepseek", "gemini")


def _provider(value: Any) -> tuple[str, tuple[str, ...]]:
    """The session's provider from ``model_provider``, and a warning when it is not the
    name the simulator knows it by."""
    if not isinstance(value, str) or not value:
        return "openai", ()
    name = value.strip().lower()
    if name in _OWN_SIMULATOR:
        return name, ()
    if "azure" in name:
        return "openai", (
            f"session_meta.model_provider {value[:80]!r} serves OpenAI's models: "
            "simulated with OpenAI's prompt caching (provider openai)",
        )
    return value[:200], (
        f"session_meta.model_provider {value[:80]!r} has no cache simulator: analyze "
        "with --provider and --model naming the cache that served it",
    )


@dataclass
class _Reader:
    entries: list[Entry] = field(default_factory=list)
    history: list[Item] = field(default_factory=list)
    model: str = ""
    open: Request | None = None
    awaiting: Request | None = None  # the last request still without usage
    calls: dict[str, tuple[str, str]] = field(default_factory=dict)  # call_id → (name, input)
    previous_total: dict[str, int] | None = None
    pending_label: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    explicit_turns: bool = False
    user_items: list[tuple[datetime, str]] = field(default_factory=list)
    last_input: datetime | None = None  # the input item that completed the next request
    reasoning: list[Item] = field(default_factory=list)  # the open response's reasoning items
    saw_usage: bool = False

    def read(self, rec: Record) -> None:
        rtype = rec.data.get("type")
        if rtype not in ("session_meta", "turn_context", "response_item", "event_msg", "compacted"):
            return
        payload = rec.get_map("payload")
        at = rec.at()
        if rtype == "session_meta":
            self.meta = dict(payload)
            self.model = self.model or self._name(payload.get("model"))
        elif rtype == "turn_context":
            self._model(payload)
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
        self._close()
        replacement = payload.get("replacement_history")
        self.history = []
        if isinstance(replacement, list):
            for item in iter_items(replacement):
                got = _history_item(item)
                if got is not None:
                    self.history.append(got)
        else:
            self.history.append(Item("user", "summary", content_text(payload.get("message"))))
        self.pending_label = "compaction"

    def _event(self, rec: Record, at: datetime, payload: Mapping[str, Any]) -> None:
        etype = payload.get("type")
        if etype == "session_configured":
            self._model(payload)
        elif etype == "user_message":
            self._close()
            self.explicit_turns = True
            # a new user turn: the previous turns' reasoning items leave the input
            self.history = [i for i in self.history if i.kind != "reasoning"]
            self.entries.append(TurnStart(at, content_text(payload.get("message"))))
        elif etype == "token_count":
            info = payload.get("info")
            if info is None:
                return  # emitted before any usage is known (rate limits only)
            if not isinstance(info, Mapping):
                raise rec.fail(f"payload.info: expected an object or null, found {kind(info)}")
            usage = self._usage(info)
            # The count may come after the tool output that closed the request.
            if self.awaiting is not None and usage is not None:
                self.awaiting.usage = usage
                self.awaiting = None
                self.saw_usage = True
                self._size_reasoning(info)
                self._close()

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
        item = _history_item(payload)
        assistant_side = (
            itype == "message" and payload.get("role") == "assistant"
        ) or itype in OUTPUT_ITEMS
        if assistant_side or itype == "reasoning":
            if self.open is None:
                if not self.model:
                    raise ImporterError(
                        rec.source,
                        "no turn_context record names the model (expected a line "
                        '{"type": "turn_context", "payload": {"model": …}} before the first '
                        "response_item)",
                    )
                sent = self.last_input if self.last_input is not None else at
                self.open = Request(sent, self.model, list(self.history), label=self.pending_label)
                self.pending_label = None
                self.entries.append(self.open)
                self.awaiting = self.open
            if item is not None:
                self.open.output.append(item)
                if item.kind == "reasoning":
                    self.reasoning.append(item)
        else:
            self._close()
            self.last_input = at
        if itype in OUTPUT_ITEMS and isinstance(payload.get("call_id"), str):
            self.calls[payload["call_id"]] = (_call_name(payload), _call_input(payload))
        if itype in RESULT_ITEMS:
            name, args = self.calls.get(str(payload.get("call_id")), ("tool", ""))
            self.entries.append(ToolDone(at, name, args, content_text(payload.get("output"))))
        if itype == "message" and payload.get("role") == "user" and item is not None:
            self.user_items.append((at, item.text))
        if item is not None:
            self.history.append(item)
            if itype == "message":
                self.history.extend(_images(payload))

    def _close(self) -> None:
        self.open = None

    def _model(self, payload: Mapping[str, Any]) -> None:
        self.model = self._name(payload.get("model")) or self.model

    @staticmethod
    def _name(value: Any) -> str:
        return value if isinstance(value, str) and value else ""

    def _size_reasoning(self, info: Mapping[str, Any]) -> None:
        """The response's reasoning items, sent back within the turn, share its
        ``reasoning_output_tokens`` (their text is encrypted)."""
        last = info.get("last_token_usage")
        tokens = as_int(last.get("reasoning_output_tokens")) if isinstance(last, Mapping) else 0
        for item in self.reasoning:
            if item.hidden is not None:
                item.hidden.tokens = tokens // len(self.reasoning)
        self.reasoning = []


#: Observed on Codex rollouts: an image in the history adds about 256 tokens to the input
#: (which the cached count leaves out); the rollout records only its URL.
IMAGE_TOKENS = 256


def _images(payload: Mapping[str, Any]) -> list[Item]:
    """One block per ``input_image`` of a message, sized rather than a placeholder; its
    text names the image (a hash of its URL), so a changed image is a changed block."""
    out = []
    for part in iter_items(payload.get("content")):
        if part.get("type") == "input_image":
            url = part.get("image_url")
            digest = hashlib.sha256(str(url).encode("utf-8")).hexdigest()[:16]
            how = f"about {IMAGE_TOKENS} tokens per image"
            out.append(
                Item(
                    "user",
                    "image",
                    f"[image {digest}]",
                    hidden=Hidden(IMAGE_TOKENS, how, sized=True),
                )
            )
    return out


def _call_name(payload: Mapping[str, Any]) -> str:
    name = payload.get("name")
    return name[:200] if isinstance(name, str) and name else str(payload.get("type"))


def _call_input(payload: Mapping[str, Any]) -> str:
    for key in ("arguments", "input", "action"):
        value = payload.get(key)
        if value is not None:
            return value if isinstance(value, str) else json_text(value)
    return ""


def _history_item(payload: Mapping[str, Any]) -> Item | None:
    """How an item is sent back as input; reasoning (encrypted) as a block of its size."""
    itype = payload.get("type")
    if itype == "reasoning":
        rid = payload.get("id")
        how = "its response's reasoning_output_tokens"
        return Item(
            "assistant",
            "reasoning",
            f"[reasoning {rid if isinstance(rid, str) else ''}: encrypted]",
            hidden=Hidden(0, how, sized=True),
        )
    if itype == "message":
        role = payload.get("role")
        what = "text" if role in ("user", "assistant") else str(role)
        content = payload.get("content")
        if isinstance(content, list):  # images become blocks of their own (see _images)
            content = [
                p
                for p in content
                if not (isinstance(p, Mapping) and p.get("type") == "input_image")
            ]
        return Item("assistant" if role == "assistant" else "user", what, content_text(content))
    if itype in OUTPUT_ITEMS:
        body = {k: v for k, v in payload.items() if k not in ("id", "status")}
        return Item("assistant", str(itype), json_text(body), _call_name(payload))
    if itype in RESULT_ITEMS:
        return Item("user", str(itype), content_text(payload.get("output")))
    return None


def import_codex(path: Path, count: TokenCount) -> Imported:
    skipped = Skipped()
    reader = _Reader()
    for rec in read_jsonl(path, skipped):
        reader.read(rec)
    requests = [e for e in reader.entries if isinstance(e, Request)]
    if not requests:
        raise no_requests(str(path), "response_item records after a turn_context with the model")
    entries = reader.entries
    if not reader.explicit_turns:
        # Older rollouts lack user_message events: a user message that is not
        # injected context (those start with "<") starts a turn.
        turns: list[Entry] = [
            TurnStart(at, text) for at, text in reader.user_items if not text.startswith("<")
        ]
        entries = sorted([*turns, *entries], key=lambda e: e.at)
    prefix = infer_prefix([(r.usage, r.history) for r in requests], count)
    events = Events()
    model = requests[0].model
    events.enter(entries[0].at, ROOT)
    turn, in_turn, answer = 0, False, ""
    for e in entries:
        if isinstance(e, TurnStart):
            if in_turn:
                events.exit(events.last or e.at, answer or None)
            turn += 1
            events.enter(e.at, f"turn_{turn}", e.prompt)
            in_turn, answer = True, ""
            continue
        if not in_turn:
            turn += 1
            events.enter(e.at, f"turn_{turn}")
            in_turn = True
        if isinstance(e, ToolDone):
            events.add("tool", e.at, name=e.name, input=e.input, output=e.output)
            continue
        label = e.label
        if e.model != model:
            events.add("change", e.at, model=e.model)
            model, label = e.model, label or "model-switch"
        # OpenAI caches prefixes automatically: no breakpoints are marked.
        prefix_block = unrecorded_block(prefix)
        del prefix_block["breakpoint"]
        text = "\n".join(i.text if i.kind == "text" else f"[{i.kind} {i.label}]" for i in e.output)
        answer = next((i.text for i in reversed(e.output) if i.kind == "text"), answer)
        events.add(
            "llm",
            e.at,
            label=events.unique_label(label) if label else None,
            output=text,
            usage=e.usage,
            request={"blocks": [prefix_block, *history_blocks(e.history)]},
        )
    end = events.last or entries[0].at
    if in_turn:
        events.exit(end, answer or None)
    events.exit(end)
    meta = reader.meta
    environment: dict[str, Any] = {"harness": "Codex CLI"}
    if isinstance(meta.get("cwd"), str):
        environment["cwd"] = meta["cwd"]
    if "git" in meta:
        environment["git_repo"] = isinstance(meta["git"], Mapping)
    provider, note = _provider(meta.get("model_provider"))
    data = session_doc(
        id=meta["id"] if isinstance(meta.get("id"), str) and meta["id"] else path.stem,
        agent=AGENT,
        provider=provider,
        model=requests[0].model,
        environment=environment,
        events=events.events,
    )
    warnings = skipped.warnings(str(path)) + note
    if not reader.saw_usage:
        warnings += (
            "no token_count event carries usage (info is null or absent): the requests have "
            "no measured usage; analyze simulates only",
        )
    return Imported(data, warnings)
