"""A Codex rollout as a session document: one agentic function per user turn, one llm
event per response with the request as Codex sent it and the usage billed for it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from assembler.sessions.importers.codex.prefix import (
    IDLE,
    base_instructions,
    first_read,
    head_blocks,
    head_size,
    shared_end,
    shared_split,
)
from assembler.sessions.importers.codex.reader import REASONING_DROPPED, Reader
from assembler.sessions.importers.history import (
    Entry,
    Events,
    Imported,
    Request,
    TokenCount,
    ToolDone,
    TurnStart,
    session_doc,
)
from assembler.sessions.importers.records import Skipped, no_requests, read_jsonl
from assembler.sessions.importers.shared_history import SharedWriter
from assembler.sessions.importers.sizing import Sizer, infer_hidden

AGENT = "codex"
ROOT = "codex_session"

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


def _entries(reader: Reader) -> list[Entry]:
    if reader.explicit_turns:
        return reader.entries
    # Older rollouts lack user_message events: a user message that is not injected
    # context (those start with "<") starts a turn.
    turns: list[Entry] = [
        TurnStart(at, text) for at, text in reader.user_items if not text.startswith("<")
    ]
    return sorted([*turns, *reader.entries], key=lambda e: e.at)


class _Heads:
    """Each request's head blocks: the same blocks every time, the shared part marked
    cached before the first request and after an idle gap."""

    def __init__(self, requests: list[Request], meta: Mapping[str, Any], count: TokenCount):
        size = head_size(requests, count)
        self.shared = first_read(requests, size)
        self.blocks = shared_split(head_blocks(size, base_instructions(meta), count), self.shared)
        self.end = shared_end(self.blocks, self.shared)
        self.last: datetime | None = None

    def at(self, sent: datetime) -> list[dict[str, Any]]:
        idle = self.last is None or sent - self.last > IDLE
        self.last = sent
        if self.end < 0 or not idle:
            return list(self.blocks)
        out = list(self.blocks)
        out[self.end] = {**out[self.end], "warm": True}
        return out


def import_codex(path: Path, count: TokenCount) -> Imported:
    skipped = Skipped()
    reader = Reader(count)
    for rec in read_jsonl(path, skipped):
        reader.read(rec)
    reader.finish()
    requests = [r.request for r in reader.responses]
    if not requests:
        raise no_requests(str(path), "response_item records after a turn_context with the model")
    infer_hidden(requests, Sizer(count))
    entries = _entries(reader)
    heads = _Heads(requests, reader.meta, count)
    writer = SharedWriter()
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
            # a model switch reads nothing: it names the break before a dropped reasoning
            model = e.model
            label = "model-switch" if label in (None, REASONING_DROPPED) else label
        text = "\n".join(i.text if i.kind == "text" else f"[{i.kind} {i.label}]" for i in e.output)
        answer = next((i.text for i in reversed(e.output) if i.kind == "text"), answer)
        events.add(
            "llm",
            e.at,
            label=events.unique_label(label) if label else None,
            output=text,
            usage=e.usage,
            request=writer.request(heads.at(e.at), e.history),
        )
    end = events.last or entries[0].at
    if in_turn:
        events.exit(end, answer or None)
    events.exit(end)
    return Imported(_document(reader, requests, path, events), _warnings(reader, skipped, path))


def _document(
    reader: Reader, requests: list[Request], path: Path, events: Events
) -> dict[str, Any]:
    meta = reader.meta
    environment: dict[str, Any] = {"harness": "Codex CLI"}
    if isinstance(meta.get("cwd"), str):
        environment["cwd"] = meta["cwd"]
    if "git" in meta:
        environment["git_repo"] = isinstance(meta["git"], Mapping)
    return session_doc(
        id=meta["id"] if isinstance(meta.get("id"), str) and meta["id"] else path.stem,
        agent=AGENT,
        provider=_provider(meta.get("model_provider"))[0],
        model=requests[0].model,
        environment=environment,
        events=events.events,
        shared=True,
    )


def _warnings(reader: Reader, skipped: Skipped, path: Path) -> tuple[str, ...]:
    warnings = skipped.warnings(str(path)) + _provider(reader.meta.get("model_provider"))[1]
    if not reader.saw_usage:
        warnings += (
            "no token_count event carries usage (info is null or absent): the requests have "
            "no measured usage; analyze simulates only",
        )
    return warnings
