"""Claude Code transcripts built record by record, as the client writes them, for the
importer's tests: records linked by ``parentUuid``, usage as the API bills it, and the
imported session read back and analysed."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path
from typing import Any

import yaml

from assembler.analysis.bill.measured import compare_measured
from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.importing import import_session
from assembler.analysis.engine.results import SessionAnalysis
from assembler.sessions.importers.history import Imported
from assembler.sessions.loader import parse_session

SID = "11111111-2222-4333-8444-555555555555"
SONNET = "claude-sonnet-4-5-20250929"


class Transcript:
    """Records linked by ``parentUuid``, one after the other unless told otherwise."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.parent: str | None = None

    def rec(self, typ: str, ts: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
        uuid = extra.pop("uuid", f"u-{len(self.lines) + 1:04d}")
        d: dict[str, Any] = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "cwd": "/home/dev/p",
            "sessionId": SID,
            "type": typ,
            "uuid": uuid,
            "timestamp": f"2026-03-12T{ts}Z",
            "message": message,
            **extra,
        }
        self.lines.append(d)
        self.parent = uuid
        return d

    def user(self, ts: str, content: Any, **extra: Any) -> dict[str, Any]:
        return self.rec("user", ts, {"role": "user", "content": content}, **extra)

    def asst(
        self,
        ts: str,
        rid: str,
        content: list[dict[str, Any]],
        u: dict[str, Any],
        *,
        model: str = SONNET,
        **extra: Any,
    ) -> dict[str, Any]:
        message = {"model": model, "id": f"msg_{rid}", "role": "assistant", "content": content}
        return self.rec("assistant", ts, {**message, "usage": u}, requestId=rid, **extra)

    def compacted(self, ts: str, summary: str) -> None:
        """A compaction: the boundary the history starts again from, then its summary."""
        uuid = f"u-{len(self.lines) + 1:04d}"
        self.lines.append(
            {
                "parentUuid": None,
                "isSidechain": False,
                "sessionId": SID,
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": uuid,
                "timestamp": f"2026-03-12T{ts}Z",
            }
        )
        self.parent = uuid
        self.user(ts, summary, isCompactSummary=True)

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(d) + "\n" for d in self.lines), "utf-8")
        return path


def usage(read: int, write: int, out: int, hour: int = 0, uncached: int = 3) -> dict[str, Any]:
    return {
        "input_tokens": uncached,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "cache_creation": {
            "ephemeral_5m_input_tokens": write - hour,
            "ephemeral_1h_input_tokens": hour,
        },
        "output_tokens": out,
    }


def png(width: int, height: int) -> str:
    head = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR"
    return base64.b64encode(head + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)).decode()


def image(width: int, height: int) -> dict[str, Any]:
    data = png(width, height)
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def use(uid: str, name: str = "Read", **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": name, "input": args}


def result(uid: str, content: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": uid, "content": content}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def imported(path: Path) -> Imported:
    return import_session("claude-code", path)


def analysed(data: dict[str, Any]) -> SessionAnalysis:
    return analyze(parse_session(yaml.safe_dump(data, sort_keys=False), "imported.yaml"))


def requests(data: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Each request's blocks, written out in full."""
    a = analysed(data)
    return [
        [{"name": b.name, "text": b.text, "tokens": b.tokens} for b in s.blocks] for s in a.steps
    ]


def reads(data: dict[str, Any]) -> list[tuple[int, int]]:
    return [(c.simulated.read, c.measured.read) for c in compare_measured(analysed(data))]
