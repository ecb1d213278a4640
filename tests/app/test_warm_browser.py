"""The browser's warm-up: every page hands the tab the frontend's own chart and table modules."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import streamlit as st
from app_helpers import new_app

from ui.frame import warm_browser

FRONTEND = Path(st.__file__).parent / "static" / "static" / "js"


def test_the_modules_are_the_ones_the_frontend_imports_lazily() -> None:
    names = warm_browser.modules()
    assert [n.split(".")[0] for n in names] == list(warm_browser.ELEMENTS)
    page = (FRONTEND.parent.parent / "index.html").read_text(encoding="utf-8")
    (entry,) = re.findall(r'<script type="module"[^>]* src="\./static/js/([^"]+)"', page)
    code = (FRONTEND / entry).read_text(encoding="utf-8")
    for name in names:
        assert (FRONTEND / name).is_file()
        # imported relative to the entry module: the tab's import resolves to the same address
        assert re.search(rf"import\(`\./{re.escape(name)}`\)", code), name


@pytest.mark.parametrize("page", [None, "pages/1_Timeline.py", "pages/3_Registry.py"])
def test_every_page_renders_the_loader_once(page: str | None) -> None:
    at = new_app(session="research_agent")
    at.run()
    if page is not None:
        at.switch_page(page)
        at.run()
    assert not at.exception
    loaders = [
        e.proto
        for e in at.sidebar
        if getattr(e.proto, "component_name", None) == "cai_warm_browser"
    ]
    assert len(loaders) == 1
    assert json.loads(loaders[0].json) == {
        "modules": list(warm_browser.modules()),
        "quiet": warm_browser.QUIET_MS,
    }


def test_a_frontend_without_the_module_gets_nothing_to_load(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # a Streamlit whose files are named otherwise: the tab loads nothing, nothing breaks
    monkeypatch.setattr(st, "__file__", str(tmp_path / "streamlit" / "__init__.py"))
    warm_browser.modules.cache_clear()
    try:
        assert warm_browser.modules() == ()
    finally:
        monkeypatch.undo()
        warm_browser.modules.cache_clear()
    assert warm_browser.modules()
