"""Comparing two layouts on a session of recorded requests runs one analysis where both give
the same: the head side is exactly what analysing it under its own layout gives (its name
aside), at every pair of built-in layouts, on recorded samples and real-shaped imports."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from assembler.analysis.advice import compare
from assembler.analysis.engine import BUILTIN_LAYOUTS, analyze, builtin_layout, import_file
from assembler.analysis.engine import analyzer as analyzer_module
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import Session

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "sessions" / "importers" / "fixtures"


def _sessions() -> list[Session]:
    import json

    imported = [
        parse_session(json.dumps(import_file(fmt, FIX / name)), f"{Path(name).stem}.json")
        for fmt, name in (
            ("claude-code", "traffic/claude_lifetime.jsonl"),
            ("codex", "codex/rollout-2026-03-12T14-00-00-019a9776.jsonl"),
        )
    ]
    return [load_session(ROOT / "sample_sessions" / "imported_claude_code.yaml"), *imported]


SESSIONS = _sessions()


@pytest.mark.parametrize("session", SESSIONS, ids=[s.source for s in SESSIONS])
@pytest.mark.parametrize("ttl", [None, "1h"])
def test_the_head_of_a_recorded_session_is_its_own_analysis(
    session: Session, ttl: str | None
) -> None:
    base = builtin_layout("seed")
    for name in BUILTIN_LAYOUTS:
        head = builtin_layout(name)
        got = compare(session, base, head, ttl=ttl).head
        assert got == analyze(session, head, ttl=ttl), name
        assert got.layout == head.name


def test_one_analysis_serves_both_sides_when_they_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    session = SESSIONS[0]
    calls: list[str] = []
    real = analyzer_module.analyze

    def counted(*args: object, **kwargs: object) -> object:
        calls.append("analyze")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    import assembler.analysis.advice.comparison as comparison

    monkeypatch.setattr(comparison, "analyze", counted)
    held = real(session, builtin_layout("seed"))
    out = compare(session, builtin_layout("seed"), builtin_layout("situation-first"), analysed=held)
    assert calls == [] and out.base is held
    # a layout whose own lifetime differs is analysed on its own
    compare(session, builtin_layout("seed"), builtin_layout("seed-1h"), analysed=held)
    assert calls == ["analyze"]
    assert dataclasses.replace(out.head, layout="seed") == held
