"""The request-log importer on traffic a proxy really records: failed calls, markers on
parts it does not know, other platforms, stored Responses conversations, lines out of
order and numeric times."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from importer_helpers import load, steps

from assembler.analysis.engine.analyzer import analyze
from assembler.sessions.importers import ImporterError
from assembler.sessions.importers.request_logs.requests_log import import_requests

SYS = "You are a helpful coding agent. " * 150
TOOLS = [{"name": "read_file", "input_schema": {"type": "object"}}]
ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
FIRST = [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {}}]}]
AGAIN = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "ok"},
    {"role": "user", "content": [{"type": "text", "text": "again", "cache_control": {}}]},
]


def _usage(i: int, read: int, write: int) -> dict[str, int]:
    return {
        "input_tokens": i,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "output_tokens": 5,
    }


def _anthropic(at: str, messages: list[Any], usage: Any, **line: Any) -> dict[str, Any]:
    request = {"model": "claude-sonnet-4-5", "tools": TOOLS, "system": SYS, "messages": messages}
    response = {"id": "msg_1", "type": "message", "content": [], "usage": usage}
    return {"timestamp": at, "url": ANTHROPIC_URL, "request": request, "response": response} | line


def _write(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    return path


RATE_LIMITED = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}


def test_failed_calls_are_skipped_and_counted_in_one_warning(tmp_path: Path) -> None:
    lines = [
        _anthropic("2026-03-12T15:00:00Z", FIRST, _usage(3, 0, 1300)),
        _anthropic("2026-03-12T15:00:10Z", AGAIN, None, status=429) | {"response": RATE_LIMITED},
        _anthropic("2026-03-12T15:00:20Z", AGAIN, None, status=500) | {"response": {"x": 1}},
        _anthropic("2026-03-12T15:00:25Z", AGAIN, None) | {"response": None, "error": "Timeout"},
        _anthropic("2026-03-12T15:00:30Z", AGAIN, _usage(3, 1300, 10)),
    ]
    got = import_requests(_write(tmp_path, lines))
    assert [e["type"] for e in got.data["events"]] == ["enter", "llm", "llm", "exit"]
    (warning,) = got.warnings
    assert warning.startswith("skipped 3 failed calls")
    assert "line 2: 429: rate_limit_error slow down" in warning


def test_a_failed_call_without_url_never_changes_the_provider(tmp_path: Path) -> None:
    bare = {"model": "claude-sonnet-4-5", "messages": AGAIN}
    lines = [
        _anthropic("2026-03-12T15:00:00Z", FIRST, _usage(3, 0, 1300)),
        {"timestamp": "2026-03-12T15:00:10Z", "request": bare, "response": RATE_LIMITED},
        _anthropic("2026-03-12T15:00:30Z", AGAIN, _usage(3, 1300, 10)),
    ]
    got = import_requests(_write(tmp_path, lines))
    assert not [e for e in got.data["events"] if e["type"] == "change"]
    assert len(analyze(load(got.data)).steps) == 2


def test_a_chat_system_breakpoint_is_kept(tmp_path: Path) -> None:
    system = {
        "role": "system",
        "content": [{"type": "text", "text": SYS, "prompt_cache_breakpoint": {"mode": "explicit"}}],
    }
    request = {"model": "gpt-5.6", "messages": [system, {"role": "user", "content": "q"}]}
    response = {"object": "chat.completion", "usage": {"prompt_tokens": 1300}}
    line = {"timestamp": "2026-03-12T15:00:00Z", "request": request, "response": response}
    (step,) = steps(import_requests(_write(tmp_path, [line])).data)
    assert step.call.request is not None
    assert [(b.name, b.breakpoint) for b in step.call.request] == [
        ("system[0]", True),
        ("messages[0] text", False),
    ]


def test_unknown_anthropic_parts_are_blocks_with_their_marker(tmp_path: Path) -> None:
    search = {"type": "search_result", "source": "s", "content": [], "cache_control": {}}
    messages = [
        {"role": "user", "content": "news?"},
        {"role": "assistant", "content": [{"type": "server_tool_use", "id": "srv_1"}]},
        {"role": "user", "content": [search]},
    ]
    (step,) = steps(
        import_requests(
            _write(tmp_path, [_anthropic("2026-03-12T15:00:00Z", messages, _usage(3, 0, 3000))])
        ).data
    )
    assert step.call.request is not None
    last = step.call.request[-2:]
    assert [(b.name, b.breakpoint) for b in last] == [
        ("messages[1] server_tool_use", False),
        ("messages[2] search_result", True),
    ]
    assert "cache_control" not in last[1].text and '"source": "s"' in last[1].text


@pytest.mark.parametrize(
    ("url", "model", "rid", "provider"),
    [
        (
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/x/invoke",
            "claude-sonnet-4-5-20250929",
            "msg_1",
            "anthropic-bedrock",
        ),
        (None, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "msg_1", "anthropic-bedrock"),
        (None, "claude-sonnet-4-5-20250929", "msg_bdrk_01", "anthropic-bedrock"),
        (
            "https://us-east5-aiplatform.googleapis.com/v1/x:rawPredict",
            "claude-sonnet-4-5@20250929",
            "msg_1",
            "anthropic-vertex",
        ),
        (ANTHROPIC_URL, "claude-sonnet-4-5", "msg_1", "anthropic"),
    ],
)
def test_the_platform_comes_from_host_id_and_model(
    tmp_path: Path, url: str | None, model: str, rid: str, provider: str
) -> None:
    line = _anthropic("2026-03-12T15:00:00Z", FIRST, _usage(3, 0, 1300))
    line["request"]["model"], line["response"]["id"] = model, rid
    if url is None:
        del line["url"]
    else:
        line["url"] = url
    data = import_requests(_write(tmp_path, [line])).data
    assert (data["session"]["provider"], data["session"]["model"]) == (provider, model)
    assert analyze(load(data)).steps[0].usd > 0  # priced at the platform's rates


def test_a_bedrock_model_in_the_url_only(tmp_path: Path) -> None:
    line = _anthropic("2026-03-12T15:00:00Z", FIRST, _usage(3, 0, 1300))
    del line["request"]["model"]
    line["url"] = (
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
        "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke"
    )
    data = import_requests(_write(tmp_path, [line])).data
    assert data["session"]["model"] == "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


def test_deepseek_by_host_with_its_own_hit_counts(tmp_path: Path) -> None:
    def line(at: str, hit: int) -> dict[str, Any]:
        usage = {"prompt_tokens": 1300, "prompt_cache_hit_tokens": hit, "completion_tokens": 9}
        return {
            "timestamp": at,
            "url": "https://api.deepseek.com/chat/completions",
            "request": {"model": "deepseek-chat", "messages": [{"role": "user", "content": SYS}]},
            "response": {"object": "chat.completion", "usage": usage},
        }

    data = import_requests(
        _write(tmp_path, [line("2026-03-12T15:00:00Z", 0), line("2026-03-12T15:01:00Z", 1280)])
    ).data
    assert data["session"]["provider"] == "deepseek"
    second = [e for e in data["events"] if e["type"] == "llm"][1]
    assert second["usage"] == {"input": 20, "cache_read": 1280, "cache_write": 0, "output": 9}
    assert len(analyze(load(data)).steps) == 2


def _responses(
    at: str, rid: str, items: list[Any], output: list[Any], **request: Any
) -> dict[str, Any]:
    return {
        "timestamp": at,
        "url": "https://api.openai.com/v1/responses",
        "request": {"model": "gpt-5", "instructions": "Be brief.", "input": items} | request,
        "response": {
            "id": rid,
            "object": "response",
            "output": output,
            "usage": {"input_tokens": 50},
        },
    }


ANSWER = {
    "type": "message",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "one"}],
}
THOUGHT = {"type": "reasoning", "id": "rs_1", "summary": []}


def test_responses_items_of_every_type_are_blocks(tmp_path: Path) -> None:
    items = [
        THOUGHT,  # an earlier turn's reasoning leaves the input
        {"role": "user", "content": "fix it"},
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAA"},
        {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "*** Begin"},
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "Done"},
    ]
    (step,) = steps(
        import_requests(
            _write(tmp_path, [_responses("2026-03-12T15:00:00Z", "r1", items, [])])
        ).data
    )
    assert step.call.request is not None
    assert [b.name for b in step.call.request] == [
        "system[0]",
        "messages[0] text",
        "messages[1] reasoning",
        "messages[2] custom_tool_call",
        "messages[3] custom_tool_call_output",
    ]
    assert "rs_1" not in "".join(b.text for b in step.call.request)


def test_previous_response_id_prepends_the_stored_conversation(tmp_path: Path) -> None:
    lines = [
        _responses(
            "2026-03-12T15:00:00Z", "resp_1", [{"role": "user", "content": "q1"}], [THOUGHT, ANSWER]
        ),
        _responses(
            "2026-03-12T15:00:30Z",
            "resp_2",
            [{"role": "user", "content": "q2"}],
            [ANSWER],
            previous_response_id="resp_1",
        ),
        _responses("2026-03-12T15:01:00Z", "resp_3", "q3", [], previous_response_id="resp_0"),  # type: ignore[arg-type]
    ]
    got = import_requests(_write(tmp_path, lines))
    second, third = steps(got.data)[1:]
    assert second.call.request is not None and third.call.request is not None
    assert [b.text for b in second.call.request] == ["Be brief.", "q1", "one", "q2"]
    assert [b.text for b in third.call.request] == ["Be brief.", "q3"]
    (warning,) = got.warnings
    assert "previous_response_id" in warning and "line 3: resp_0" in warning


def test_lines_out_of_time_order_are_sorted_with_a_warning(tmp_path: Path) -> None:
    lines = [
        _anthropic("2026-03-12T15:00:00Z", FIRST, _usage(3, 0, 1300)),
        _anthropic("2026-03-12T15:03:00Z", AGAIN, _usage(3, 1300, 10)),
        _anthropic("2026-03-12T15:01:00Z", FIRST, _usage(3, 1300, 0)),
    ]
    got = import_requests(_write(tmp_path, lines))
    llm = [e for e in got.data["events"] if e["type"] == "llm"]
    assert [e["at"] for e in llm] == [
        "2026-03-12T15:00:00Z",
        "2026-03-12T15:01:00Z",
        "2026-03-12T15:03:00Z",
    ]
    assert [e["usage"]["cache_write"] for e in llm] == [1300, 0, 10]
    assert got.warnings == (
        "lines not in time order were put in order of their timestamps (first at line 3)",
    )


@pytest.mark.parametrize("stamp", [1773327600.25, 1773327600250])
def test_epoch_seconds_and_milliseconds(tmp_path: Path, stamp: float) -> None:
    line = _anthropic("", FIRST, _usage(3, 0, 1300)) | {"timestamp": stamp}
    data = import_requests(_write(tmp_path, [line])).data
    assert data["events"][1]["at"].startswith("2026-03-12T15:00:00.25")


def test_an_epoch_of_no_known_unit_names_the_number(tmp_path: Path) -> None:
    line = _anthropic("", FIRST, _usage(3, 0, 1300)) | {"timestamp": 17733276}
    with pytest.raises(ImporterError, match=r":1: timestamp: .*found the number 17733276$"):
        import_requests(_write(tmp_path, [line]))
