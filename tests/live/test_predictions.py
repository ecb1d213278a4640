"""Predictions made beside the forward equal what ``analyze`` computes for the same log
afterwards, session by session; sessions are told apart as the provider's cache would."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from capture_reader import as_request_log
from fake_upstream import FakeUpstream
from proxy_process import RunningProxy, running_proxy

from assembler.analysis.engine import (
    SessionAssembler,
    analyze,
    builtin_layout,
    import_session,
    request_json,
)
from assembler.sessions.loader import load_session, parse_session
from scripts.app_server import ROOT


@pytest.fixture(scope="module")
def proxy(
    upstream: FakeUpstream, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningProxy]:
    log = tmp_path_factory.mktemp("predictions") / "log.jsonl"
    # a loaded machine may take long: a late prediction would leave its line out of its session
    with running_proxy(upstream.url, log, "--prediction-wait", "60") as running:
        yield running


def _post(proxy: RunningProxy, path: str, body: dict[str, Any]) -> None:
    with httpx.Client(timeout=30) as http:
        r = http.post(f"{proxy.url}{path}", json=body, headers={"x-api-key": "sk-ant-test"})
        assert r.status_code == 200, r.text


def _analysed(lines: list[dict[str, Any]], session: str, tmp: Path) -> list[Any]:
    log = as_request_log(lines, tmp / f"{session}.jsonl", session)
    imported = import_session("requests", log)
    return list(analyze(parse_session(json.dumps(imported.data), str(log), jsonl=False)).steps)


def _check(lines: list[dict[str, Any]], tmp: Path) -> int:
    """Every prediction against the analysis of its session's lines; the steps checked."""
    sessions = {x["session"] for x in lines if x.get("prediction", {}).get("status") == "ready"}
    checked = 0
    for name in sorted(sessions):
        mine = sorted(
            (x for x in lines if x.get("session") == name), key=lambda x: x["request"]["timestamp"]
        )
        steps = _analysed(mine, name, tmp)
        served = [x for x in mine if x["response"]["status_code"] < 400]  # as the importer reads
        assert len(steps) == len(served)
        for line, step in zip(served, steps, strict=True):
            p = line["prediction"]
            assert p["status"] == "ready", p
            assert (p["read"], p["write"], p["uncached"]) == (step.read, step.write, step.uncached)
            miss = None if step.miss is None else f"{step.miss.component} ({step.miss.reason})"
            assert p["miss"] == miss
            checked += 1
    return checked


def test_a_recorded_session_driven_through_the_proxy(proxy: RunningProxy, tmp_path: Path) -> None:
    session = load_session(ROOT / "sample_sessions" / "research_agent.yaml")
    steps = SessionAssembler(session, builtin_layout("seed"))
    sent = 0
    for assembled in steps:
        body = json.loads(request_json(assembled, "anthropic", None, session.id))
        _post(proxy, "/v1/messages", body | {"max_tokens": 64})
        sent += 1
    lines = proxy.wait_lines(sent)
    assert _check(lines, tmp_path) == sent
    assert len({x["session"] for x in lines}) == 1
    reads = [x["prediction"]["read"] for x in lines]
    assert reads[0] == 0 and max(reads) > 4000  # a cold start, then reads from the cache


def _tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool. " + "It looks things up with care. " * 60,
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
    }


def test_two_clients_at_once_a_tool_added_and_the_responses_api(
    proxy: RunningProxy, tmp_path: Path
) -> None:
    start = len(proxy.lines())
    tools = [_tool("read"), _tool("grep"), _tool("edit")]
    systems = ["You are the first agent. " * 150, "You are the second agent. " * 150]
    histories: list[list[dict[str, Any]]] = [[], []]
    for turn in range(4):
        if turn == 3:
            tools = [*tools[:1], _tool("search"), *tools[1:]]  # a tool added at position 1
        for i, system in enumerate(systems):
            histories[i] += [{"role": "user", "content": f"turn {turn} of agent {i}"}]
            body = {
                "model": "claude-sonnet-4-5",
                "max_tokens": 64,
                "tools": tools,
                "system": [
                    {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
                ],
                "messages": histories[i],
            }
            _post(proxy, "/v1/messages", body)
            histories[i] += [{"role": "assistant", "content": f"answer {turn}"}]
    items: list[dict[str, Any]] = []
    for turn in range(3):
        items += [{"role": "user", "content": f"codex turn {turn} " + "context " * 400}]
        body = {
            "model": "gpt-5",
            "instructions": "You are Codex.",
            "input": items,
            "prompt_cache_key": "codex-1",
        }
        _post(proxy, "/v1/responses", body)
        items += [{"role": "assistant", "content": f"answer {turn}"}]
    lines = proxy.wait_lines(start + 11)[start:]
    assert _check(lines, tmp_path) == 11
    by_session: dict[str, list[dict[str, Any]]] = {}
    for x in lines:
        by_session.setdefault(x["session"], []).append(x)
    assert len(by_session) == 3 and len(by_session["codex-1"]) == 3
    anthropic_sessions = [v for k, v in by_session.items() if k != "codex-1"]
    for mine in anthropic_sessions:
        last = max(mine, key=lambda x: x["request"]["timestamp"])["prediction"]
        assert last["miss"] is not None and "tools" in last["miss"], last


def test_clients_at_once_each_prediction_stays_with_its_own_request(
    proxy: RunningProxy, tmp_path: Path
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    start = len(proxy.lines())

    def agent(i: int) -> None:
        history: list[dict[str, Any]] = []
        system = f"You are agent number {i}. " * 200
        with httpx.Client(timeout=60) as http:
            for turn in range(4):
                history.append({"role": "user", "content": f"agent {i}, turn {turn}"})
                body = {
                    "model": "claude-sonnet-4-5",
                    "max_tokens": 8,
                    "stream": True,
                    "system": [
                        {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
                    ],
                    "messages": history,
                }
                # streamed slowly, so the agents' exchanges overlap in the proxy; one call
                # fails at once, and must stay out of its own session's cache only
                fails = (i, turn) == (0, 1)
                headers = {"x-fake": "fail-500" if fails else "trickle", "x-agent": str(i)}
                r = http.post(f"{proxy.url}/v1/messages", json=body, headers=headers)
                assert r.status_code == (500 if fails else 200)
                history.append({"role": "assistant", "content": f"answer {turn}"})

    with ThreadPoolExecutor(3) as pool:
        list(pool.map(agent, range(3)))
    lines = proxy.wait_lines(start + 12)[start:]
    assert _check(lines, tmp_path) == 11
    by_agent: dict[str, set[str]] = {}
    for x in lines:
        by_agent.setdefault(x["request"]["headers"]["x-agent"], set()).add(x["session"])
    assert all(len(s) == 1 for s in by_agent.values()) and len(by_agent) == 3
