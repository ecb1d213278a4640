"""The real-traffic fixtures (fixtures/build_traffic.py): each situation found in real
transcripts, imported, simulated and compared with what its bill says."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from importer_helpers import FIXTURES, SUBAGENT

from assembler.analysis.bill.billing import session_costs
from assembler.analysis.bill.measured import (
    BLOCK_CHANGED,
    BRANCH,
    COLD_START,
    COMPACTION,
    EXPIRY,
    FULL_HIT,
    MISS,
    MODEL_SWITCH,
    PARTIAL,
    MeasuredComparison,
    compare_measured,
    granularity,
)
from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.importing import import_file, import_session
from assembler.analysis.engine.results import SessionAnalysis
from assembler.analysis.reports.report_json import analysis_json
from assembler.cache.prices.pricing import price
from assembler.sessions.importers import ImporterError
from assembler.sessions.loader import parse_session

TRAFFIC = FIXTURES / "traffic"


def _load(data: dict[str, Any]) -> SessionAnalysis:
    return analyze(parse_session(yaml.safe_dump(data, sort_keys=False), "imported.yaml"))


@cache
def imported(name: str) -> dict[str, Any]:
    fmt = "codex" if name.startswith("codex") else "claude-code"
    return import_file(fmt, TRAFFIC / name)


@cache
def analysed(name: str) -> SessionAnalysis:
    return _load(imported(name))


def checks(name: str) -> list[MeasuredComparison]:
    return compare_measured(analysed(name))


def table(name: str) -> list[tuple[str, str, str | None]]:
    return [(c.simulated_class, c.measured_class, c.reason) for c in checks(name)]


def reads(name: str) -> list[tuple[int, int]]:
    return [(c.simulated.read, c.measured.read) for c in checks(name)]


def test_one_hour_writes_are_simulated_and_priced_for_an_hour() -> None:
    """Item 1: the bill says 1h; 7-minute gaps are hits, and writes cost 2x input."""
    a = analysed("claude_lifetime.jsonl")
    assert (
        table("claude_lifetime.jsonl")
        == [(MISS, MISS, COLD_START)] + [(FULL_HIT, FULL_HIT, None)] * 4
    )
    assert all(sim == meas for sim, meas in reads("claude_lifetime.jsonl"))
    assert {s.write_ttl for s in a.steps} == {"1h"}
    # the same transcript simulated with 5 minutes: the 7-minute gap is a false miss
    data = imported("claude_lifetime.jsonl")
    five = _load(
        {**data, "events": [{k: v for k, v in e.items() if k != "ttl"} for e in data["events"]]}
    )
    assert [(c.simulated_class, c.measured_class) for c in compare_measured(five)][2] == (
        MISS,
        FULL_HIT,
    )
    step = a.steps[0]
    assert step.measured is not None and step.measured.cache_write_1h == step.measured.cache_write
    hour = price("anthropic", step.model, total_input=12_010, cache_write=12_010, write_1h=True)
    assert session_costs(a).billed is not None
    assert step.usd == pytest.approx(
        hour + price("anthropic", step.model, total_input=0, output=40)
    )


def test_a_request_is_stamped_with_its_last_input_not_its_streaming_answer() -> None:
    """Item 2: sent at the last tool result (11:04:30), answered 200 s later: a hit."""
    a = analysed("claude_parallel.jsonl")
    assert a.steps[1].timestamp == datetime(2026, 10, 1, 11, 4, 30, tzinfo=UTC)
    assert table("claude_parallel.jsonl")[1] == (FULL_HIT, FULL_HIT, None)


def test_the_compaction_call_is_a_main_thread_request() -> None:
    """Item 3: the /compact call reads the main history; the request after it reads the
    system prompt alone."""
    a = analysed("claude_compaction.jsonl")
    call = a.steps[2]
    assert (call.label, call.call_path[0]) == ("compaction-call", "claude_code_session")
    assert not any(p.startswith("subagent") for p in call.call_path)
    assert table("claude_compaction.jsonl")[2:] == [
        (FULL_HIT, FULL_HIT, None),
        (PARTIAL, PARTIAL, COMPACTION),
    ]
    assert reads("claude_compaction.jsonl")[3] == (9_000, 9_000)


def test_parallel_results_are_sent_in_call_order_with_the_marker_where_the_client_puts_it() -> None:
    """Item 4: recorded B then A; sent A then B, the marker on A, B uncached."""
    a = analysed("claude_parallel.jsonl")
    step = a.steps[1]
    results = [b for b in step.blocks if "tool_result" in b.name]
    assert [b.name.split()[-1] for b in results] == ["Read", "Bash"]
    assert results[0].breakpoint is not None and results[1].breakpoint is None
    c = checks("claude_parallel.jsonl")[1]
    assert (c.simulated.read, c.simulated.uncached) == (c.measured.read, c.measured.uncached)
    assert c.measured.uncached > 0


def test_a_rewind_takes_the_ancestor_chain_as_history() -> None:
    """Item 5: the prompt after the rewind continues the first answer."""
    a = analysed("claude_branch.jsonl")
    texts = [b.text for b in a.steps[2].blocks]
    assert "Try the naive-date approach." not in texts
    assert a.steps[2].label == "branch"
    assert table("claude_branch.jsonl")[2] == (PARTIAL, PARTIAL, BRANCH)
    assert reads("claude_branch.jsonl")[2][0] == reads("claude_branch.jsonl")[2][1]


def test_hidden_sizes_come_from_the_bill_and_say_so() -> None:
    """Item 6: thinking sized from billed growth, an image from its header, the system
    prompt apart from the context prepended to the first message."""
    a = analysed("claude_hidden.jsonl")
    assert a.steps[2].inferred == (("messages[2] thinking", 1500), ("messages[5] thinking", 600))
    image = next(b for b in a.steps[0].blocks if b.name.endswith("image"))
    assert image.tokens == 1000  # 1000 x 750 px / 750, read from the PNG header
    assert all(sim == meas for sim, meas in reads("claude_hidden.jsonl"))
    step = analysis_json(a)["steps"][2]
    assert step["inferred"] == [
        {"block": "messages[2] thinking", "tokens": 1500},
        {"block": "messages[5] thinking", "tokens": 600},
    ]
    split = analysed("claude_compaction.jsonl").steps[0].inferred
    assert split == (("unrecorded system prompt", 9000), ("unrecorded first-message context", 3000))


def test_the_platform_comes_from_the_message_ids_and_sets_the_price() -> None:
    """Item 7: msg_bdrk_ ids: Bedrock, priced by AWS (regional, 1.1x the API)."""
    assert imported("claude_bedrock.jsonl")["session"]["provider"] == "anthropic-bedrock"
    a = analysed("claude_bedrock.jsonl")
    assert {s.platform for s in a.steps} == {"anthropic-bedrock"}
    assert table("claude_bedrock.jsonl") == [(MISS, MISS, COLD_START), (FULL_HIT, FULL_HIT, None)]
    u = a.steps[0].measured
    assert u is not None
    api = price(
        "anthropic",
        a.steps[0].model,
        total_input=u.cache_write,
        cache_write=u.cache_write,
        output=u.output,
    )
    costs = session_costs(a)
    assert costs.billed is not None and costs.billed > api


def test_the_providers_diagnostics_in_a_transcript_stand_beside_ours() -> None:
    """A transcript whose responses carry ``diagnostics``: kept on the llm event as the
    request log keeps them (none where the response has none), and each step shows the
    provider's verdict beside ours: no divergence on a hit and on an expiry (not a
    structural cause), ``model_changed`` with 12,304 missed tokens after the switch."""
    events = [e for e in imported("claude_diagnostics.jsonl")["events"] if e["type"] == "llm"]
    assert "diagnostic" not in events[0]  # diagnostics: null, nothing to compare with yet
    assert [e["diagnostic"] for e in events[1:3]] == [{"provider": "anthropic", "type": None}] * 2
    assert events[3]["diagnostic"] == {
        "provider": "anthropic",
        "type": "model_changed",
        "missed_tokens": 12_304,
    }
    a = analysed("claude_diagnostics.jsonl")
    assert a.steps[0].diagnostic is None
    got = [
        (d.type, d.missed_tokens, d.ours, d.agrees)
        for d in (s.diagnostic for s in a.steps[1:])
        if d is not None
    ]
    assert got == [
        (None, None, None, True),
        (None, None, "ttl_expired_5m", True),
        ("model_changed", 12_304, "model_changed", True),
    ]
    # the tokens the provider says it missed are what the previous request left cached
    prev = a.steps[2]
    assert prev.read + prev.write == 12_304
    assert table("claude_diagnostics.jsonl") == [
        (MISS, MISS, COLD_START),
        (FULL_HIT, FULL_HIT, None),
        (MISS, MISS, EXPIRY),
        (MISS, MISS, MODEL_SWITCH),
    ]
    step = analysis_json(a)["steps"][3]["provider_diagnostic"]
    assert step["sentence"] == (
        "anthropic diagnostic: model_changed (12,304 tokens missed); ours: model_changed: "
        "they agree."
    )


def test_a_lone_subagent_file_says_what_is_missing(tmp_path: Path) -> None:
    """Item 8."""
    lone = tmp_path / SUBAGENT.name
    lone.write_bytes(SUBAGENT.read_bytes())
    with pytest.raises(
        ImporterError, match=r"this is a subagent transcript \(agentId a1b2c3\) without its session"
    ):
        import_file("claude-code", lone)


def test_the_previous_response_is_part_of_the_prefix_and_reasoning_leaves_at_a_new_turn() -> None:
    """Item 9: request 2 reads through request 1's reasoning and call; at the next user
    turn the reasoning is no longer sent and the read ends before it."""
    cs = checks("codex_responses.jsonl")
    assert (cs[1].simulated_class, cs[1].measured_class, cs[1].read_end_measured) == (
        FULL_HIT,
        FULL_HIT,
        "messages[2] reasoning",
    )
    assert cs[1].simulated.read == cs[1].measured.read
    assert (cs[2].simulated_class, cs[2].measured_class, cs[2].reason) == (
        PARTIAL,
        PARTIAL,
        BLOCK_CHANGED,
    )
    assert cs[2].changed_block == "messages[2] reasoning"
    assert cs[2].simulated.read == cs[2].measured.read


def test_images_are_sized_and_left_out_of_the_cached_count() -> None:
    """Item 10: the image is a 256-token block; a read through it is the prefix rounded
    down to 128 (8,448 of the 8,452 it matched through the previous answer) less the image, as
    the bill counts it, and the image is billed uncached; the step is a full hit on both sides."""
    a = analysed("codex_responses.jsonl")
    image = next(b for b in a.steps[2].blocks if b.name.endswith("image"))
    assert image.tokens == 256
    step = a.steps[3]
    assert sum(b.tokens for b in step.blocks[:8]) == 8_441  # through the image
    assert step.read == 8_448 - 256
    assert next(b.cache for b in step.blocks if b.name.endswith("image")) == "uncached"
    c = checks("codex_responses.jsonl")[3]
    assert (c.simulated.read, c.measured.read, c.read_error) == (8_192, 8_192, 0)
    assert (c.simulated_class, c.measured_class, c.reason) == (FULL_HIT, FULL_HIT, None)


def test_the_read_error_is_in_the_models_granularity() -> None:
    """Item 11: 128-token steps on this model, from the rules file."""
    assert granularity("openai", "gpt-5-codex") == 128
    assert granularity("openai", "gpt-5.5") == 512  # the reads of the codemie-code rollout
    assert {c.granularity for c in checks("codex_responses.jsonl")} == {128}
    assert granularity("anthropic", "claude-sonnet-4-5") == 1


def test_codex_keeps_minutes_not_a_day() -> None:
    """Item 12: 12 minutes idle outlive the in-memory cache."""
    c = checks("codex_responses.jsonl")[4]
    assert (c.simulated_class, c.measured_class, c.reason) == (MISS, MISS, EXPIRY)
    assert "lifetime 10 min" in c.sentence


def test_a_rollout_without_its_model_or_usage_says_what_is_missing(tmp_path: Path) -> None:
    """Item 14."""
    rows = [json.loads(x) for x in (TRAFFIC / "codex_responses.jsonl").read_text().splitlines()]
    no_model = tmp_path / "no-model.jsonl"
    no_model.write_text("".join(json.dumps(r) + "\n" for r in rows if r["type"] != "turn_context"))
    with pytest.raises(ImporterError, match="no turn_context record names the model"):
        import_file("codex", no_model)
    no_usage = tmp_path / "no-usage.jsonl"
    blank = [
        {**r, "payload": {**r["payload"], "info": None}}
        if r["payload"].get("type") == "token_count"
        else r
        for r in rows
    ]
    no_usage.write_text("".join(json.dumps(r) + "\n" for r in blank))
    got = import_session("codex", no_usage)
    assert any("no token_count event carries usage" in w for w in got.warnings)
