"""Text versions kept as deltas read back exactly, whatever the edits."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.pipeline import SessionAssembler
from assembler.sessions.generator import generate_session
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import Session
from assembler.sessions.versions import SMALL, StoredText, TextVersions, common_prefix, read
from tests.conftest import SAMPLES

# An edit to the previous version: cut it somewhere, then append a tail.
edits = st.lists(
    st.tuples(st.floats(0.0, 1.0), st.text(alphabet="ab\n -", max_size=3 * SMALL)),
    min_size=1,
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(edits, st.integers(1, 6))
def test_every_version_reads_back_exactly(steps: list[tuple[float, str]], every: int) -> None:
    log = TextVersions(full_every=every)
    texts: list[str] = []
    text = "x" * SMALL
    for cut, tail in steps:
        text = text[: int(len(text) * cut)] + tail
        texts.append(text)
    handles = [log.add(t) for t in texts]
    assert [read(h) for h in handles] == texts
    # and again in reverse, so no read leans on the one before
    assert [read(h) for h in reversed(handles)] == texts[::-1]


def test_short_texts_are_kept_as_themselves() -> None:
    log = TextVersions()
    assert log.add("short") == "short"
    assert len(log) == 0


def test_a_growing_text_is_stored_as_tails() -> None:
    log = TextVersions(full_every=100)
    base = "line\n" * SMALL
    texts = [base + "".join(f"step {j}\n" for j in range(i)) for i in range(50)]
    handles = [log.add(t) for t in texts]
    assert all(isinstance(h, StoredText) for h in handles)
    kept = sum(len(tail) for _, tail in log._deltas)
    assert kept == len(texts[-1])  # one full copy, then only what each step appended
    assert handles[10] == StoredText(log, 10) and handles[10] != handles[11]


@given(st.text(max_size=600), st.text(max_size=600), st.text(max_size=600))
def test_common_prefix_is_the_longest_common_prefix(head: str, a: str, b: str) -> None:
    x, y = head + a, head + b
    differs = (i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q)
    assert common_prefix(x, y) == next(differs, min(len(x), len(y)))


@pytest.mark.parametrize(
    "session",
    [
        load_session(SAMPLES / "research_agent.yaml"),
        parse_session(json.dumps(generate_session(300, 3)), "<generated>"),
    ],
    ids=["research", "generated-300"],
)
def test_the_analysis_keeps_every_steps_text_exactly(session: Session) -> None:
    analysis = analyze(session)
    stored = 0
    for assembled, step in zip(SessionAssembler(session), analysis.steps, strict=True):
        assert [(b.name, b.text) for b in step.blocks] == [
            (b.name, b.text) for b in assembled.wire.blocks
        ]
        stored += sum(isinstance(b.stored, StoredText) for b in step.blocks)
    if len(analysis.steps) > 100:
        assert stored > 100  # the long call trees went through the delta store
