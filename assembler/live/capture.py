"""The capture log: one JSON line per exchange, appended and flushed as the exchange ends.

``{"request": {"timestamp", "method", "url", "headers", "body"}, "response": {"timestamp",
"status_code", "headers", "body" | "body_raw"}, "session", "prediction", "billed", "timing"}``:
a body that is JSON is kept as its value, anything else (a stream of server-sent events, a
malformed body) as text in ``body_raw``. A response is spooled to a temporary file as it
passes and copied into its line in pieces, so a stream of any length is never held whole.
Headers and URLs arrive here already redacted.
"""

from __future__ import annotations

import codecs
import json
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from tempfile import SpooledTemporaryFile
from typing import IO, Any

from assembler.live.streams import ResponseWatcher

SPOOL_IN_MEMORY = 1024 * 1024  # past this a response waits for its line on disk
PARSE_LIMIT = 64 * 1024 * 1024  # a JSON body larger than this is kept as text
_PIECE = 256 * 1024


def body_fields(raw: bytes) -> dict[str, Any]:
    """``{"body": value}`` for a JSON body, else ``{"body_raw": text}`` (empty: nothing)."""
    if not raw:
        return {}
    if len(raw) <= PARSE_LIMIT:
        try:
            return {"body": json.loads(raw)}
        except ValueError:
            pass
    return {"body_raw": raw.decode("utf-8", errors="replace")}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass
class Exchange:
    """One request and its response, as the proxy saw them (secrets already redacted)."""

    received: datetime
    method: str
    url: str
    request_headers: dict[str, str]
    request_body: bytes
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    response_at: datetime | None = None
    streaming: bool = False
    spool: IO[bytes] = field(
        default_factory=lambda: SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115
    )
    size: int = 0
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # session, prediction, billed, timing
    watcher: ResponseWatcher | None = None  # what the response says of its bill, as it passes

    def keep(self, chunk: bytes) -> None:
        self.spool.write(chunk)
        self.size += len(chunk)

    def request_line(self) -> dict[str, Any]:
        return {
            "timestamp": self.received.isoformat(),
            "method": self.method,
            "url": self.url,
            "headers": self.request_headers,
            **body_fields(self.request_body),
        }

    def response_head(self) -> dict[str, Any]:
        head: dict[str, Any] = {
            "timestamp": (self.response_at or self.received).isoformat(),
            "status_code": self.status,
            "headers": self.response_headers,
        }
        return head

    def response_body(self) -> bytes | None:
        """The whole body when it is small enough to parse and not a stream, else ``None``."""
        if self.streaming or self.size > PARSE_LIMIT:
            return None
        self.spool.seek(0)
        return self.spool.read()


class CaptureLog:
    """Appends exchanges to ``path``; thread-safe, one whole line at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("ab")
        self._lock = threading.Lock()

    def append(self, exchange: Exchange) -> None:
        request = _dumps(exchange.request_line())
        head = exchange.response_head()
        body = exchange.response_body()
        if body is not None:
            head.update(body_fields(body))
        tail = _dumps(exchange.extra)[1:]  # the closing fields, after the response
        with self._lock:
            write = self._file.write
            write(b'{"request":' + request.encode())
            response = _dumps(head)
            if body is None and exchange.size:
                write(b',"response":' + response[:-1].encode() + b',"body_raw":"')
                self._copy_escaped(exchange.spool)
                write(b'"}')
            else:
                write(b',"response":' + response.encode())
            write((b"," + tail.encode()) if tail != "}" else b"}")
            write(b"\n")
            self._file.flush()
        exchange.spool.close()

    def _copy_escaped(self, spool: IO[bytes]) -> None:
        spool.seek(0)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while piece := spool.read(_PIECE):
            self._file.write(_dumps(decoder.decode(piece))[1:-1].encode())
        self._file.write(_dumps(decoder.decode(b"", final=True))[1:-1].encode())

    def close(self) -> None:
        with self._lock:
            self._file.close()
