"""The tier that served a request is recorded as ``settings.service_tier``: from the
response (OpenAI ``service_tier``, Anthropic ``usage.service_tier``), else the request;
a standard tier records nothing, so logs of standard requests import as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from importer_helpers import CLAUDE, load

from assembler.analysis.engine.importing import import_file


def _chat_line(request_tier: str | None, response_tier: str | None) -> str:
    request: dict[str, Any] = {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "Why?"}],
        **({"service_tier": request_tier} if request_tier else {}),
    }
    response: dict[str, Any] = {
        "object": "chat.completion",
        "created": 1_791_000_000,
        "choices": [{"message": {"role": "assistant", "content": "Because."}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3},
        **({"service_tier": response_tier} if response_tier else {}),
    }
    return json.dumps({"request": request, "response": response, "provider": "openai"})


def _anthropic_line(tier: str) -> str:
    request = {"model": "claude-opus-4-8", "messages": [{"role": "user", "content": "Why?"}]}
    response = {
        "type": "message",
        "content": [{"type": "text", "text": "Because."}],
        "usage": {"input_tokens": 12, "output_tokens": 3, "service_tier": tier},
    }
    line = {"timestamp": "2026-11-02T10:00:00Z", "request": request, "response": response}
    return json.dumps(line)


def _tier(path: Path, kind: str = "requests") -> list[str | None]:
    data = import_file(kind, path)
    load(data)  # the loader takes what the importer wrote
    return [
        (e.get("settings") or {}).get("service_tier") for e in data["events"] if e["type"] == "llm"
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (_chat_line("auto", "priority"), "priority"),  # the response says what served it
        (_chat_line("flex", None), "flex"),  # no answer: the tier asked for
        (_chat_line("auto", "default"), None),  # standard: nothing recorded
        (_chat_line(None, None), None),
        (_anthropic_line("batch"), "batch"),
        (_anthropic_line("priority"), "priority"),
        (_anthropic_line("standard"), None),
    ],
)
def test_the_request_log_records_the_tier_that_served_it(
    tmp_path: Path, line: str, expected: str | None
) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(line + "\n", "utf-8")
    assert _tier(path) == [expected]


def test_claude_code_records_a_tier_other_than_standard(tmp_path: Path) -> None:
    text = CLAUDE.read_text("utf-8")
    assert _tier(CLAUDE, "claude-code") == [None] * len(_tier(CLAUDE, "claude-code"))
    # the transcript's last request, its records marked priority
    records = text.splitlines()
    last = max(i for i, r in enumerate(records) if '"service_tier": "standard"' in r)
    records[last] = records[last].replace(
        '"service_tier": "standard"', '"service_tier": "priority"'
    )
    path = tmp_path / CLAUDE.name
    path.write_text("\n".join(records) + "\n", "utf-8")
    tiers = _tier(path, "claude-code")
    assert tiers[-1] == "priority"
    assert set(tiers[:-1]) == {None}
