"""The bill first, the simulation beside it: the figures, the first step that reads
differently, the projection's base, and the factor that scaled sizes to the bill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assembler.analysis.bill import (
    bill_first,
    bill_first_lines,
    billed_cost,
    billed_without_cache,
    compare_measured,
    fidelity,
    first_divergence,
    scale_note,
    size_scales,
)
from assembler.analysis.engine import analyze, import_file
from assembler.cache.prices.pricing import price
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import Session

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "sample_sessions"
FIX = ROOT / "tests" / "sessions" / "importers" / "fixtures"
REAL = ROOT.parent / "shared" / "real-traffic"


def _imported(fmt: str, path: Path) -> Session:
    return parse_session(json.dumps(import_file(fmt, path)), f"{path.stem}.json")


def scaled_session(factors: str) -> Session:
    """The bundled imported session with ``token_scale`` entries (YAML lines) added."""
    text = (SAMPLES / "imported_claude_code.yaml").read_text("utf-8")
    text = text.replace("  title:", f"  token_scale:\n{factors}  title:", 1)
    return parse_session(text, "scaled.yaml")


def test_a_bill_within_five_percent_is_two_lines() -> None:
    bill = bill_first(analyze(load_session(SAMPLES / "imported_claude_code.yaml")))
    assert bill is not None and bill.comes_first and not bill.far
    assert (bill.billed_steps, bill.steps, bill.diverging_steps) == (12, 12, 0)
    assert bill_first_lines(bill) == [
        "billed: $0.2161 for the 12 steps with usage",
        "simulated: $0.2161 for the same steps, +0.0% from the bill",
    ]


def test_above_five_percent_the_first_step_that_reads_differently_is_named() -> None:
    a = analyze(_imported("requests", FIX / "requests" / "warm_elsewhere.jsonl"))
    bill = bill_first(a)
    assert bill is not None and bill.far
    (check,) = compare_measured(a)
    assert bill.divergence == check and not check.agree
    assert bill_first_lines(bill) == [
        "billed: $0.0006 for the 1 step with usage",
        "simulated: $0.0053 for the same step, +739.4% from the bill",
        "  first read differently from the bill at step 1: simulated miss, measured full hit"
        " — unexplained: the provider read 1,352 tokens, 1,352 more than the simulator allowed"
        " (a prefix kept warm by another session, or a longer lifetime than assumed).",
        "  the one billed step read differently from the bill: the whole difference, +$0.0047,"
        " is there",
        "  tokens simulated / billed: read 0 / 1,352 (-100.0%), written 1,364 / 5 (+27180.0%),"
        " uncached 0 / 0",
    ]


def test_above_five_percent_with_every_class_agreeing_the_sizes_are_named() -> None:
    """A bill 15 % above every input count of the imported rollout (each request read,
    written and sent uncached 1.15 times what it was): no class changes, the sizes do."""
    data = import_file("codex", FIX / "codex" / "rollout-2026-03-12T14-00-00-019a9776.jsonl")
    for event in data["events"]:
        usage = event.get("usage") or {}
        for key in ("input", "cache_read", "cache_write"):
            if key in usage:
                usage[key] = round(usage[key] * 1.15)
    a = analyze(parse_session(json.dumps(data), "rollout.json"))
    bill = bill_first(a)
    assert bill is not None and bill.far and bill.divergence is None
    assert all(c.agree for c in compare_measured(a))
    assert bill_first_lines(bill)[2:] == [
        "  no step read differently from the bill (full hit, partial and miss agree at every"
        " billed step): the whole difference, -$0.0058, is in the sizes",
        "  tokens simulated / billed: read 27,008 / 30,176 (-10.5%), written 18,176 / 0,"
        " uncached 264 / 22,724 (-98.8%)",
    ]


def test_a_sample_of_usage_does_not_come_first_and_the_rest_is_simulated() -> None:
    a = analyze(load_session(SAMPLES / "research_agent.yaml"))
    bill = bill_first(a)
    assert bill is not None and (bill.billed_steps, bill.steps) == (1, 21)
    assert not bill.comes_first  # one measured step of 21: the simulated cost stays first
    billed_step = next(s for s in a.steps if s.measured is not None)
    rest = [s for s in a.steps if s.measured is None]
    assert bill.billed == billed_cost(billed_step)
    assert bill.per_session == pytest.approx(bill.billed + sum(s.usd for s in rest))
    assert bill.per_session_without_cache == pytest.approx(
        billed_without_cache(billed_step) + sum(s.usd_without_cache for s in rest)
    )
    assert bill_first_lines(bill)[0] == "billed: $0.0186 for the 1 step with usage, of 21"


def test_without_caching_prices_the_billed_tokens_as_plain_input() -> None:
    a = analyze(load_session(SAMPLES / "imported_claude_code.yaml"))
    s = a.steps[1]
    u = s.measured
    assert u is not None and u.cache_read > 0
    plain = price(s.provider, s.model, total_input=u.input + u.cache_read + u.cache_write,
                  output=u.output, at=s.timestamp)  # fmt: skip
    assert billed_without_cache(s) == plain
    assert plain > (billed_cost(s) or 0.0)  # the read was cheaper than plain input


def test_no_bill_nothing_first() -> None:
    assert bill_first(analyze(load_session(SAMPLES / "review_agent_paths.yaml"))) is None
    assert first_divergence([]) is None


def test_the_factor_is_read_as_the_engine_applies_it() -> None:
    one = scaled_session("    claude-sonnet-4-5-20250929: 1.25\n    gpt-5: 1.5\n")
    a = analyze(one)
    # per model of the analysis: gpt-5 sent nothing here
    assert size_scales(one, a, None, None) == {"claude-sonnet-4-5-20250929": 1.25}
    assert scale_note(size_scales(one, a, None, None)) == "sizes scaled to the bill: ×1.25"
    # a what-if provider or model counts its own tokens: nothing scaled
    assert size_scales(one, a, "openai", "gpt-5") == {}
    assert size_scales(one, a, None, "claude-haiku-4-5") == {}
    two = scaled_session("    claude-sonnet-4-5-20250929: 1.242\n    claude-haiku-4-5-20251001: 1.0\n"
                         "    x: 2\n")  # fmt: skip
    assert size_scales(two, analyze(two), None, None) == {"claude-sonnet-4-5-20250929": 1.242}
    both = {"claude-sonnet-4-5-20250929": 1.242, "claude-haiku-4-5-20251001": 1.153}
    assert scale_note(both) == (
        "sizes scaled to the bill: claude-sonnet-4-5-20250929 ×1.242,"
        " claude-haiku-4-5-20251001 ×1.153"
    )
    assert scale_note({}) == ""


def test_scaled_sizes_are_the_ones_priced() -> None:
    """The factor the note names is the one the analysis applied: the step's tokens grow."""
    plain = analyze(load_session(SAMPLES / "imported_claude_code.yaml"))
    scaled = analyze(scaled_session("    claude-sonnet-4-5-20250929: 1.25\n"))
    assert scaled.steps[0].tokens["total"] > plain.steps[0].tokens["total"]


@pytest.mark.real
@pytest.mark.skipif(not REAL.is_dir(), reason=f"no real-traffic corpus at {REAL}")
@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("claude-code", "claude-code/marot-spotter/subagent.jsonl"),
        ("codex", "codex/moonmind/rollout-2025-11-13T18-21-11-019a802a-aab1-7c31-9831-d2510c7a74a2.jsonl"),
    ],
)  # fmt: skip
def test_on_real_traffic_the_bill_first_is_the_agreement_report_s_figures(
    fmt: str, name: str
) -> None:
    session = _imported(fmt, REAL / name)
    a = analyze(session)
    bill = bill_first(a)
    f = fidelity(session, a)
    assert bill is not None and bill.comes_first
    assert bill.billed == pytest.approx(f.billed) and bill.simulated == pytest.approx(f.simulated)
    assert bill.difference == pytest.approx(f.cost_error)
    assert bill.diverging_steps == f.agreement.steps - f.agreement.agree
    checks = compare_measured(a)
    assert bill.divergence == next((c for c in checks if not c.agree), None)
    # a divergence is named exactly when the simulation is more than 5 % off the bill
    named = any(line.startswith("  first read differently") for line in bill_first_lines(bill))
    assert named == (bill.far and bill.divergence is not None)
