"""A continued Responses conversation built from the request before it gives the blocks
the whole conversation gives, in time linear in the log; the blocks it shares with the
request before are exactly those."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.sessions.importers.request_cache import content_facts
from assembler.sessions.importers.request_logs.requests_log import import_requests
from assembler.sessions.importers.request_logs.requests_shapes import (
    responses_blocks,
    stored_conversation,
)
from assembler.sessions.importers.request_logs.responses_chain import ResponsesChain
from assembler.sessions.loader import load_session
from assembler.sessions.model import LLMCall

ITEMS = st.sampled_from(
    [
        {"role": "user", "content": "next question"},
        {"role": "user", "content": [{"type": "input_image", "image_url": "data:x"}]},
        {"role": "developer", "content": "be brief"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
        {"type": "function_call", "name": "ls", "arguments": "{}", "call_id": "c"},
        {"type": "function_call_output", "call_id": "c", "output": "a b"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
        {"type": "web_search_call", "status": "completed", "prompt_cache_breakpoint": {}},
    ]
)  # fmt: skip
STEP = st.tuples(
    st.lists(ITEMS, max_size=4),  # the request's own input
    st.lists(ITEMS, max_size=3),  # the response's output
    st.sampled_from(["last", "first", "none", "missing"]),  # what it continues
    st.booleans(),  # new tools
)


def _reference(
    steps: list[tuple[list[Any], list[Any], str, bool]],
) -> list[tuple[dict[str, Any], dict[str, Any], list[Any]]]:
    """Each request, its response and the whole conversation it stands for, the slow way."""
    out: list[tuple[dict[str, Any], dict[str, Any], list[Any]]] = []
    stored: dict[str, list[Any]] = {}
    for n, (own, output, continues, tools) in enumerate(steps):
        request: dict[str, Any] = {"model": "gpt-5", "input": own}
        if tools:
            request["tools"] = [{"type": "function", "name": f"t{n}"}]
        prev = {"last": f"r{n - 1}", "first": "r0", "none": None, "missing": "gone"}[continues]
        if prev is not None and n:
            request["previous_response_id"] = prev
        earlier = stored.get(prev or "", []) if n else []
        whole = earlier + stored_conversation(request, {})
        response = {"id": f"r{n}", "output": output}
        stored[f"r{n}"] = whole + output
        out.append((request, response, whole))
    return out


@settings(max_examples=150, deadline=None, database=None)
@given(st.lists(STEP, min_size=1, max_size=12))
def test_built_as_the_whole_conversation(steps: list[tuple[list[Any], list[Any], str, bool]]) -> None:  # fmt: skip
    chain = ResponsesChain()
    before: list[dict[str, Any]] | None = None
    for request, response, whole in _reference(steps):
        got = chain.build(1, request, response)
        assert got.blocks == responses_blocks({**request, "input": whole})
        assert got.facts == content_facts(whole)
        assert got.marks == [i for i, b in enumerate(got.blocks) if b.get("breakpoint")]
        if got.shared:
            assert got.base is before and before is not None
            assert got.blocks[: got.shared] == before[: got.shared]
        before = got.blocks


def test_a_chain_is_written_with_keep_and_reads_back_whole(tmp_path: Path) -> None:
    lines = []
    for n in range(30):
        request: dict[str, Any] = {
            "model": "gpt-5",
            "input": [{"role": "user", "content": f"q{n}"}],
        }
        if n:
            request["previous_response_id"] = f"r{n - 1}"
        output = [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"a{n}"}]}]  # fmt: skip
        response = {"id": f"r{n}", "object": "response", "output": output, "usage": {"input_tokens": 10 * n + 5, "output_tokens": 2}}  # fmt: skip
        lines.append({"timestamp": f"2026-03-12T09:00:{n:02d}Z", "request": request, "response": response})  # fmt: skip
    path = tmp_path / "chain.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    data = import_requests(path).data
    requests = [e["request"] for e in data["events"] if e["type"] == "llm"]
    # each request keeps the one before whole and writes the answer to it and its question
    assert all(r["keep"] == 2 * n - 1 for n, r in enumerate(requests) if n)
    assert all(len(r["blocks"]) == 2 for r in requests[1:])
    out = tmp_path / "s.jsonl"
    out.write_text("\n".join(json.dumps(x) for x in [{k: v for k, v in data.items() if k != "events"}, *data["events"]]), "utf-8")  # fmt: skip
    calls = [e for e in load_session(out).events if isinstance(e, LLMCall)]
    assert calls[-1].request is not None
    assert [b.text for b in calls[-1].request.blocks()][-3:] == ["q28", "a28", "q29"]
