"""A minimal reader of the proxy's capture lines for the tests: each line in the shape the
request-log importer reads today (``{"timestamp", "url", "request", "response", "status"}``),
a streamed response reassembled from its events. The importer's own reader of the capture
shape replaces this once it exists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assembler.live.routes import api_of
from assembler.live.streams import ResponseWatcher


def as_request_log(lines: list[dict[str, Any]], out: Path, session: str | None = None) -> Path:
    with out.open("w") as f:
        for line in lines:
            if session is not None and line.get("session") != session:
                continue
            request, response = line["request"], line["response"]
            if "body" not in request or "prediction" not in line:
                continue  # not an API call the cache sees (count_tokens, another path)
            body = response.get("body")
            if body is None:
                watcher = ResponseWatcher(api_of(request["url"].split("?")[0]), True)
                watcher.feed(response.get("body_raw", "").encode() + b"\n")
                body = watcher.summary()
            f.write(
                json.dumps(
                    {
                        "timestamp": request["timestamp"],
                        "url": request["url"],
                        "request": request["body"],
                        "response": body,
                        "status": response["status_code"],
                    }
                )
                + "\n"
            )
    return out
