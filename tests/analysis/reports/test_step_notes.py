"""The text report's lines on single steps: warnings and the recorded tiers priced."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.reports.step_notes import priced_as_lines, step_ranges, warning_lines
from assembler.sessions.loader import parse_session

ROOT = Path(__file__).resolve().parents[3]


def test_runs_of_steps_are_ranges() -> None:
    assert step_ranges([]) == ""
    assert step_ranges([4]) == "4"
    assert step_ranges([9, 1, 3, 4, 5, 3]) == "1, 3–5, 9"
    assert step_ranges([1, 2]) == "1–2"


@given(st.sets(st.integers(1, 60)))
def test_ranges_name_exactly_the_steps_given(numbers: set[int]) -> None:
    named: set[int] = set()
    for part in filter(None, step_ranges(numbers).split(", ")):
        first, _, last = part.partition("–")
        named.update(range(int(first), int(last or first) + 1))
    assert named == numbers


def _tiered(*tiers: str) -> str:
    llm = "  - {{type: llm, at: '2026-11-02T10:0{m}:00Z', input: q{m}, output: ok{s}}}\n"
    return (
        "format: context-session/1\n"
        "session: {id: tiered, agent: {name: a}, provider: openai, model: gpt-4o}\n"
        "events:\n"
        "  - {type: enter, at: '2026-11-02T10:00:00Z', function: main}\n"
        + "".join(
            llm.format(m=m, s=f", settings: {{service_tier: {t}}}" if t else "")
            for m, t in enumerate(tiers, 1)
        )
        + "  - {type: exit, at: '2026-11-02T10:09:00Z', function: main}\n"
    )


def test_priced_tiers_and_unpriced_ones_are_told_apart() -> None:
    a = analyze(parse_session(_tiered("", "priority", "priority", "scale", "priority"), "t.yaml"))
    assert priced_as_lines(a.steps) == ["priced as recorded: steps 2–3, 5 in service tier priority"]
    assert warning_lines(a.steps) == [
        "warning: step 4: no price for service_tier 'scale' of model 'gpt-4o':"
        " priced at the standard rates",
    ]


def test_a_plain_session_has_no_such_lines() -> None:
    a = analyze(parse_session(_tiered("", ""), "t.yaml"))
    assert priced_as_lines(a.steps) == [] and warning_lines(a.steps) == []


def test_the_text_report_carries_them(tmp_path: Path) -> None:
    path = tmp_path / "tiered.yaml"
    path.write_text(_tiered("priority", "scale", "scale"), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "assembler", "analyze", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout
    assert "priced as recorded: step 1 in service tier priority\n" in out
    # one line for the warning both steps raised, under the rules line
    (warning,) = [line for line in out.splitlines() if line.startswith("warning:")]
    assert warning == (
        "warning: steps 2–3: no price for service_tier 'scale' of model 'gpt-4o':"
        " priced at the standard rates"
    )
