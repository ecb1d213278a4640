"""A session's bill alone (a plan search's) is the full analysis's totals, exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.advice.recorded_marks import plan_marks, recorded_marks, with_marks
from assembler.analysis.app import open_session
from assembler.analysis.engine import analyze, session_bill
from assembler.sessions.generator import generate_session
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import Session

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = sorted((ROOT / "sample_sessions").glob("*.yaml"))
CLAUDE = ROOT / "tests" / "sessions" / "importers" / "fixtures" / "claude_code" / "session.jsonl"
CODEX = CLAUDE.parent.parent / "codex" / "rollout-2026-03-12T14-00-00-019a9776.jsonl"
REAL = ROOT.parent / "shared" / "real-traffic" / "claude-code" / "marot-spotter"


def _same(session: Session, provider: str | None = None, model: str | None = None) -> None:
    full = analyze(session, provider=provider, model=model).totals
    assert session_bill(session, provider=provider, model=model) == full  # float for float


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_a_sample_session_bills_as_its_analysis(path: Path) -> None:
    session = load_session(path)
    _same(session)
    _same(session, provider="openai", model="gpt-5")  # a what-if: another cache, other prices


@pytest.mark.parametrize("path", [CLAUDE, CODEX], ids=["claude-code", "codex"])
def test_recorded_requests_bill_as_their_analysis_under_any_markers(path: Path) -> None:
    session = open_session(str(path)).session
    _same(session)
    for ttl in ("5m", "1h"):  # the markers re-placed, as a plan search bills them
        _same(with_marks(session, recorded_marks(ttl)))
    _same(with_marks(session, plan_marks(())))  # no marker at all


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real-traffic is absent")
def test_a_real_transcript_bills_as_its_analysis() -> None:
    session = open_session(str(REAL / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")).session
    _same(session)
    _same(with_marks(session, recorded_marks("1h")))


@given(st.integers(1, 40), st.integers(0, 10_000))
@settings(max_examples=25, deadline=None)
def test_generated_sessions_bill_as_their_analysis(steps: int, seed: int) -> None:
    _same(parse_session(json.dumps(generate_session(steps, seed)), "<generated>"))
