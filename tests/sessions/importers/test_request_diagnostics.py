"""Request logs keep the cache settings and the providers' own diagnostics."""

from __future__ import annotations

from typing import Any

from importer_helpers import FIXTURES, steps

from assembler.analysis.engine.importing import import_file
from assembler.sessions.importers.request_cache import request_settings, response_diagnostic
from assembler.sessions.model import ProviderDiagnostic, RequestSettings

LOGS = FIXTURES / "requests"


def llm_events(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in data["events"] if e["type"] == "llm"]


def test_anthropic_diagnostic_shapes_are_kept() -> None:
    data = import_file("requests", LOGS / "diagnostics_anthropic.jsonl")
    got = [e.get("diagnostic") for e in llm_events(data)]
    assert got[0] == {"provider": "anthropic", "type": None}  # first turn: nothing to compare
    assert got[1] == {"provider": "anthropic", "type": None}  # reason null: no divergence
    assert got[2] is not None and got[2]["type"] == "system_changed"
    assert got[2]["missed_tokens"] == llm_events(data)[2]["usage"]["cache_write"]
    typed = [s.call.diagnostic for s in steps(data)]
    assert typed[2] == ProviderDiagnostic(
        "anthropic", "system_changed", None, got[2]["missed_tokens"]
    )


def test_openai_diagnostics_settings_and_breakpoints_are_kept() -> None:
    data = import_file("requests", LOGS / "diagnostics_openai.jsonl")
    events = llm_events(data)
    assert "diagnostic" not in events[0]  # no comparison_response_id, no diagnostic
    assert events[1]["diagnostic"] == {"provider": "openai", "type": "cache_hit"}
    miss = events[2]["diagnostic"]
    assert (miss["type"], miss["reason"]) == ("cache_miss", "input_changed")
    assert events[0]["settings"] == {
        "prompt_cache_key": "ledger-support",
        "cache_mode": "implicit",
        "cache_ttl": "30m",
    }
    assert steps(data)[0].call.settings == RequestSettings(
        prompt_cache_key="ledger-support", cache_mode="implicit", cache_ttl="30m"
    )


def test_every_cache_setting_of_a_request_body_is_read() -> None:
    body = {
        "model": "claude-opus-5-5",
        "tool_choice": {"type": "tool", "name": "search"},
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "output_config": {"effort": "high"},
        "speed": "fast",
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "document", "citations": {"enabled": True}, "source": {}},
                    {"type": "image", "source": {}},
                    {"type": "image", "source": {}},
                ],
            }
        ],
    }
    assert request_settings(body) == {
        "tool_choice": "tool:search",
        "thinking": "enabled:2048",
        "effort": "high",
        "web_search": True,
        "citations": True,
        "speed": "fast",
        "images": 2,
    }
    chat = {"model": "gpt-5.5", "reasoning_effort": "low", "prompt_cache_retention": "24h"}
    assert request_settings(chat) == {"effort": "low", "retention": "24h"}
    assert request_settings({"model": "m", "messages": []}) is None


def test_a_response_without_diagnostics_records_none() -> None:
    assert response_diagnostic(True, {}, {"usage": {}}) is None
    assert response_diagnostic(True, {}, {"diagnostics": None}) is None  # not asked for
    assert response_diagnostic(False, {}, {"prompt_cache_diagnostics": "odd"}) is None
    pending = response_diagnostic(True, {}, {"diagnostics": {"cache_miss_reason": None}})
    assert pending == {"provider": "anthropic", "type": None}
