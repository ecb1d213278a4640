"""``import otel`` on traces as instrumentations write them: agent, embeddings and failed
spans beside the calls, the older GenAI attribute names, and input counts that leave
the cached tokens out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assembler.cache.tokenizers import counter
from assembler.sessions.importers import ImporterError
from assembler.sessions.importers.history import Imported
from assembler.sessions.importers.otel import import_otel

T0 = 1_773_307_800 * 10**9
SYSTEM = "You are the support assistant of a bicycle shop. Answer briefly. " * 100
count = counter("o200k_base").count


def attr(key: str, v: str | int) -> dict[str, Any]:
    return {"key": key, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}


def span(
    at: int, values: dict[str, str | int], status: dict[str, Any] | None = None
) -> dict[str, Any]:
    s = {
        "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
        "spanId": f"{at:016x}",
        "name": f"span {at}",
        "startTimeUnixNano": str(T0 + at * 10**9),
        "attributes": [attr(k, v) for k, v in values.items()],
    }
    return s | ({"status": status} if status else {})


def chat(inp: int, read: int, write: int, out: int = 10) -> dict[str, str | int]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "gen_ai.usage.input_tokens": inp,
        "gen_ai.usage.cache_read.input_tokens": read,
        "gen_ai.usage.cache_creation.input_tokens": write,
        "gen_ai.usage.output_tokens": out,
    }


def run(tmp_path: Path, *scopes: tuple[str, list[dict[str, Any]]]) -> Imported:
    doc = {
        "resourceSpans": [
            {"scopeSpans": [{"scope": {"name": name}, "spans": spans} for name, spans in scopes]}
        ]
    }
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(doc), "utf-8")
    return import_otel(path, count)


def usages(imported: Imported) -> list[dict[str, int] | None]:
    return [e.get("usage") for e in imported.data["events"] if e["type"] == "llm"]


def test_an_agent_span_with_the_summed_usage_is_no_request(tmp_path: Path) -> None:
    agent = chat(2720, 0, 0, 20) | {"gen_ai.operation.name": "invoke_agent"}
    got = run(
        tmp_path,
        ("x", [span(0, agent), span(1, chat(1360, 0, 1355)), span(30, chat(1365, 1355, 5))]),
    )
    assert usages(got) == [
        {"input": 5, "cache_read": 0, "cache_write": 1355, "output": 10},
        {"input": 5, "cache_read": 1355, "cache_write": 5, "output": 10},
    ]
    assert got.warnings == ("skipped 1 invoke_agent span: only billed model calls are requests",)


def test_embeddings_and_a_refused_call_are_no_requests_and_are_counted(tmp_path: Path) -> None:
    embed = {
        "gen_ai.operation.name": "embeddings",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "text-embedding-3-small",
        "gen_ai.usage.input_tokens": 12,
    }
    refused = {k: v for k, v in chat(0, 0, 0).items() if "usage" not in k} | {"error.type": "429"}
    spans = [
        span(1, chat(1360, 0, 1355)),
        span(5, embed),
        span(7, embed),
        span(10, refused, {"code": 2, "message": "rate_limit_error"}),
        span(30, chat(1365, 1355, 5)),
    ]
    got = run(tmp_path, ("x", spans))
    assert len(usages(got)) == 2
    assert [e["type"] for e in got.data["events"]] == ["enter", "llm", "llm", "exit"]  # no change
    assert got.warnings == (
        "skipped 2 embeddings spans, 1 failed call without usage: only billed model calls are"
        " requests",
    )
    with pytest.raises(ImporterError, match=r"\(skipped 2 embeddings spans\)$"):
        run(tmp_path, ("x", spans[1:3]))


def old(prompt: int, read: int, write: int, completion: int = 10) -> dict[str, str | int]:
    return {
        "gen_ai.system": "Anthropic",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "llm.request.type": "chat",
        "gen_ai.usage.prompt_tokens": prompt,
        "gen_ai.usage.completion_tokens": completion,
        "gen_ai.usage.cache_read_input_tokens": read,
        "gen_ai.usage.cache_creation_input_tokens": write,
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": SYSTEM,
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": "question",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "answer",
        "llm.request.functions.0.name": "lookup_order",
    }


def test_older_genai_names_are_read(tmp_path: Path) -> None:
    embedding = old(7, 0, 0) | {"llm.request.type": "embedding"}
    got = run(
        tmp_path,
        ("x", [span(1, old(1360, 0, 1355)), span(2, embedding), span(30, old(1365, 1355, 5))]),
    )
    assert usages(got) == [
        {"input": 5, "cache_read": 0, "cache_write": 1355, "output": 10},
        {"input": 5, "cache_read": 1355, "cache_write": 5, "output": 10},
    ]
    first = next(e for e in got.data["events"] if e["type"] == "llm")
    blocks = first["request"]["blocks"]
    names = [b["name"] for b in blocks]
    assert names == ["unrecorded prefix", "tools[0]", "system[0]", "messages[1] user"]
    assert blocks[1]["text"] == '{"name": "lookup_order"}' and blocks[2]["text"] == SYSTEM
    assert first["output"] == "answer"
    assert got.warnings == ("skipped 1 embeddings span: only billed model calls are requests",)
    both = old(9, 0, 0) | chat(1360, 0, 1355)  # the current names win
    assert usages(run(tmp_path, ("x", [span(1, both)])))[0] == usages(got)[0]


def test_a_trace_without_usage_says_so(tmp_path: Path) -> None:
    bare = {k: v for k, v in old(0, 0, 0).items() if "usage" not in k}
    got = run(tmp_path, ("x", [span(1, bare)]))
    assert usages(got) == [None]
    assert got.warnings == (
        "no span carries usage (gen_ai.usage.* or llm.token_count.*): the requests have no"
        " measured usage; analyze simulates only",
    )


def test_an_instrumentation_copying_the_uncached_input_is_read_so_on_every_span(
    tmp_path: Path,
) -> None:
    copied = [
        span(1, chat(1360, 0, 1355)),
        span(30, chat(3000, 1355, 500)),
        span(60, chat(5, 1855, 0)),
    ]
    conformant = [span(90, chat(1400, 1355, 5))]
    got = run(tmp_path, ("copies", copied), ("conforms", conformant))
    assert usages(got) == [
        {"input": 1360, "cache_read": 0, "cache_write": 1355, "output": 10},
        {"input": 3000, "cache_read": 1355, "cache_write": 500, "output": 10},
        {"input": 5, "cache_read": 1855, "cache_write": 0, "output": 10},
        {"input": 40, "cache_read": 1355, "cache_write": 5, "output": 10},
    ]
    assert got.warnings == (
        "anthropic spans of instrumentation 'copies' report input tokens without the cached"
        " ones (an input smaller than its cache reads and writes): all 3 read so",
    )
    # without a span proving the copy, the conventions hold: input includes the cached
    assert usages(run(tmp_path, ("copies", copied[:2])))[1] == {
        "input": 1145,
        "cache_read": 1355,
        "cache_write": 500,
        "output": 10,
    }


def test_a_skip_count_puts_the_plural_on_its_noun() -> None:
    from assembler.sessions.importers.otel.traces import _counted

    assert _counted(2, "failed call without usage") == "2 failed calls without usage"
    assert _counted(3, "invoke_agent span") == "3 invoke_agent spans"
    assert _counted(1, "failed call without usage") == "1 failed call without usage"
