"""``analyze``'s text report and JSON give the bill first for a billed session: the simulated
cost beside it with its difference, above 5 % the first step that reads differently, and the
factor that scaled sizes to the bill. A session without a bill reads as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assembler.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"
FIX = ROOT / "tests" / "sessions" / "importers" / "fixtures"


def _report(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert main(["analyze", *args]) == 0
    return capsys.readouterr().out.splitlines()


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["analyze", *args, "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def _from(lines: list[str], start: str, count: int) -> list[str]:
    i = next(k for k, line in enumerate(lines) if line.startswith(start))
    return lines[i : i + count]


def test_the_bill_comes_first_and_the_first_divergent_step_follows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(FIX / "requests" / "warm_elsewhere.jsonl")
    lines = _report(capsys, path)
    totals = next(k for k, line in enumerate(lines) if line.startswith("totals:"))
    assert lines[totals + 1 : totals + 7] == [
        "billed: $0.0006 for the 1 step with usage",
        "simulated: $0.0053 for the same step, +739.4% from the bill",
        "  first read differently from the bill at step 1: simulated miss, measured full hit"
        " — unexplained: the provider read 1,352 tokens, 1,352 more than the simulator allowed"
        " (a prefix kept warm by another session, or a longer lifetime than assumed).",
        "  the one billed step read differently from the bill: the whole difference, +$0.0047,"
        " is there",
        "  tokens simulated / billed: read 0 / 1,352 (-100.0%), written 1,364 / 5 (+27180.0%),"
        " uncached 0 / 0",
        "simulated cost: $0.0053 with caching, $0.0043 without",
    ]
    assert not any(line.startswith("cost:") for line in lines)
    billed = _json(capsys, path)["totals"]["billed"]
    assert billed["difference"] == pytest.approx(7.394, abs=5e-4)
    first = billed["first_divergent_step"]
    assert (first["step"], first["simulated"], first["measured"]) == (1, "miss", "full hit")
    assert lines[totals + 3].endswith(first["sentence"].removeprefix("step 1: "))
    assert billed["diverging_steps"] == 1
    assert billed["tokens"] == {
        "billed": {"read": 1352, "write": 5, "uncached": 0},
        "simulated": {"read": 0, "write": 1364, "uncached": 0},
    }


def test_above_five_percent_without_a_divergent_step_the_sizes_are_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # the bill charges 2,000 uncached tokens per step the recorded requests do not carry:
    # every step reads as billed, only the sizes differ
    text = (SAMPLES / "imported_claude_code.yaml").read_text("utf-8")
    assert text.count("\n    input: 0\n") == 12
    bumped = tmp_path / "bumped.yaml"
    bumped.write_text(text.replace("\n    input: 0\n", "\n    input: 2000\n"), "utf-8")
    assert _from(_report(capsys, str(bumped)), "billed:", 5) == [
        "billed: $0.2921 for the 12 steps with usage",
        "simulated: $0.2161 for the same steps, -26.0% from the bill",
        "  no step read differently from the bill (full hit, partial and miss agree at every"
        " billed step): the whole difference, -$0.0760, is in the sizes",
        "  tokens simulated / billed: read 91,329 / 91,329 (+0.0%), written 43,331 / 43,331"
        " (+0.0%), uncached 0 / 24,000 (-100.0%)",
        "simulated cost: $0.2161 with caching, $0.4602 without",
    ]
    assert _json(capsys, str(bumped))["totals"]["billed"]["first_divergent_step"] is None


def test_within_five_percent_two_lines(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(SAMPLES / "imported_claude_code.yaml")
    assert _from(_report(capsys, path), "billed:", 3) == [
        "billed: $0.2161 for the 12 steps with usage",
        "simulated: $0.2161 for the same steps, +0.0% from the bill",
        "simulated cost: $0.2161 with caching, $0.4602 without",
    ]


def test_a_sample_of_usage_stays_beside_the_simulated_cost(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = _report(capsys, str(SAMPLES / "research_agent.yaml"))
    assert _from(lines, "cost:", 3) == [
        "cost: $0.0964 with caching, $0.3271 without",
        "billed: $0.0186 for the 1 step with usage, of 21",
        "simulated: $0.0178 for the same step, -4.0% from the bill",
    ]


def test_without_a_bill_the_report_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(SAMPLES / "review_agent_paths.yaml")
    lines = _report(capsys, path)
    assert _from(lines, "totals:", 3) == [
        "totals: 3,269 tokens · read 0 · write 0 · uncached 3,269 · hit ratio 0.0%",
        "cost: $0.0117 with caching, $0.0117 without",
        "",
    ]
    assert lines[1].startswith("tokens counted with tiktoken") and "scaled" not in lines[1]
    assert not any("bill" in line for line in lines)
    out = _json(capsys, path)
    assert "billed" not in out["totals"] and "token_scale" not in out


def test_the_factor_that_scaled_sizes_is_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = (SAMPLES / "imported_claude_code.yaml").read_text("utf-8")
    scaled = tmp_path / "scaled.yaml"
    scaled.write_text(
        text.replace("  title:", "  token_scale:\n    claude-sonnet-4-5-20250929: 1.25\n  title:"),
        "utf-8",
    )
    lines = _report(capsys, str(scaled))
    assert lines[1] == (
        "tokens counted with tiktoken (approximate: this model's tokenizer is not public)"
        " · sizes scaled to the bill: ×1.25"
    )
    assert _json(capsys, str(scaled))["token_scale"] == {"claude-sonnet-4-5-20250929": 1.25}
    # at a what-if model nothing was scaled, and nothing is said
    other = _report(capsys, str(scaled), "--provider", "openai", "--model", "gpt-5")
    assert "scaled" not in other[1]
