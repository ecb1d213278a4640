"""A cached analysis frozen for reuse is no longer walked by full collections."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.reuse import freeze_for_reuse, holds_frozen, release_frozen
from assembler.sessions.loader import load_session
from tests.conftest import SAMPLES


@pytest.fixture
def thawed() -> Iterator[None]:
    yield
    release_frozen()  # the rest of the test run collects as usual


@pytest.mark.usefixtures("thawed")
def test_a_frozen_analysis_leaves_the_collected_generations() -> None:
    a = analyze(load_session(SAMPLES / "research_agent.yaml"))
    step = a.steps[0]
    assert any(o is step for o in gc.get_objects())  # tracked before
    assert freeze_for_reuse(a) is a
    assert gc.get_freeze_count() > 0
    assert not any(o is step for o in gc.get_objects())  # what gc.collect() walks
    assert a.steps[0].tokens["total"] > 0  # and still there to read


@pytest.mark.usefixtures("thawed")
def test_once_frozen_an_analysis_does_not_count_the_frozen_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Counting them walks every frozen object (CPython 3.11): 0.13 s per analysis in a
    server holding a large one. The engine remembers that it froze instead."""
    session = load_session(SAMPLES / "research_agent.yaml")
    freeze_for_reuse(analyze(session))
    assert holds_frozen()

    def walk() -> int:
        raise AssertionError("gc.get_freeze_count walks the frozen list")

    monkeypatch.setattr(gc, "get_freeze_count", walk)
    assert analyze(session).steps[0].tokens["total"] > 0
    release_frozen()
    assert not holds_frozen()
