"""What the server keeps: the Compare page's comparisons by bytes like the others, and
what a browser session alone used dropped once that session has gone idle."""

from __future__ import annotations

import pytest
from app_helpers import new_app
from streamlit.testing.v1 import AppTest

from ui.state import data, work_budget

COMPARE = "pages/2_Compare_layouts.py"


def _compare() -> AppTest:
    at = new_app()
    at.run()
    at.switch_page(COMPARE)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_a_comparison_is_kept_by_bytes() -> None:
    _compare()
    store = data._comparisons()
    assert len(store.items) == 1
    (key,) = store.items
    assert store.total == 2 * data.file_bytes(key[0])
    store.limit = store.total  # one more comparison is over the budget: the oldest goes
    store.put(("another",), object(), 1)
    assert key not in store.items and list(store.items) == [("another",)]


def test_an_idle_browser_session_alone_loses_its_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    first = new_app(session="coding_agent_midnight")
    first.run()
    assert not first.exception
    midnight = data.bundled_key("coding_agent_midnight")
    research = data.bundled_key("research_agent")
    assert midnight in data._sessions().items
    assert any(k[0] == midnight for k in data._analyses().items)

    # another browser session, an hour later: the first has not been seen since
    later = work_budget._now() + work_budget.IDLE_SECONDS + 60
    monkeypatch.setattr(work_budget, "_now", lambda: later)
    second = new_app(session="research_agent")
    second.run()
    assert not second.exception
    assert midnight not in data._sessions().items
    assert not any(k[0] == midnight for k in data._analyses().items)
    assert research in data._sessions().items
    assert any(k[0] == research for k in data._analyses().items)


def test_an_entry_two_sessions_use_stays_while_one_is_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = new_app(session="research_agent")
    first.run()
    research = data.bundled_key("research_agent")
    second = new_app(session="research_agent")
    second.run()
    later = work_budget._now() + work_budget.IDLE_SECONDS + 60
    monkeypatch.setattr(work_budget, "_now", lambda: later)
    second.run()  # the second is still open; the first has gone idle
    assert not second.exception
    assert research in data._sessions().items
    assert any(k[0] == research for k in data._analyses().items)
