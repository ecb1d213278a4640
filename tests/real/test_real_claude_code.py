"""Claude Code transcripts of the real-traffic corpus against their bill (see corpus.py)."""

from __future__ import annotations

import json
from functools import cache

from assembler.analysis.engine import SessionAnalysis, analyze, import_file
from assembler.sessions.loader import parse_session
from benchmarks.agreement_report import REAL, fixture_files
from tests.real.corpus import REAL_MARKS, measured, total

pytestmark = REAL_MARKS


def test_claude_code_agrees_with_the_bill() -> None:
    f = total("claude-code")
    assert f.sessions == 8
    assert f.agreement.steps >= 880
    assert f.agreement.share >= 0.995
    assert f.false_alarms == 0
    # every break of prefix continuity is a named event
    assert f.breaks["unnamed"] == 0
    assert {"compaction", "task-notification", "tools-changed"} <= set(f.breaks)


def test_claude_code_compactions_and_model_switches_are_caught() -> None:
    reasons = total("claude-code").agreement.reasons
    assert reasons["compaction"] >= 5  # one per session that compacted
    assert reasons["model switch"] >= 1  # ae4a77f8 switches to haiku
    assert reasons["unexplained"] == 0


def test_claude_code_simulated_cost_is_within_3_percent_of_the_bill_in_every_session() -> None:
    sessions = [m for m in measured("claude-code") if m.fidelity is not None]
    assert len(sessions) == 8
    errors = {m.path.name: m.fidelity.cost_error for m in sessions if m.fidelity is not None}
    assert {name: e for name, e in errors.items() if abs(e) > 0.03} == {}
    assert abs(total("claude-code").cost_error) <= 0.03


@cache
def _analyses() -> tuple[SessionAnalysis, ...]:
    out = []
    for fmt, path in fixture_files(REAL / "claude-code"):
        session = parse_session(json.dumps(import_file(fmt, path)), f"{path.stem}.json")
        out.append(analyze(session))
    return tuple(out)


def test_claude_code_sizes_fit_the_bill_request_by_request() -> None:
    """What the fitted sizes leave of each request's billed input: a fraction of a percent
    in all, and no request off by more than a few thousand tokens (one factor per session
    and model cannot size a long tool output and a short answer alike)."""
    residuals = [
        (s.input_residual, s.measured.input + s.measured.cache_read + s.measured.cache_write)
        for a in _analyses()
        for s in a.steps
        if s.measured is not None and s.input_residual is not None
    ]
    assert len(residuals) >= 880
    assert sum(abs(r) for r, _ in residuals) <= 0.005 * sum(b for _, b in residuals)
    assert max(abs(r) for r, _ in residuals) <= 5_000
    # the factor the analysis carries, per model, is the session's
    scales = [a.token_scale for a in _analyses() if a.token_scale]
    assert scales and all(1.0 < f < 1.5 for s in scales for f in s.values())
