"""The Live page follows a capture log: rows for new lines on the next poll, the totals,
a missing file waited for, hostile text shown inert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app_helpers import new_app
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
