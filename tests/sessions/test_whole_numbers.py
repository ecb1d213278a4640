"""A number written with a zero fraction (``1.0``) is the integer it is, as JSON Schema
reads it: it loads as an int, and a session using it analyses like one written ``1``."""

from __future__ import annotations

import json

import pytest

from assembler.analysis.engine.analyzer import analyze
from assembler.sessions.loader import parse_session
from assembler.sessions.model import LLMCall, SessionError

AT = "2026-03-02T09:00:0{}Z"


def _session(keep: object, tokens: object) -> dict[str, object]:
    block = {"section": "messages", "text": "turn 0", "tokens": tokens}
    return {
        "format": "context-session/1",
        "session": {
            "id": "whole",
            "agent": {"name": "a", "description": "d"},
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
        },
        "events": [
            {"type": "enter", "function": "main", "at": AT.format(0)},
            {
                "type": "llm",
                "input": "q",
                "output": "a",
                "at": AT.format(1),
                "request": {"blocks": [block]},
            },
            {
                "type": "llm",
                "input": "q",
                "output": "a",
                "at": AT.format(2),
                "request": {"keep": keep, "blocks": [{"section": "messages", "text": "turn 1"}]},
            },
            {"type": "exit", "function": "main", "at": AT.format(3)},
        ],
    }


@pytest.mark.parametrize("as_yaml", [False, True])
def test_a_whole_number_with_a_fraction_reads_as_an_integer(as_yaml: bool) -> None:
    text = json.dumps(_session(1.0, 5.0))
    if as_yaml:  # the same document through the YAML reader (JSON is YAML)
        text = text.replace('"format"', ' "format"', 1)
    session = parse_session(text, "whole.json")
    calls = [e for e in session.events if isinstance(e, LLMCall)]
    request = calls[1].request
    assert request is not None and [b.text for b in request] == ["turn 0", "turn 1"]
    first = calls[0].request
    assert first is not None and type(first[0].tokens) is int and first[0].tokens == 5
    plain = parse_session(json.dumps(_session(1, 5)), "whole.json")
    assert analyze(session).steps == analyze(plain).steps


def test_a_fraction_is_still_refused_where_a_count_is_expected() -> None:
    with pytest.raises(SessionError, match=r"keep: expected an integer, found the number 1\.5"):
        parse_session(json.dumps(_session(1.5, 5)), "whole.json")
