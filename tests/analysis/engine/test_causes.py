"""Miss causes from one taxonomy, and the provider's diagnostic beside ours."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.causes import expected_types
from assembler.analysis.engine.importing import import_file
from assembler.analysis.reports.report_json import analysis_json
from assembler.sessions.loader import parse_session
from assembler.sessions.model import SessionError

FIXTURES = Path(__file__).parents[2] / "sessions" / "importers" / "fixtures" / "requests"
SYSTEM = "\n".join(f"rule {i}: keep the ledger balanced and the tests green" for i in range(300))


def llm(
    at: str, question: str, settings: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "llm",
        "at": at,
        "output": "ok",
        "request": {
            "blocks": [
                {"section": "system", "text": SYSTEM, "breakpoint": True},
                {"section": "messages", "text": question, "breakpoint": True},
            ]
        },
        **extra,
    }
    if settings is not None:
        event["settings"] = settings
    return event


def session(*calls: dict[str, Any], model: str = "claude-sonnet-4-5") -> str:
    doc = {
        "format": "context-session/1",
        "session": {"id": "s", "agent": {"name": "a"}, "provider": "anthropic", "model": model},
        "events": [
            {"type": "enter", "at": calls[0]["at"], "function": "main"},
            *calls,
            {"type": "exit", "at": calls[-1]["at"], "function": "main"},
        ],
    }
    return json.dumps(doc)


def test_a_changed_effort_is_named_and_anthropic_unavailable_agrees() -> None:
    text = session(
        llm("2026-10-03T09:00:00Z", "q", {"effort": "high"}),
        llm(
            "2026-10-03T09:00:10Z",
            "q",
            {"effort": "medium"},
            diagnostic={"provider": "anthropic", "type": "unavailable"},
        ),
    )
    a = analyze(parse_session(text))
    step = a.steps[1]
    assert step.read == step.tokens["total"] - step.blocks[1].tokens  # the system prefix only
    assert step.miss is not None
    assert (step.miss.reason, step.miss.cause) == ("setting changed", "setting_changed")
    assert "effort changed (high → medium)" in step.miss.sentence
    assert step.diagnostic is not None and step.diagnostic.agrees is True
    out = analysis_json(a)
    assert out["steps"][1]["miss"]["cause"] == "setting_changed"
    assert out["steps"][1]["provider_diagnostic"]["type"] == "unavailable"
    assert out["rules"] == {"anthropic": {"version": "2026-11-30", "warnings": []}}


def test_expiry_causes_name_the_lifetime() -> None:
    text = session(llm("2026-10-03T09:00:00Z", "q"), llm("2026-10-03T09:07:00Z", "q"))
    five = analyze(parse_session(text)).steps[1].miss
    hour = analyze(parse_session(text), ttl="1h").steps[1].miss
    assert five is not None and five.cause == "ttl_expired_5m"
    assert hour is None  # 7 minutes is within the hour
    late = session(llm("2026-10-03T09:00:00Z", "q"), llm("2026-10-03T10:07:00Z", "q"))
    expired = analyze(parse_session(late), ttl="1h").steps[1].miss
    assert expired is not None and expired.cause == "ttl_expired_1h"


def test_the_step_says_when_the_provider_disagrees_and_when_it_gives_no_verdict() -> None:
    text = session(
        llm("2026-10-03T09:00:00Z", "q"),
        llm(
            "2026-10-03T09:00:10Z",
            "q",
            diagnostic={"provider": "anthropic", "type": "messages_changed", "missed_tokens": 9},
        ),
        llm(
            "2026-10-03T09:00:20Z",
            "q",
            diagnostic={"provider": "anthropic", "type": "previous_message_not_found"},
        ),
    )
    steps = analyze(parse_session(text)).steps
    assert steps[1].miss is None
    disagree = steps[1].diagnostic
    assert disagree is not None and disagree.agrees is False
    assert disagree.sentence == (
        "anthropic diagnostic: messages_changed (9 tokens missed); ours: no miss: they disagree."
    )
    no_verdict = steps[2].diagnostic
    assert no_verdict is not None and no_verdict.agrees is None


def test_an_unknown_model_warns_naming_the_rule() -> None:
    text = session(llm("2026-10-03T09:00:00Z", "q"), model="claude-sonnet-4-5")
    out = analysis_json(analyze(parse_session(text), model="claude-haiku-5-5"))
    assert out["rules"]["anthropic"]["warnings"] == [
        "claude-haiku-5-5: not listed in anthropic.min_cacheable_tokens; used the default "
        "1,024 (anthropic.min_cacheable_tokens.default)"
    ]


def test_each_cause_maps_to_the_provider_types() -> None:
    assert expected_types("content_changed", "system").anthropic == {"system_changed"}
    assert expected_types("content_changed", "tools").openai == {"tools_changed"}
    assert "context_compacted" in expected_types("history_compacted", "messages").openai
    assert expected_types("ttl_expired_5m", "messages").anthropic == {"no divergence"}
    assert expected_types("provider_routing", "").openai == {"prompt_cache_key_changed"}


def _imported(name: str) -> str:
    return yaml.safe_dump(import_file("requests", FIXTURES / name), sort_keys=False)


def test_diagnostic_fixtures_import_and_show_beside_our_causes() -> None:
    anthropic = analyze(parse_session(_imported("diagnostics_anthropic.jsonl"), "a.yaml"))
    checks = [s.diagnostic for s in anthropic.steps]
    assert [(d.type, d.ours, d.agrees) for d in checks if d] == [
        (None, None, True),
        (None, None, True),
        ("system_changed", "content_changed", True),
        (None, "ttl_expired_5m", True),
    ]
    measured = anthropic.steps[2].measured
    assert checks[2] is not None and measured is not None
    assert checks[2].missed_tokens == measured.cache_write
    openai = analyze(parse_session(_imported("diagnostics_openai.jsonl"), "o.yaml"))
    assert [s.read for s in openai.steps] == [0, openai.steps[0].tokens["total"], 0]
    got = [(d.type, d.reason, d.ours, d.agrees) for s in openai.steps if (d := s.diagnostic)]
    assert got == [
        ("cache_hit", None, None, True),
        ("cache_miss", "input_changed", "breakpoint_mismatch", True),
    ]
    lines = (FIXTURES / "diagnostics_openai.jsonl").read_text().splitlines()
    billed = [json.loads(x)["response"]["usage"]["input_tokens_details"] for x in lines]
    assert [s.measured.cache_write for s in openai.steps if s.measured] == [
        b["cache_write_tokens"] for b in billed
    ]


def test_bad_settings_are_one_line_errors() -> None:
    text = session(llm("2026-10-03T09:00:00Z", "q", {"retention": "forever"}))
    with pytest.raises(SessionError) as err:
        parse_session(text, "bad.json")
    assert "events[1].settings.retention" in str(err.value) and "\n" not in str(err.value)
