"""Simulated against measured on the importer fixtures, call by call."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from assembler.analysis.bill.measured import (
    BLOCK_CHANGED,
    COLD_START,
    COMPACTION,
    EXPIRY,
    FULL_HIT,
    HISTORY_RESENT,
    MISS,
    MODEL_SWITCH,
    PARTIAL,
    ROUTING,
    UNEXPLAINED,
    MeasuredComparison,
    classify,
    compare_measured,
)
from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.importing import import_file
from assembler.analysis.engine.results import SessionAnalysis
from assembler.analysis.reports.report_json import analysis_json
from assembler.analysis.reports.report_rows import ROW_COLUMNS, analysis_rows
from assembler.sessions.generator import generate_session, write_session
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import Usage

FIXTURES = Path(__file__).parents[2] / "sessions" / "importers" / "fixtures"


def _analysis(fmt: str, path: Path) -> SessionAnalysis:
    data = import_file(fmt, path)
    return analyze(parse_session(yaml.safe_dump(data, sort_keys=False), "imported.yaml"))


@pytest.fixture(scope="module")
def claude() -> SessionAnalysis:
    return _analysis("claude-code", FIXTURES / "claude_code" / "session.jsonl")


@pytest.fixture(scope="module")
def codex() -> SessionAnalysis:
    return _analysis("codex", next((FIXTURES / "codex").glob("rollout-*.jsonl")))


@pytest.fixture(scope="module")
def requests_log() -> SessionAnalysis:
    return _analysis("requests", FIXTURES / "requests" / "proxy.jsonl")


def _table(cs: list[MeasuredComparison]) -> list[tuple[int, str, str, str | None]]:
    return [(c.step, c.simulated_class, c.measured_class, c.reason) for c in cs]


def test_classes() -> None:
    assert classify(0, 10_000) == MISS
    assert classify(0, 0) == MISS
    assert classify(10_000, 10_000) == FULL_HIT
    assert classify(9_900, 10_000) == FULL_HIT  # within 128 tokens
    assert classify(9_850, 10_000) == PARTIAL
    assert classify(99_600, 100_000) == FULL_HIT  # within 0.5 %
    assert classify(99_000, 100_000) == PARTIAL
    assert classify(9_000, 10_000) == PARTIAL
    assert classify(1_000, 1_050) == FULL_HIT  # within 128 tokens (OpenAI rounding)
    assert classify(500, 0) == FULL_HIT  # read with nothing expected: warm from elsewhere


def test_claude_code_every_call_agrees_with_the_right_reason(claude: SessionAnalysis) -> None:
    cs = compare_measured(claude)
    assert _table(cs) == [
        (1, MISS, MISS, COLD_START),
        (2, FULL_HIT, FULL_HIT, None),
        (3, MISS, MISS, COLD_START),  # the subagent's first call: its own prompt and model
        (4, FULL_HIT, FULL_HIT, None),
        (5, FULL_HIT, FULL_HIT, None),  # back in the main thread after the subagent
        (6, FULL_HIT, FULL_HIT, None),
        (7, FULL_HIT, FULL_HIT, None),
        (8, MISS, MISS, EXPIRY),  # 1 h 26 min idle, 5 min lifetime
        (9, FULL_HIT, FULL_HIT, None),
        (10, MISS, MISS, MODEL_SWITCH),
        (11, FULL_HIT, FULL_HIT, None),
        (12, PARTIAL, PARTIAL, COMPACTION),
    ]
    assert all(c.agree for c in cs)
    assert [c.previous_step for c in cs] == [None, 1, None, 3, 2, 5, 6, 7, 8, 9, 10, 11]
    by_step = {c.step: c for c in cs}
    assert "1 h 26 min idle since step 7" in by_step[8].sentence
    assert "lifetime 5 min" in by_step[8].sentence
    assert "to claude-opus-4-5-20251101" in by_step[10].sentence


def test_codex_every_call_agrees_with_the_right_reason(codex: SessionAnalysis) -> None:
    cs = compare_measured(codex)
    assert _table(cs) == [
        (1, MISS, MISS, COLD_START),
        (2, FULL_HIT, FULL_HIT, None),
        (3, FULL_HIT, FULL_HIT, None),
        (4, MISS, MISS, MODEL_SWITCH),
        (5, PARTIAL, PARTIAL, COMPACTION),
    ]
    assert all(c.agree for c in cs)


def test_requests_log_every_call_agrees_with_the_right_reason(
    requests_log: SessionAnalysis,
) -> None:
    cs = compare_measured(requests_log)
    assert _table(cs) == [
        (1, MISS, MISS, COLD_START),
        (2, FULL_HIT, FULL_HIT, None),
        (3, MISS, MISS, EXPIRY),  # 11 min idle, 5 min lifetime
        (4, FULL_HIT, FULL_HIT, None),  # automatic mode: top-level cache_control
        (5, MISS, MISS, COLD_START),  # OpenAI: another provider, nothing shared
        (6, FULL_HIT, FULL_HIT, None),
        (7, FULL_HIT, FULL_HIT, None),
        (8, MISS, MISS, COLD_START),  # below the 1,024-token minimum
    ]
    assert all(c.agree for c in cs)
    assert [c.previous_step for c in cs] == [None, 1, 2, 3, None, 5, 6, None]
    assert "11 min idle since step 2" in cs[2].sentence
    # OpenAI reads come in 128-token increments
    assert [s.measured.cache_read % 128 for s in requests_log.steps[4:] if s.measured] == [0] * 4


def test_a_read_no_request_in_the_log_allows_is_unexplained() -> None:
    # Another session of the same agent kept the tools and system prompt warm: the
    # provider reads them on this log's only request.
    a = _analysis("requests", FIXTURES / "requests" / "warm_elsewhere.jsonl")
    cs = compare_measured(a)
    assert _table(cs) == [(1, MISS, FULL_HIT, UNEXPLAINED)]
    assert not cs[0].agree
    read = a.steps[0].measured.cache_read  # type: ignore[union-attr]
    assert read > 1024
    assert f"{read:,} more than the simulator allowed" in cs[0].sentence


def _with_measured(a: SessionAnalysis, step: int, usage: Usage) -> SessionAnalysis:
    steps = tuple(replace(s, measured=usage) if s.step == step else s for s in a.steps)
    return replace(a, steps=steps)


def test_measured_miss_the_simulator_did_not_expect_gets_a_reason(claude: SessionAnalysis) -> None:
    # step 9 really read nothing: not a model switch, no idle gap, no compaction
    a = _with_measured(claude, 9, Usage(input=0, cache_read=0, cache_write=12_405, output=9))
    c = {c.step: c for c in compare_measured(a)}[9]
    assert (c.simulated_class, c.measured_class, c.agree, c.reason) == (
        FULL_HIT,
        MISS,
        False,
        UNEXPLAINED,
    )


def test_change_in_the_middle_of_the_history(claude: SessionAnalysis) -> None:
    # Rewrite step 7's second history block: the request departs from step 6 early.
    s7 = claude.steps[6]
    blocks = list(s7.blocks)
    blocks[2] = replace(blocks[2], stored=blocks[2].text + " (edited)")
    read = sum(b.tokens for b in blocks[:2])
    edited = replace(
        s7,
        blocks=tuple(blocks),
        read=read,
        write=s7.tokens["total"] - read,
        measured=Usage(input=0, cache_read=read, cache_write=s7.tokens["total"] - read),
    )
    a = replace(claude, steps=(*claude.steps[:6], edited, *claude.steps[7:]))
    c = {c.step: c for c in compare_measured(a)}[7]
    assert (c.simulated_class, c.measured_class, c.reason) == (PARTIAL, PARTIAL, BLOCK_CHANGED)


def test_expiry_uses_the_lifetime_of_the_analysis(claude: SessionAnalysis) -> None:
    # Move step 6 just past the 5-minute lifetime after step 5 and make both sides miss.
    s5, s6 = claude.steps[4], claude.steps[5]
    late = replace(
        s6,
        timestamp=s5.timestamp + timedelta(minutes=5, seconds=1),
        read=0,
        write=s6.tokens["total"],
        measured=Usage(input=0, cache_read=0, cache_write=s6.tokens["total"]),
    )
    a = replace(claude, steps=(*claude.steps[:5], late, *claude.steps[6:]))
    c = {c.step: c for c in compare_measured(a)}[6]
    assert (c.measured_class, c.reason) == (MISS, EXPIRY)
    # the lifetime step 5's writes were billed with decides: for an hour, the same gap
    # is no expiry and the miss is unexplained
    hour = replace(
        a, steps=tuple(replace(s, write_ttl="1h") if s.step == 5 else s for s in a.steps)
    )
    c = {c.step: c for c in compare_measured(hour)}[6]
    assert (c.measured_class, c.reason) == (MISS, UNEXPLAINED)
    # without a billed lifetime, the analysis's own lifetime decides
    unbilled = replace(a, ttl="1h", steps=tuple(replace(s, write_ttl="") for s in a.steps))
    c = {c.step: c for c in compare_measured(unbilled)}[6]
    assert (c.measured_class, c.reason) == (MISS, UNEXPLAINED)
    c = {c.step: c for c in compare_measured(replace(unbilled, ttl="5m"))}[6]
    assert (c.measured_class, c.reason) == (MISS, EXPIRY)


def test_steps_without_measured_usage_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    write_session(generate_session(10, seed=3), path)
    a = analyze(load_session(path))
    assert all(s.measured is None for s in a.steps)
    assert compare_measured(a) == []
    out = analysis_json(a)
    assert all(s["measured_check"] is None and s["measured"] is None for s in out["steps"])
    assert not any(k.startswith("measured") for k in out["totals"])
    assert all(r["measured_agree"] == "" == r["measured_read"] for r in analysis_rows(a))


def test_analysis_json_reports_measured_beside_cache(claude: SessionAnalysis) -> None:
    out = analysis_json(claude)
    s = out["steps"][7]
    assert s["cache"]["read"] == 0
    assert s["measured"]["read"] == 0 and s["measured"]["write"] == 12_333
    assert s["measured"]["uncached"] == 0
    assert s["measured"]["cache_write"] == 12_333  # the recorded keys stay
    assert s["measured_check"] == {
        "simulated": MISS,
        "measured": MISS,
        "agree": True,
        "reason": EXPIRY,
        "sentence": s["measured_check"]["sentence"],
        "read_end": {"simulated": None, "measured": None},  # neither read anything
        "read_error": 0,
        "granularity": 1,  # Anthropic does not round reads
        "changed_block": None,
    }
    assert out["steps"][8]["measured_check"]["read_end"] == {
        "simulated": "messages[12] text",
        "measured": "messages[12] text",
    }
    assert s["inferred"] == [{"block": "messages[1] thinking", "tokens": 0}]  # billed: none
    t = out["totals"]
    assert t["measured_read"] == sum(x.measured.cache_read for x in claude.steps if x.measured)
    assert t["measured_write"] == sum(x.measured.cache_write for x in claude.steps if x.measured)
    assert t["measured_uncached"] == sum(x.measured.input for x in claude.steps if x.measured)
    assert t["read"] == claude.totals["read"]  # the simulated totals unchanged
    assert "measured_totals" not in out


def test_rows_carry_the_measured_columns(claude: SessionAnalysis) -> None:
    rows = analysis_rows(claude)
    assert all(c in ROW_COLUMNS for c in ("measured_read", "measured_write", "measured_agree"))
    r = rows[7]
    assert (r["read"], r["measured_read"], r["measured_write"], r["measured_uncached"]) == (
        0,
        0,
        12_333,
        0,
    )
    assert [r["measured_agree"] for r in rows] == ["yes"] * 12


def test_rows_say_when_simulated_and_measured_disagree() -> None:
    a = _analysis("requests", FIXTURES / "requests" / "warm_elsewhere.jsonl")
    (row,) = analysis_rows(a)
    assert row["measured_agree"] == "no" and row["measured_read"] > 0 == row["read"]


def test_cli_reports_the_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from assembler.cli.main import main

    data = import_file("codex", next((FIXTURES / "codex").glob("rollout-*.jsonl")))
    path = tmp_path / "codex.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    assert main(["analyze", str(path)]) == 0
    text = capsys.readouterr().out
    assert "simulated vs measured: 5 of 5 steps agree" in text
    assert "step 4: simulated miss, measured miss — model switch" in text
    assert main(["analyze", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["measured_check"]["reason"] for s in out["steps"]] == [
        COLD_START,
        None,
        None,
        MODEL_SWITCH,
        COMPACTION,
    ]
    billed = out["steps"][1]["measured"].pop("billed_usd")
    assert isinstance(billed, float) and billed > 0  # the bill of this step, priced
    assert out["steps"][1]["measured"] == {
        "input": 440,
        "cache_read": 8960,
        "cache_write": 0,
        "output": 300,
        "read": 8960,
        "write": 0,
        "uncached": 440,
    }


def test_the_simulated_miss_after_a_compaction_says_so(
    claude: SessionAnalysis, codex: SessionAnalysis
) -> None:
    for a in (claude, codex):
        step = next(s for s in a.steps if s.label == "compaction")
        assert step.miss is not None
        assert (step.miss.component, step.miss.reason) == (
            "messages[0] summary",
            "history compacted",
        )
        assert step.miss.sentence.startswith(
            "messages[0] summary (L1) changed because the history was compacted into a summary: "
        )


def test_a_miss_seconds_after_a_full_hit_with_nothing_changed_is_routing(
    claude: SessionAnalysis,
) -> None:
    # step 7 follows step 6's full hit 30 s later, yet the provider read nothing
    s6, s7 = claude.steps[5], claude.steps[6]
    total = s7.tokens["total"]
    moved = replace(
        s7,
        timestamp=s6.timestamp + timedelta(seconds=30),
        measured=Usage(input=0, cache_read=0, cache_write=total),
    )
    a = replace(claude, steps=(*claude.steps[:6], moved, *claude.steps[7:]))
    c = {c.step: c for c in compare_measured(a)}[7]
    assert (c.simulated_class, c.measured_class, c.reason) == (FULL_HIT, MISS, ROUTING)
    assert "30 s after step 6's full hit" in c.sentence


def test_a_read_of_the_system_prompt_alone_with_nothing_changed_is_history_resent(
    claude: SessionAnalysis,
) -> None:
    # step 9 continues step 8 unchanged, but the provider read only the unrecorded prefix
    s9 = claude.steps[8]
    prefix = s9.blocks[0].tokens
    total = s9.tokens["total"]
    a = _with_measured(
        claude, 9, Usage(input=0, cache_read=prefix, cache_write=total - prefix, output=9)
    )
    c = {c.step: c for c in compare_measured(a)}[9]
    assert (c.simulated_class, c.measured_class, c.reason) == (FULL_HIT, PARTIAL, HISTORY_RESENT)
    assert c.read_end_measured == "unrecorded prefix" != c.read_end_simulated
