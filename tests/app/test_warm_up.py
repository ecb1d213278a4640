"""The warm-up: once per process, after the first page is drawn, the pages' libraries."""

from __future__ import annotations

import logging
import sys

import pytest
from app_helpers import new_app

from ui.frame import warm_up


def test_it_starts_once_and_imports_what_the_pages_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(warm_up, "_started", False)
    thread = warm_up.start()
    assert thread is not None and thread.daemon
    thread.join(60)
    assert not thread.is_alive()
    assert all(name in sys.modules for name in warm_up.MODULES)
    assert warm_up.start() is None  # the second page, the second visitor: nothing more


def test_a_module_that_will_not_import_is_logged_and_the_rest_still_load(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(warm_up, "_started", False)
    monkeypatch.setattr(warm_up, "MODULES", ("no_such_module_anywhere", "csv"))
    monkeypatch.delitem(sys.modules, "csv", raising=False)
    with caplog.at_level(logging.WARNING, logger="inspector"):
        thread = warm_up.start()
        assert thread is not None
        thread.join(60)
    assert "csv" in sys.modules
    assert "could not import no_such_module_anywhere" in caplog.text


def test_a_drawn_page_starts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(warm_up, "start", lambda: calls.append(1))
    at = new_app(session="research_agent")
    at.run()
    assert not at.exception
    assert calls == [1]
