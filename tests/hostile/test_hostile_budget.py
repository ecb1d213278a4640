"""The app's budget for work that reports no progress (comparison, lint, recommendation):
stopped at the budget, or as soon as its browser session has gone."""

from __future__ import annotations

import time

import pytest
from streamlit.runtime.scriptrunner import StopException

from ui.state import work_budget
from ui.state.work_budget import AnalysisTooLong, bounded


def _spin(seconds: float) -> int:
    """Pure Python work that never looks at a clock for the budget's sake."""
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += sum(range(1000))
    return n


def test_work_past_the_budget_is_stopped_soon_after_it() -> None:
    start = time.monotonic()
    with (
        pytest.raises(
            AnalysisTooLong, match=r"the search stopped after 0\.5 s, the app's limit; run"
        ),
        bounded("the search", "run it elsewhere", seconds=0.5),
    ):
        _spin(30)
    assert time.monotonic() - start < 0.5 + 1.0


def test_work_of_a_browser_session_that_ended_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(work_budget, "_session_alive", lambda session_id: False)
    start = time.monotonic()
    with pytest.raises(StopException), bounded("the lint", "", seconds=60):
        _spin(30)
    assert time.monotonic() - start < 2.0


def test_work_within_the_budget_is_left_alone_and_nothing_fires_later() -> None:
    with bounded("the comparison", "", seconds=0.3):
        assert _spin(0.05) > 0
    _spin(0.8)  # past the budget, outside the block: nothing is raised here


def test_an_error_of_the_work_itself_passes_as_it_is() -> None:
    with pytest.raises(KeyError), bounded("the comparison", "", seconds=5):
        raise KeyError("x")


def test_a_long_count_does_not_hold_the_stop_back() -> None:
    """4,000,000 characters of one letter: seconds in one tokenizer call, which an
    exception raised into the thread would wait for; the budget's stop lands on time."""
    from assembler.cache.tokenizers import TokenCounter

    counter = TokenCounter("o200k_base")
    start = time.monotonic()
    with (
        pytest.raises(AnalysisTooLong, match=r"the analysis stopped after 0\.5 s"),
        bounded("the analysis", "", seconds=0.5),
    ):
        counter.count("x" * 4_000_000)
    assert time.monotonic() - start < 0.5 + 1.0
