"""The proxy's parts on their own: the stream reader at any chunk boundary, redaction,
routes, telling sessions apart, and the predictor against analyze over time gaps."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from captured import analysed, predicted_lines
from fake_upstream import _anthropic_events, _chat_events, _responses_events

from assembler.live.prediction import Predictor
from assembler.live.redaction import redacted_headers, redacted_url
from assembler.live.routes import ANTHROPIC_API, OPENAI_API, RouteError, Upstreams, api_of
from assembler.live.sessions import continues, session_hint
from assembler.live.streams import MAX_LINE, ResponseWatcher

BILL = {"input": 3, "cache_read": 900, "cache_write": 120, "write_1h": 100, "output": 9}


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_usage_is_read_from_a_stream_cut_anywhere(size: int) -> None:
    cases = [
        ("anthropic-messages", _anthropic_events("claude-sonnet-4-5", BILL)),
        ("openai-responses", _responses_events("gpt-5", BILL)),
        ("openai-chat", _chat_events("gpt-4o", BILL, {"stream_options": {"include_usage": True}})),
    ]
    for api, events in cases:
        raw = b"".join(events)
        watcher = ResponseWatcher(api, streaming=True)
        for i in range(0, len(raw), size):
            watcher.feed(raw[i : i + size])
        usage = watcher.summary()["usage"]
        if api == "anthropic-messages":
            assert usage["cache_creation"]["ephemeral_1h_input_tokens"] == 100
            assert (usage["cache_read_input_tokens"], usage["output_tokens"]) == (900, 9)
        elif api == "openai-responses":
            assert usage["input_tokens_details"]["cached_tokens"] == 900
        else:
            assert usage["prompt_tokens_details"]["cached_tokens"] == 900


def test_a_stream_error_and_an_overlong_line() -> None:
    watcher = ResponseWatcher("anthropic-messages", streaming=True)
    watcher.feed(b"event: ping\ndata: " + b"x" * (MAX_LINE + 10))
    watcher.feed(b"more of that line\n\n")
    watcher.feed(b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error"}}\n\n')
    summary = watcher.summary()
    assert summary["type"] == "error" and summary["error"]["type"] == "overloaded_error"
    assert len(watcher._pending) < 100


def test_credentials_are_redacted_in_headers_and_urls() -> None:
    headers = redacted_headers(
        [
            ("X-Api-Key", "k1"),
            ("Authorization", "Bearer k2"),
            ("Cookie", "a=k3"),
            ("Set-Cookie", "b=k4"),
            ("X-Amz-Security-Token", "k5"),
            ("anthropic-version", "2023-06-01"),
            ("Accept", "a"),
            ("Accept", "b"),
        ]
    )
    assert set(headers.values()) == {"[redacted]", "2023-06-01", "a, b"}
    assert (
        redacted_url("https://h/v1/x?key=k6&alt=sse") == "https://h/v1/x?key=%5Bredacted%5D&alt=sse"
    )
    assert redacted_url("https://h/v1/x?alt=sse") == "https://h/v1/x?alt=sse"


def test_routes_follow_the_path_and_never_leave_the_upstream() -> None:
    assert api_of("/v1/messages/count_tokens") == "anthropic-count-tokens"
    assert api_of("/v1/chat/completions") == "openai-chat"
    default = Upstreams()
    assert default.target("/v1/messages", {}) == f"{ANTHROPIC_API}/v1/messages"
    assert default.target("/v1/responses", {}) == f"{OPENAI_API}/v1/responses"
    assert default.target("/v1/models", {"anthropic-version": "x"}).startswith(ANTHROPIC_API)
    gateway = Upstreams("https://gw.example/anthropic/")
    assert (
        gateway.target("/v1/messages?beta=true", {})
        == "https://gw.example/anthropic/v1/messages?beta=true"
    )
    with pytest.raises(RouteError, match="starting with /"):
        gateway.target("http://elsewhere/v1/messages", {})
    with pytest.raises(RouteError, match="http:// or https://"):
        Upstreams("ftp://gw.example")


def _block(section: str, text: str, role: str | None = None) -> dict[str, Any]:
    return {"section": section, "text": text, "role": role}


def test_a_request_continues_the_session_it_shares_its_prefix_or_first_message_with() -> None:
    tools, system = _block("tools", "read"), _block("system", "you are A")
    first = _block("messages", "hi", "user")
    last = [tools, system, first]
    assert continues([tools, system, first, _block("messages", "more", "user")], last) == 3
    # a tool inserted: the prefix breaks, the conversation goes on
    assert continues([tools, _block("tools", "grep"), system, first], last) == 2
    # same tools, another agent's system prompt and first message: another session
    assert (
        continues([tools, _block("system", "you are B"), _block("messages", "yo", "user")], last)
        == 0
    )
    body = {"metadata": {"user_id": "user_1_session_abc"}}
    assert session_hint(body, {}) == "user_1_session_abc"
    assert session_hint({}, {"Session_Id": "s-9"}) == "s-9"


def _request(turns: int, system: str) -> bytes:
    messages = []
    for i in range(turns):
        messages += [{"role": "user", "content": f"turn {i} " + "words " * 300}]
        if i < turns - 1:
            messages += [{"role": "assistant", "content": f"answer {i}"}]
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
    }
    return json.dumps(body).encode()


def test_predictions_equal_analyze_across_a_lapsed_cache_and_a_failed_call(tmp_path: Path) -> None:
    predictor = Predictor()
    start = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    gaps = [0, 1, 2, 9, 10, 11]  # minutes: the 5-minute lifetime lapses before the fourth
    lines = []
    for n, minute in enumerate(gaps, 1):
        at = start + timedelta(minutes=minute)
        body = _request(n, "You are careful. " * 400)
        url = "https://api.anthropic.com/v1/messages"
        p = predictor.predict(n, "anthropic-messages", url, at, body, {})
        failed = n == 5
        status = 500 if failed else 200
        # billed as counted: the sizes stay at a factor of 1
        response = (
            {"type": "error", "error": {"type": "api_error"}}
            if failed
            else {"usage": {"input_tokens": p["total"]}}
        )
        predictor.settle(n, status, response)
        lines.append(
            {
                "request": {"timestamp": at.isoformat(), "url": url, "body": json.loads(body)},
                "response": {"status_code": status, "body": response},
                "session": p["session"],
                "prediction": p,
            }
        )
    steps = analysed(lines, tmp_path / "log.jsonl")
    kept = [x["prediction"] for x in lines if x["response"]["status_code"] == 200]
    assert len(steps) == len(kept) == 5  # the failed call is not in the cache's history
    for p, s in zip(kept, steps, strict=True):
        assert (p["read"], p["write"], p["uncached"]) == (s.read, s.write, s.uncached)
    assert "expired" in (kept[3]["miss"] or "")
    assert kept[1]["read"] > 0 and kept[3]["read"] == 0


@pytest.mark.parametrize(
    "name", ["research_agent", "coding_agent_midnight", "imported_claude_code"]
)
def test_windowed_predictions_equal_the_whole_analysis(name: str, tmp_path: Path) -> None:
    """Each request of a bundled session at its recorded time (lapses and a midnight
    included), predicted from a two-step window over the cache the earlier ones left."""
    from assembler.analysis.engine import SessionAssembler, builtin_layout, request_json
    from assembler.sessions.loader import load_session
    from scripts.app_server import ROOT

    session = load_session(ROOT / "sample_sessions" / f"{name}.yaml")
    predictor = Predictor()
    url = "https://api.anthropic.com/v1/messages"
    lines = []
    for n, assembled in enumerate(SessionAssembler(session, builtin_layout("seed")), 1):
        body = json.loads(request_json(assembled, "anthropic", None, session.id))
        body["model"] = "claude-sonnet-4-5"
        at = assembled.step.at
        p = predictor.predict(n, "anthropic-messages", url, at, json.dumps(body).encode(), {})
        response = {"usage": {"input_tokens": p["total"]}}  # billed as counted: a factor of 1
        predictor.settle(n, 200, response)
        lines.append(
            {
                "request": {"timestamp": at.isoformat(), "url": url, "body": body},
                "response": {"status_code": 200, "body": response},
                "session": p["session"],
                "prediction": p,
            }
        )
    assert len(lines) > 5
    checked = 0
    for name in {x["session"] for x in lines}:  # a subagent is a session of its own
        mine = predicted_lines(lines, name)
        steps = analysed(mine, tmp_path / "log.jsonl")
        assert len(steps) == len(mine)
        for line, s in zip(mine, steps, strict=True):
            p = line["prediction"]
            assert p["step"] == s.step and p["scale"] == 1.0
            assert (p["read"], p["write"], p["uncached"]) == (s.read, s.write, s.uncached)
            assert p["miss"] == (
                None if s.miss is None else f"{s.miss.component} ({s.miss.reason})"
            )
            checked += 1
    assert checked == len(lines)
