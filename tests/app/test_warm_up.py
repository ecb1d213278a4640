"""The warm-up: once per process, after the first page is drawn, the pages' libraries."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import pytest
from app_helpers import ROOT, new_app

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


def test_after_it_the_first_charts_of_a_process_import_nothing() -> None:
    """The first figure of a process paid for plotly's and narwhals' imports on first use;
    after the warm-up, a page's first charts (here on a real-sized table) import nothing.
    In a new interpreter: in this one, other tests have built charts already."""
    script = textwrap.dedent(
        """
        import sys
        import pandas as pd
        from ui.frame import warm_up
        from ui.views import charts
        warm_up.start().join(120)
        frame = pd.DataFrame({c: list(range(1, 157)) for c in charts._WARM_COLUMNS})
        before = set(sys.modules)
        for build in (charts.cache_per_step, charts.tokens_by_layer,
                      charts.cumulative_cost, charts.size_vs_depth):
            build(frame).to_dict()
        print(sorted(set(sys.modules) - before))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
