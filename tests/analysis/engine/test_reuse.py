"""A cached analysis frozen for reuse is no longer walked by full collections."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.reuse import freeze_for_reuse
from assembler.sessions.loader import load_session
from tests.conftest import SAMPLES


@pytest.fixture
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()  # the rest of the test run collects as usual


@pytest.mark.usefixtures("thawed")
def test_a_frozen_analysis_leaves_the_collected_generations() -> None:
    a = analyze(load_session(SAMPLES / "research_agent.yaml"))
    step = a.steps[0]
    assert any(o is step for o in gc.get_objects())  # tracked before
    assert freeze_for_reuse(a) is a
    assert gc.get_freeze_count() > 0
    assert not any(o is step for o in gc.get_objects())  # what gc.collect() walks
    assert a.steps[0].tokens["total"] > 0  # and still there to read
