"""Layout links carry a token of their own, as upload links do: ``text:<hash>-<token>``.
Whoever merely has a layout's text (so its hash) cannot open someone's edited layout."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "app"))

from app_helpers import opened_page  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

COMPARE = "pages/2_Compare_layouts.py"
EDIT = "Edit in the page…"
TEXT = "name: mine\ncomponents:\n  current_date: {layer: L0, order: 11}\n"
LINK = re.compile(r"text:[0-9a-f]{16}-[0-9a-f]{16}")


def _page(**query: str) -> AppTest:
    """A new browser session opening Compare at ``query``."""
    return opened_page(COMPARE, **query)


def _head(at: AppTest) -> str:
    value = at.query_params["head"]
    return value if isinstance(value, str) else value[-1]


def _edited(text: str = TEXT) -> AppTest:
    at = _page(session="coding_agent_midnight")
    at.selectbox(key="head_choice").select(EDIT).run()
    at.text_area(key="head_text_seed").input(text).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_an_edited_layout_link_has_a_token_and_opens_elsewhere() -> None:
    link = _head(_edited())
    assert LINK.fullmatch(link), link
    again = _page(session="coding_agent_midnight", head=link)
    assert not again.exception and not again.error
    assert again.selectbox(key="head_choice").value == EDIT
    assert "current_date" in again.text_area(key="head_text_seed").value
    assert _head(again) == link  # the link opened keeps its token


def test_the_hash_alone_or_a_guessed_token_opens_nothing() -> None:
    link = _head(_edited())
    hashed = link.rpartition("-")[0]
    for guess in (hashed, f"{hashed}-{'0' * 16}"):
        at = _page(session="coding_agent_midnight", head=guess)
        warnings = " ".join(w.value for w in at.warning)
        assert f"head={guess}" in warnings and "upload it again" in warnings, warnings
        assert "current_date" not in " ".join(t.value for t in at.text_area)


def test_two_browser_sessions_keeping_one_text_get_two_links() -> None:
    first, second = _head(_edited()), _head(_edited())
    assert first != second and first.rpartition("-")[0] == second.rpartition("-")[0]
