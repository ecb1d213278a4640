"""``session_from_document``: an imported document checked as the loader checks the JSON
Lines file of it, without the file — the same session from every importer's fixtures, and
the same refusal, word for word, where the loader refuses the file."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from assembler.analysis.engine import import_file
from assembler.sessions.generator import generate_session, jsonl_lines
from assembler.sessions.loader import parse_session, session_from_document
from assembler.sessions.model import LLMCall, SessionError

FIXTURES = Path(__file__).parent / "importers" / "fixtures"
IMPORTED = [
    ("claude-code", FIXTURES / "claude_code" / "session.jsonl"),
    ("codex", FIXTURES / "codex" / "rollout-2026-03-12T14-00-00-019a9776.jsonl"),
    ("requests", FIXTURES / "requests" / "proxy.jsonl"),
    ("otel", FIXTURES / "otel" / "genai.json"),
    ("otel", FIXTURES / "otel" / "openinference.json"),
]


def _from_file(data: dict[str, Any]) -> Any:
    return parse_session("".join(jsonl_lines(data)), "out.jsonl")


@pytest.mark.parametrize(("kind", "path"), IMPORTED, ids=[p.name for _, p in IMPORTED])
def test_an_imported_document_is_the_session_its_file_reads_as(kind: str, path: Path) -> None:
    data = import_file(kind, path)
    in_memory, read = session_from_document(data, "out.jsonl"), _from_file(data)
    assert in_memory == read
    calls = [
        (a, b)
        for a, b in zip(in_memory.events, read.events, strict=True)
        if isinstance(a, LLMCall) and isinstance(b, LLMCall)
    ]
    assert calls
    for a, b in calls:
        assert (a.request is None) == (b.request is None)
        assert a.request is None or b.request is None or a.request.blocks() == b.request.blocks()


def _refusal(data: dict[str, Any], check: Any) -> str:
    with pytest.raises(SessionError) as caught:
        check(data)
    return str(caught.value)


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d["events"][3].update(at="yesterday"),
        lambda d: d["events"][5].update(type="progress"),
        lambda d: d["session"].update(id=""),
        lambda d: d["events"][2].update(output="\ud800"),
        lambda d: d["events"][4].update(usage={"input": 2**53, "output": 1}),
    ],
    ids=["time", "event-type", "session-id", "lone-surrogate", "count-past-2-53"],
)
def test_a_document_the_loader_refuses_is_refused_in_the_same_words(damage: Any) -> None:
    data = generate_session(8, 0)
    damaged = copy.deepcopy(data)
    damage(damaged)
    in_memory = _refusal(damaged, lambda d: session_from_document(d, "out.jsonl"))
    from_file = _refusal(damaged, _from_file)
    assert in_memory == from_file
