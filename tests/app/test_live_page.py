"""The Live page follows a capture log: rows for new lines on the next poll, the totals,
a missing file waited for, hostile text shown inert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app_helpers import block_picker, new_app
from streamlit.testing.v1 import AppTest

PAGE = "pages/7_Live.py"


def line(n: int, **extra: Any) -> str:
    return (
        json.dumps(
            {
                "request": {
                    "timestamp": f"2026-12-01T10:00:0{n}+00:00",
                    "method": "POST",
                    "url": "https://api.anthropic.com/v1/messages",
                    "headers": {},
                    "body": {"model": "claude-sonnet-4-5"},
                },
                "response": {"timestamp": "", "status_code": 200, "headers": {}, "body": {}},
                "session": "s1",
                "prediction": {
                    "status": "ready",
                    "model": "claude-sonnet-4-5",
                    "read": 4000 * n,
                    "write": 100,
                    "uncached": 20,
                    "miss": None,
                },
                "billed": {
                    "read": 4000 * n,
                    "write": 100,
                    "uncached": 20,
                    "output": 5,
                    "usd": 0.01,
                    "simulated_usd": 0.01,
                    "no_cache_usd": 0.05,
                },
            }
            | extra
        )
        + "\n"
    )


def open_page(log: Path) -> AppTest:
    at = new_app()
    at.run()
    at.query_params["log"] = str(log)
    at.switch_page(PAGE)
    return at.run()


def test_rows_and_totals_grow_with_the_log(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(line(1) + line(2))
    at = open_page(log)
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Requests"] == "2" and metrics["As predicted"] == "2 of 2"
    assert metrics["Billed"] == "$0.0200" and metrics["Without caching"] == "$0.1000"
    with log.open("a") as f:
        f.write(line(3, billed={"read": 0, "write": 12100, "uncached": 20, "usd": 0.05}))
        f.write('{"request": {"timestamp": "2026-12-01T10:00:04')  # still being written
    at.run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Requests"] == "3" and metrics["As predicted"] == "2 of 3"
    frame = at.dataframe[0].value
    assert list(frame["billed read"])[:1] == [0]  # the latest first


def test_a_log_not_written_yet_is_waited_for(tmp_path: Path) -> None:
    at = open_page(tmp_path / "not-yet.jsonl")
    assert not at.exception
    assert "does not exist yet" in at.info[0].value


def test_hostile_text_stays_text(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(
        line(1, session="<script>window.__pwned=1</script>", error="<img src=x onerror=alert(1)>")
    )
    at = open_page(log)
    assert not at.exception
    frame = at.dataframe[0].value
    assert frame["session"][0] == "<script>window.__pwned=1</script>"  # a cell, drawn as text


def test_one_session_of_several(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(line(1) + line(2, session="s2") + line(3, session="s2"))
    at = open_page(log)
    assert {m.label: m.value for m in at.metric}["Requests"] == "3"
    at.selectbox(key="live_session").select("s2").run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Requests"] == "2"


SYSTEM = [
    {"type": "text", "text": "You are careful. " * 400, "cache_control": {"type": "ephemeral"}}
]


def call(n: int, tools: list[dict[str, Any]], session: str = "s1") -> str:
    """A capture line of turn ``n`` of a conversation, answered, as the proxy writes it."""
    messages: list[dict[str, Any]] = []
    for i in range(1, n + 1):
        messages.append({"role": "user", "content": f"question {i}: " + "why? " * 50})
        if i < n:
            messages.append({"role": "assistant", "content": f"answer {i}"})
    body = {"model": "claude-sonnet-4-5", "max_tokens": 8, "system": SYSTEM, "messages": messages}
    if tools:
        body["tools"] = tools
    return line(
        n,
        request={
            "timestamp": f"2026-12-01T10:00:0{n}+00:00",
            "method": "POST",
            "url": "https://api.anthropic.com/v1/messages",
            "headers": {},
            "body": body,
        },
        response={
            "timestamp": "",
            "status_code": 200,
            "headers": {},
            "body": {"type": "message", "usage": {"input_tokens": 10, "output_tokens": 2}},
        },
        session=session,
        prediction={
            "status": "ready",
            "model": "claude-sonnet-4-5",
            "read": 0,
            "write": 0,
            "uncached": 0,
            "miss": None,
            "scale": 1.0,
        },
    )


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"The {name} tool.", "input_schema": {"type": "object"}}


def request_picker(at: AppTest) -> Any:
    """The Request picker (its key names the newest request and the one shown:
    ``live_view.picker_key``)."""
    (picker,) = [w for w in at.selectbox if str(w.key).startswith("live_request_")]
    return picker


def html_of(at: AppTest) -> str:
    return "".join(h.proto.body for h in at.get("html"))


def test_any_request_as_its_step_with_the_diff_against_the_one_before(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(call(1, [tool("read")]) + call(2, [tool("read")]))
    at = open_page(log)
    assert not at.exception
    picker = request_picker(at)
    assert len(picker.options) == 2 and picker.value.startswith("#2 · 10:00:02")  # the latest first
    assert any("Step 2 of session s1" in c.value for c in at.caption)
    assert "cai-stack" in html_of(at) or "cai-block" in html_of(at)
    # a request written while the page is open: a tool inserted before the first
    with log.open("a") as f:
        f.write(call(3, [tool("grep"), tool("read")]))
    at.run()
    picker = request_picker(at)
    assert len(picker.options) == 3
    picker.select(picker.options[0]).run()  # the list's first: the newest
    assert any("Step 3 of session s1" in c.value for c in at.caption)
    assert any("tools" in w.value for w in at.warning)  # the miss, named
    blocks = block_picker(at, 3)
    assert blocks.value == "tools[0] grep"  # the changed block first
    blocks.select("system[0]").run()
    assert "no line changed since the previous step" in html_of(at)
    block_picker(at, 3).select("tools[0] grep").run()
    page = html_of(at)
    assert "cai-diffsum" in page and "The grep tool." in page.split('class="cai-diff"')[1]
    # an earlier request: its step, from the lines before it only
    request_picker(at).select(request_picker(at).options[2]).run()
    assert any("Step 1 of session s1" in c.value for c in at.caption)
    # a request picked stays picked when a newer one arrives; picking the newest follows again
    with log.open("a") as f:
        f.write(call(4, [tool("grep"), tool("read")]))
    at.run()
    picker = request_picker(at)
    assert len(picker.options) == 4 and picker.value.startswith("#1 · ")
    assert any("Step 1 of session s1" in c.value for c in at.caption)
    picker.select(picker.options[0]).run()
    with log.open("a") as f:
        f.write(call(5, [tool("grep"), tool("read")]))
    at.run()
    assert request_picker(at).value.startswith("#5 · ")
    assert not at.exception


def test_a_failed_call_has_no_step(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    failed = json.loads(call(2, []))
    failed["response"] = {
        "status_code": 500,
        "body": {"type": "error", "error": {"type": "api_error"}},
    }
    log.write_text(call(1, []) + json.dumps(failed) + "\n")
    at = open_page(log)
    assert not at.exception
    assert "failed" in at.info[0].value
