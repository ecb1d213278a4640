"""Importers record the server-side web searches a request ran as ``usage.web_searches``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from importer_helpers import CLAUDE, REQUESTS, lines, load

from assembler.analysis.engine.importing import import_file
from assembler.sessions.model import LLMCall


def _searches(data: dict[str, Any]) -> list[int]:
    """Each loaded request's count (0 without usage)."""
    calls = [e for e in load(data).events if isinstance(e, LLMCall)]
    return [0 if c.usage is None else c.usage.web_searches for c in calls]


def _llm_usages(data: dict[str, Any]) -> list[dict[str, int] | None]:
    return [e.get("usage") for e in data["events"] if e["type"] == "llm"]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def test_claude_code_reads_server_tool_use(tmp_path: Path) -> None:
    records = lines(CLAUDE)
    first = next(r for r in records if r.get("requestId") and "usage" in r.get("message", {}))
    # one of the request's streamed records carries the count: it is kept
    first["message"]["usage"]["server_tool_use"] = {"web_search_requests": 2}
    data = import_file("claude-code", _write(tmp_path / "session.jsonl", records))
    usages = _llm_usages(data)
    assert usages[0] is not None and usages[0]["web_searches"] == 2
    assert all(u is None or "web_searches" not in u for u in usages[1:])
    assert _searches(data)[0] == 2 and not any(_searches(data)[1:])
    # without the count, nothing is written
    assert all(
        "web_searches" not in (u or {}) for u in _llm_usages(import_file("claude-code", CLAUDE))
    )


def test_request_logs_read_anthropic_counts_and_responses_web_search_calls(tmp_path: Path) -> None:
    records = lines(REQUESTS)
    records[0]["response"]["usage"]["server_tool_use"] = {"web_search_requests": 3}
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed",
              "action": {"type": "search", "query": "naive dates"}}  # fmt: skip
    responses = records[7]["response"]
    responses["output"] = [search, {**search, "id": "ws_2"}, *responses["output"]]
    data = import_file("requests", _write(tmp_path / "log.jsonl", records))
    usages = _llm_usages(data)
    assert [(u or {}).get("web_searches", 0) for u in usages] == [3, 0, 0, 0, 0, 0, 0, 2]
    assert _searches(data) == [3, 0, 0, 0, 0, 0, 0, 2]
    # the answer is still the message's text
    assert [e for e in data["events"] if e["type"] == "llm"][-1]["output"] == "Naive dates again."
    # a Chat response has no count: nothing is recorded
    assert all(
        "web_searches" not in (u or {}) for u in _llm_usages(import_file("requests", REQUESTS))
    )
