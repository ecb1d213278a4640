"""Captured exchanges (fixtures/capture/, built from requests/proxy.jsonl by build_capture.py):
streamed responses reassembled, bodies given as JSON text, headers never kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from importer_helpers import FIXTURES, REQUESTS

from assembler.analysis.engine import import_session
from assembler.sessions.importers import ImporterError
from assembler.sessions.importers.request_logs.exchange import (
    ExchangeError,
    is_capture,
    read_exchange,
    reassemble,
    sse_events,
)

CAPTURE = FIXTURES / "capture"
SECRET = "sk-test-never-kept"


def _events(path: Path) -> list[dict[str, Any]]:
    return import_session("requests", path).data["events"]


@pytest.fixture(scope="module")
def flat() -> list[dict[str, Any]]:
    return _events(REQUESTS)


@pytest.mark.parametrize("name", ["proxy_streamed.jsonl", "proxy_bodies.jsonl"])
def test_a_capture_imports_to_the_session_of_the_same_calls(
    name: str, flat: list[dict[str, Any]]
) -> None:
    got = _events(CAPTURE / name)
    assert got == flat
    assert sum(e["type"] == "llm" for e in got) == 8


def test_headers_are_never_kept() -> None:
    for name in ("proxy_streamed.jsonl", "proxy_bodies.jsonl"):
        imported = import_session("requests", CAPTURE / name)
        assert SECRET not in json.dumps(imported.data)


def test_the_failed_call_is_skipped_with_a_warning() -> None:
    warnings = import_session("requests", CAPTURE / "proxy_streamed.jsonl").warnings
    assert any("skipped 1 failed call" in w and "529" in w for w in warnings), warnings


def _line(path: Path, api: str) -> dict[str, Any]:
    for text in path.read_text("utf-8").splitlines():
        line = json.loads(text)
        if line["request"]["url"].endswith(api) and line["response"]["status_code"] == 200:
            return dict(line)
    raise AssertionError(api)


def test_anthropic_usage_is_the_start_merged_with_the_final_delta() -> None:
    line = _line(CAPTURE / "proxy_streamed.jsonl", "/messages")
    assert is_capture(line)
    exchange = read_exchange(line)
    assert exchange.response is not None
    usage = exchange.response["usage"]
    assert usage["cache_creation"] == {
        "ephemeral_5m_input_tokens": 1373,
        "ephemeral_1h_input_tokens": 0,
    }
    assert usage["cache_creation_input_tokens"] == 1373
    assert usage["output_tokens"] == 45  # message_start said 1; message_delta the final count
    assert exchange.url == "https://api.anthropic.com/v1/messages"
    assert exchange.status == 200


def test_a_streamed_tool_input_is_joined_and_parsed() -> None:
    stream = (
        'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
        '"role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":3,'
        '"cache_read_input_tokens":100,"output_tokens":1}}}\n\n'
        'data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
        '"id":"t1","name":"grep","input":{}}}\n\n'
        'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
        '"partial_json":"{\\"pattern\\": \\"to"}}\n\n'
        'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
        '"partial_json":"do\\"}"}}\n\n'
        'data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},'
        '"usage":{"output_tokens":9}}\n\n'
    )
    message = reassemble(stream)
    assert message is not None
    assert message["content"] == [
        {"type": "tool_use", "id": "t1", "name": "grep", "input": {"pattern": "todo"}}
    ]
    assert message["stop_reason"] == "tool_use"
    assert message["usage"] == {
        "input_tokens": 3,
        "cache_read_input_tokens": 100,
        "output_tokens": 9,
    }


def test_responses_take_the_completed_event() -> None:
    line = _line(CAPTURE / "proxy_streamed.jsonl", "/responses")
    exchange = read_exchange(line)
    assert exchange.response is not None
    assert exchange.response["status"] == "completed"
    assert exchange.response["usage"]["input_tokens_details"] == {"cached_tokens": 0}


def test_chat_chunks_are_joined_with_the_final_usage_chunk() -> None:
    line = _line(CAPTURE / "proxy_streamed.jsonl", "/chat/completions")
    exchange = read_exchange(line)
    assert exchange.response is not None
    assert exchange.response["usage"]["prompt_tokens"] == 1388
    assert exchange.response["choices"][0]["message"]["role"] == "assistant"


def test_a_stream_cut_short_keeps_what_it_billed() -> None:
    start = {
        "type": "message_start",
        "message": {"id": "m", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 7}},
    }
    message = reassemble(f"event: message_start\ndata: {json.dumps(start)}\n\n")
    assert message is not None
    assert message["usage"] == {"input_tokens": 7} and message["content"] == []


def test_sse_events_follow_the_standard() -> None:
    text = ": comment\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\ndata: three"
    assert list(sse_events(text)) == [("a", "one\ntwo"), ("message", "three")]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            {"request": {"url": "u", "body": "not json"}, "response": {"status_code": 200}},
            "request.body: expected the request as a JSON object, found a string",
        ),
        (
            {
                "request": {"url": "u", "body": {}},
                "response": {"status_code": 200, "body": "<html>"},
            },
            "response.body: expected a JSON object or a server-sent event stream, found a string",
        ),
        (
            {"request": {"url": "u", "body": "[1]"}, "response": {}},
            "request.body: expected a JSON object, found the JSON of a list",
        ),
        (
            {"request": {"url": "u", "body": {}}, "response": {"body_raw": "data: {oops\n\n"}},
            "response.body_raw: event 1: expected JSON data",
        ),
    ],
)
def test_a_bad_capture_names_the_field(line: dict[str, Any], message: str) -> None:
    with pytest.raises(ExchangeError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        read_exchange(line)


def test_a_bad_capture_line_names_the_file_and_line(tmp_path: Path) -> None:
    log = tmp_path / "capture.jsonl"
    line = {"request": {"method": "POST", "url": "https://x/v1/messages", "body": 3}}
    log.write_text(json.dumps(line) + "\n", "utf-8")
    with pytest.raises(ImporterError, match=rf"^{log}:1: request.body: expected the request"):
        import_session("requests", log)


def test_an_error_event_in_a_stream_makes_the_call_a_failed_one(tmp_path: Path) -> None:
    start = {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 7}}}
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    stream = f"event: message_start\ndata: {json.dumps(start)}\n\nevent: error\ndata: {json.dumps(error)}\n\n"
    assert reassemble(stream) == {"type": "error", "error": error["error"]}
    good = json.loads((CAPTURE / "proxy_streamed.jsonl").read_text("utf-8").splitlines()[0])
    bad = {**good, "response": {**good["response"], "body_raw": stream}}
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", "utf-8")
    imported = import_session("requests", log)
    assert sum(e["type"] == "llm" for e in imported.data["events"]) == 1
    assert any("skipped 1 failed call" in w and "overloaded_error" in w for w in imported.warnings)
