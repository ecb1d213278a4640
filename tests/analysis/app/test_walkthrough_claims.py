"""Every sentence the Learn page and the step header say about a cache outcome agrees with
the analysis (reading 9)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assembler.analysis.app.walkthrough import (
    LIFETIMES,
    POINTS,
    cache_sentence,
    contradictions,
    date_lines,
    header_sentence,
    learn_points,
)
from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.layouts import builtin_layout
from assembler.analysis.engine.results import SessionAnalysis, StepAnalysis
from assembler.sessions.loader import load_session

SAMPLES = Path(__file__).resolve().parents[3] / "sample_sessions"


@pytest.fixture(scope="module")
def research() -> dict[str, SessionAnalysis]:
    session = load_session(SAMPLES / "research_agent.yaml")
    return {ttl: analyze(session, builtin_layout(layout)) for ttl, layout in LIFETIMES}


@pytest.fixture(scope="module")
def midnight() -> SessionAnalysis:
    return analyze(load_session(SAMPLES / "coding_agent_midnight.yaml"), builtin_layout("seed"))


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.:])\s+(?=[A-Z`])", text) if s]


def by_label(a: SessionAnalysis, label: str) -> StepAnalysis:
    return next(s for s in a.steps if s.label == label)


def test_every_learn_sentence_agrees_with_the_numbers_it_is_shown_for(
    research: dict[str, SessionAnalysis],
) -> None:
    points = learn_points(research)
    assert [p[0] for p in points] == [p.label for p in POINTS]
    checked = 0
    for label, _, lines in points:
        for line in lines:
            # a computed line names its lifetime; the prose must hold under every lifetime
            ttls = [t for t in research if line.startswith(f"With a {t} lifetime")] or list(
                research
            )
            for ttl in ttls:
                step = by_label(research[ttl], label)
                for sentence in sentences(line):
                    assert not contradictions(sentence, step), (label, ttl, sentence)
                    checked += 1
    assert checked > 20


def test_the_fourth_point_shows_what_each_lifetime_does(
    research: dict[str, SessionAnalysis],
) -> None:
    lines = dict((p[0], p[2]) for p in learn_points(research))["walk-4"]
    five, hour = by_label(research["5m"], "walk-4"), by_label(research["1h"], "walk-4")
    assert five.read == 0 and hour.read > 0  # the story needs the 1-hour lifetime
    assert any(line.startswith("With a 5m lifetime, nothing is read") for line in lines)
    assert any(line.startswith(f"With a 1h lifetime, {hour.read:,} of") for line in lines)
    assert any("22 min after the call before it" in line for line in lines)


def test_the_checker_catches_the_claims_it_exists_for(
    research: dict[str, SessionAnalysis],
) -> None:
    five = by_label(research["5m"], "walk-4")
    assert contradictions("L0 is a cache hit here, so the call is cheap.", five)
    two = by_label(research["5m"], "walk-2")
    assert two.write == 0
    assert contradictions("Only the tail of the tree is written again.", two)
    assert contradictions(f"{two.read + 1:,} of {two.tokens['total']:,} tokens are read", two)
    assert not contradictions(cache_sentence(two, "5m"), two)


def test_the_date_lines_agree_with_the_midnight_step(midnight: SessionAnalysis) -> None:
    step = by_label(midnight, "after-midnight")
    lines = date_lines(midnight, "coding_agent_midnight")
    assert any(str(f"{step.write:,} are written") in line for line in lines)
    for line in lines:
        for sentence in sentences(line):
            assert not contradictions(sentence, step), sentence


@pytest.mark.parametrize("name", ["research_agent", "coding_agent_midnight", "review_agent_paths"])
def test_every_step_header_agrees_with_its_step(name: str) -> None:
    session = load_session(SAMPLES / f"{name}.yaml")
    for ttl, layout in LIFETIMES:
        a = analyze(session, builtin_layout(layout))
        for i, step in enumerate(a.steps):
            text = header_sentence(step, first=i == 0)
            assert not contradictions(text, step), (name, ttl, step.step, text)


def test_a_first_step_that_reads_says_so(tmp_path: Path) -> None:
    """A recorded session can begin on a prefix cached before it (a ``warm`` block: the
    bill reads at its first request): its first header says what was read, never that
    nothing is cached."""
    from assembler.sessions.generator import generate_session, write_session

    data = generate_session(2, 0)
    call = next(e for e in data["events"] if e["type"] == "llm")
    system = "You review pull requests carefully and explain each finding. " * 300
    call["request"] = {
        "blocks": [
            {"section": "system", "text": system, "breakpoint": True, "warm": True},
            {"section": "messages", "role": "user", "text": "Review the diff.", "breakpoint": True},
        ]
    }
    path = tmp_path / "warm.jsonl"
    write_session(data, path)
    first = analyze(load_session(path)).steps[0]
    assert first.read > 0 and first.write > 0
    text = header_sentence(first, first=True)
    assert text == (
        f"First step: {first.read:,} tokens were already in the cache when the session began,"
        f" so they are read, and {first.write:,} are written."
    )
    assert not contradictions(text, first)
    old = "First step: nothing is cached yet, so the request writes the prefix."
    assert contradictions(old, first)  # what the header said before
