"""Predictions made beside the forward equal what ``analyze`` computes for the same log
afterwards, session by session, at the size factor each was counted at; sessions are told
apart as the provider's cache would; the sizes follow the bill as it arrives."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from captured import analysed, predicted_lines
from fake_upstream import FakeUpstream
from proxy_process import RunningProxy, running_proxy

from assembler.analysis.engine import SessionAssembler, builtin_layout, request_json
from assembler.sessions.loader import load_session
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


def _check(lines: list[dict[str, Any]], tmp: Path) -> int:
    """Every prediction against the analysis of its session's log up to it, the sizes at
    the factor it was counted at (the fake's bill moves it); the steps checked."""
    sessions = {x["session"] for x in lines if x.get("prediction", {}).get("status") == "ready"}
    checked = 0
    for name in sorted(sessions):
        mine = predicted_lines(lines, name)
        for k, line in enumerate(mine):
            if line["response"]["status_code"] >= 400:
                continue  # not a step: the importer leaves a failed call out
            p = line["prediction"]
            assert p["status"] == "ready", p
            step = analysed(mine[: k + 1], tmp / "log.jsonl", {p["model"]: p["scale"]})[-1]
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
    assert reads[0] == 0 and max(reads) > 1000  # a cold start, then reads from the cache
    # the fake bills every request 1,812 tokens: the sizes shrink to what it bills
    assert lines[0]["prediction"]["scale"] == 1.0 and lines[-1]["prediction"]["scale"] < 1


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


def test_the_sizes_follow_the_bill_as_it_arrives(
    proxy: RunningProxy, upstream: FakeUpstream, tmp_path: Path
) -> None:
    """A provider whose tokenizer counts 1.2 tokens for each of ours: from the first answer
    on, the predicted read, write and uncached tokens are the ones it bills."""
    start = len(proxy.lines())
    system = [
        {
            "type": "text",
            "text": "You are a careful agent. " * 500,
            "cache_control": {"type": "ephemeral"},
        }
    ]
    bodies, messages = [], []
    for turn in range(5):
        messages = [*messages, {"role": "user", "content": f"turn {turn} " + "look closer. " * 80}]
        bodies.append(
            {"model": "claude-sonnet-4-5", "max_tokens": 8, "system": system, "messages": messages}
        )
        messages = [*messages, {"role": "assistant", "content": f"answer {turn}"}]
    # what that provider bills: the requests analysed with its sizes, in advance
    now = "2026-12-01T10:00:0{}+00:00"
    drafted = [
        {
            "request": {"timestamp": now.format(i), "url": "/v1/messages", "body": b},
            "response": {"status_code": 200, "body": {"usage": {"input_tokens": 1}}},
        }
        for i, b in enumerate(bodies)
    ]
    bills = analysed(drafted, tmp_path / "provider.jsonl", {"claude-sonnet-4-5": 1.2})
    upstream.usage.extend(
        {
            "input": s.uncached,
            "cache_read": s.read,
            "cache_write": s.write,
            "write_1h": 0,
            "output": 3,
        }
        for s in bills
    )
    for body in bodies:
        _post(proxy, "/v1/messages", body)
    lines = proxy.wait_lines(start + len(bodies))[start:]
    predicted = [x["prediction"] for x in lines]
    billed = [(x["billed"]["read"], x["billed"]["write"], x["billed"]["uncached"]) for x in lines]
    assert predicted[0]["scale"] == 1.0  # nothing billed yet: the sizes as counted
    assert (predicted[0]["read"], predicted[0]["write"], predicted[0]["uncached"]) != billed[0]
    for p, bill in zip(predicted[1:], billed[1:], strict=True):
        assert p["scale"] == 1.2
        assert (p["read"], p["write"], p["uncached"]) == bill
    assert billed[1][0] > 0  # the later requests read the cache
    assert _check(lines, tmp_path) == len(bodies)
