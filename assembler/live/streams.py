"""What a response says about its bill, read as its bytes pass: the usage, id and model of a
JSON body or of a server-sent event stream, in the shape of the API's non-streamed response.

A stream is never held: lines are read as chunks arrive and only the few events that carry
usage (Anthropic ``message_start`` / ``message_delta``, Responses ``response.completed``,
a Chat chunk with ``usage``) or an error are parsed.
"""

from __future__ import annotations

import json
from typing import Any

from assembler.live.routes import CHAT, MESSAGES, RESPONSES

MAX_LINE = 16 * 1024 * 1024  # an event line longer than this is skipped, not held
_ANTHROPIC_EVENTS = (b"message_start", b"message_delta", b"error")
_RESPONSES_EVENTS = (b"response.completed", b"response.failed", b"response.incomplete", b"error")


def _loads(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


class ResponseWatcher:
    """Feed it a response's chunks; ``summary()`` is then the response as the request log
    reads it (usage, id, model; an ``error`` when the stream ended in one)."""

    def __init__(self, api: str | None, streaming: bool) -> None:
        self.api = api
        self.streaming = streaming
        self._pending = b""
        self._skipping = False  # inside a line past MAX_LINE
        self._event = b""
        self.summary_: dict[str, Any] = {}
        self.usage: dict[str, Any] = {}
        self.error: Any = None
        self.events = 0

    def feed(self, chunk: bytes) -> None:
        if not self.streaming:
            return
        data = self._pending + chunk
        lines = data.split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            if self._skipping:
                self._skipping = False
                continue
            self._line(line.rstrip(b"\r"))
        if len(self._pending) > MAX_LINE:
            self._pending, self._skipping = b"", True

    def _line(self, line: bytes) -> None:
        if line.startswith(b"event:"):
            self._event = line[6:].strip()
            return
        if not line.startswith(b"data:"):
            if not line:
                self._event = b""
            return
        self.events += 1
        payload = line[5:].strip()
        if self.api == MESSAGES:
            self._anthropic(payload)
        elif self.api == RESPONSES:
            self._responses(payload)
        elif self.api == CHAT:
            self._chat(payload)

    def _wanted(self, names: tuple[bytes, ...], payload: bytes) -> bool:
        """Whether an event is one of ``names``: by its ``event:`` line, else by the type
        its data opens with (the providers write ``type`` first)."""
        if self._event:
            return self._event in names
        head = payload[:200]
        return any(b'"' + name + b'"' in head for name in names)

    def _anthropic(self, payload: bytes) -> None:
        if not self._wanted(_ANTHROPIC_EVENTS, payload):
            return
        event = _loads(payload)
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            message = event["message"]
            self.summary_ = {k: message[k] for k in ("id", "type", "model") if k in message}
            self._usage(message.get("usage"))
        elif kind == "message_delta":
            self._usage(event.get("usage"))
        elif kind == "error":
            self.error = event.get("error")

    def _responses(self, payload: bytes) -> None:
        if not self._wanted(_RESPONSES_EVENTS, payload):
            return
        event = _loads(payload)
        if not isinstance(event, dict):
            return
        response = event.get("response")
        if isinstance(response, dict):
            self.summary_ = {
                k: response[k] for k in ("id", "object", "model", "status") if k in response
            }
            self._usage(response.get("usage"))
            if response.get("error"):
                self.error = response["error"]
        elif event.get("type") == "error":
            self.error = {k: v for k, v in event.items() if k != "type"}

    def _chat(self, payload: bytes) -> None:
        if payload == b"[DONE]":
            return
        if not self.summary_ or b'"usage":{' in payload or b'"usage": {' in payload:
            event = _loads(payload)
            if not isinstance(event, dict):
                return
            if not self.summary_:
                self.summary_ = {"id": event.get("id"), "object": "chat.completion"}
                if "model" in event:
                    self.summary_["model"] = event["model"]
            self._usage(event.get("usage"))
            if event.get("error"):
                self.error = event["error"]

    def _usage(self, usage: Any) -> None:
        if isinstance(usage, dict):
            # a later event's counts replace an earlier one's (message_delta is cumulative)
            self.usage.update({k: v for k, v in usage.items() if v is not None})

    def summary(self) -> dict[str, Any]:
        out = dict(self.summary_)
        if self.api == MESSAGES:
            out.setdefault("type", "message")
        if self.usage:
            out["usage"] = dict(self.usage)
        if self.error is not None:
            out["error"] = self.error
            if self.api == MESSAGES:
                out["type"] = "error"
        return out
