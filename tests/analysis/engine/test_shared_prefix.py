"""The call tree handed over as pieces gives the same analysis as one re-read text.

The renderer hands the call tree on as a :class:`PieceText` (never joined),
tells later stages how long a prefix two successive renderings share (by
comparing their pieces), and returns the previous rendering itself when nothing
changed. These tests run the same sessions that way and the old way (every
rendering joined into one string, every common prefix found by scanning the
texts), and require the same result at every step.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.pipeline import SessionAssembler
from assembler.analysis.engine.results import SessionAnalysis
from assembler.design import calltree_pieces, calltree_yaml
from assembler.design.piece_text import Content, PieceText, shared_prefix, text_of
from assembler.sessions import versions
from assembler.sessions.generator import generate_session
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import Session
from tests.conftest import SAMPLES

EXPOSES = ["io", "llm", "full", "hidden"]


def _functions(data: dict[str, Any]) -> list[str]:
    names = {e["function"] for e in data["events"] if e["type"] == "enter"}
    root = data["events"][0]["function"]
    return sorted(names - {root})


@st.composite
def sessions(draw: st.DrawFn) -> Session:
    """A generated session whose functions get random ``expose`` and ``render_range``."""
    data = generate_session(draw(st.integers(1, 70)), draw(st.integers(0, 10_000)))
    specs: dict[str, Any] = {}
    for name in _functions(data):
        spec: dict[str, Any] = {}
        if draw(st.booleans()):
            spec["expose"] = draw(st.sampled_from(EXPOSES))
        if draw(st.integers(0, 3)) == 0:
            spec["render_range"] = {
                "callers": draw(st.one_of(st.none(), st.integers(0, 3))),
                "subcalls": draw(st.integers(-1, 3)),
            }
        if spec:
            specs[name] = spec
    if specs:
        data["session"]["functions"] = specs
    return parse_session(json.dumps(data), "<generated>")


def _without_shared_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    """The old text structure: one string per rendering, prefixes found by scanning."""
    monkeypatch.setattr(calltree_pieces, "joined", "\n".join)
    monkeypatch.setattr(versions, "shared_prefix", lambda before, after: None)


def _both(session: Session) -> tuple[SessionAnalysis, SessionAnalysis]:
    calltree_yaml.clear_caches()
    new = analyze(session)
    with pytest.MonkeyPatch.context() as mp:
        _without_shared_prefix(mp)
        calltree_yaml.clear_caches()
        old = analyze(session)
    return new, old


def _assert_same_steps(new: SessionAnalysis, old: SessionAnalysis) -> None:
    assert len(new.steps) == len(old.steps)
    for a, b in zip(new.steps, old.steps, strict=True):
        assert a == b, f"step {a.step} differs"  # stored texts compare by their text
    assert new.totals == old.totals


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions())
def test_random_sessions_analyse_the_same_with_and_without_shared_prefixes(
    session: Session,
) -> None:
    _assert_same_steps(*_both(session))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions())
def test_the_shared_prefix_is_one_the_texts_truly_share(session: Session) -> None:
    calltree_yaml.clear_caches()
    before: Content | None = None
    for step in SessionAssembler(session):
        text = next((b.content for b in step.wire.blocks if b.name == "call_tree"), None)
        if text is None:
            continue
        assert isinstance(text, PieceText)  # never joined on the way
        if before is not None and before is not text:
            known = shared_prefix(before, text)
            assert known is not None  # successive renderings always know it
            assert text_of(before)[:known] == text_of(text)[:known]
        assert before is None or before != text or before is text  # unchanged: same object
        before = text


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.integers(40, 2000))
def test_sealing_the_finished_children_often_changes_nothing(session: Session, limit: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(calltree_yaml, "_OPEN_LIMIT", limit)
        new = _both(session)[0]
    _assert_same_steps(new, _both(session)[1])


def test_the_research_sample_analyses_the_same() -> None:
    _assert_same_steps(*_both(load_session(SAMPLES / "research_agent.yaml")))


@pytest.mark.parametrize("limit", [1 << 16, 500])
def test_a_long_growing_tree_shares_all_but_its_new_tail(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(calltree_yaml, "_OPEN_LIMIT", limit)
    session = parse_session(json.dumps(generate_session(300, 1)), "<generated>")
    calltree_yaml.clear_caches()
    before: Content | None = None
    lost = []
    for step in SessionAssembler(session):
        text = next(b.content for b in step.wire.blocks if b.name == "call_tree")
        if before is not None and before is not text:
            known = shared_prefix(before, text)
            assert known is not None
            a, b = text_of(before), text_of(text)
            lost.append(versions.narrow(a, b, 0, min(len(a), len(b))) - known)
        before = text
    # what the renderer knows falls short of the true common prefix by a line or so,
    # or by the open piece when it is sealed
    assert max(lost) < 400 + (limit if limit < 10_000 else 0), max(lost)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions())
def test_every_step_reads_as_the_old_renderer_wrote_it(session: Session) -> None:
    """Block by block, the pieces join to the very text the old renderer returned."""
    calltree_yaml.clear_caches()
    new = [
        [(b.name, b.content, b.breakpoint) for b in step.wire.blocks]
        for step in SessionAssembler(session)
    ]
    with pytest.MonkeyPatch.context() as mp:
        _without_shared_prefix(mp)
        calltree_yaml.clear_caches()
        old = [
            [(b.name, b.content, b.breakpoint) for b in step.wire.blocks]
            for step in SessionAssembler(session)
        ]
    assert len(new) == len(old)
    for number, (a, b) in enumerate(zip(new, old, strict=True), start=1):
        assert [(n, bp) for n, _, bp in a] == [(n, bp) for n, _, bp in b], number
        for (name, content, _), (_, plain, _) in zip(a, b, strict=True):
            assert isinstance(plain, str)  # the old structure: one string
            assert text_of(content) == plain, f"step {number}, block {name}"
            assert len(content) == len(plain)


def test_a_piece_text_reads_like_its_join() -> None:
    pieces = ("<call_tree>", "- function: a\n  status: running", "", "</call_tree>")
    text = PieceText(pieces)
    joined = "\n".join(pieces)
    assert str(text) == joined and len(text) == len(joined)
    for start in range(len(joined) + 2):
        assert text.tail(start) == joined[start:], start
    assert text == joined and text == PieceText(tuple(pieces))
    assert text != PieceText(pieces[:-1]) and hash(text) == hash(joined)
    assert calltree_pieces.joined(list(pieces)) == joined
