"""Helpers shared by the AppTest tests."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

from streamlit.components.v2.component_manager import BidiComponentManager
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGES = (
    "pages/1_Timeline.py",
    "pages/2_Compare_layouts.py",
    "pages/3_Registry.py",
    "pages/4_Savings.py",
    "pages/5_Learn.py",
    "pages/6_Recommend.py",
)

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@functools.cache
def _components() -> BidiComponentManager:
    """The installed components, found once per process as a server finds them at start.

    A new AppTest scans the metadata of every installed distribution for component
    manifests on its first run: 0.8 s of CPU each time, measured, two thirds of a short
    AppTest test. The installed packages do not change during a test run."""
    manager = BidiComponentManager()
    manager.discover_and_register_components(start_file_watching=False)
    return manager


def new_app(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at._bidi_component_manager = _components()  # the attribute AppTest keeps its scan in
    for key, value in query.items():
        at.query_params[key] = value
    return at


def block_pickers(at: AppTest) -> list[Any]:
    """Every Block picker drawn (``ui.views.step_blocks.choice_key``)."""
    return [w for w in at.selectbox if str(w.key).startswith("block_text_choice_")]


def block_picker(at: AppTest, step: int) -> Any:
    """The Block picker of ``step`` (its key names the step and the block shown)."""
    (picker,) = [
        w for w in block_pickers(at) if str(w.key).startswith(f"block_text_choice_{step}_")
    ]
    return picker


def uploaded(files: list[tuple[str, bytes]]) -> AppTest:
    """The app after the sidebar's uploader was given ``files`` (names and bytes)."""
    at = new_app()
    at.run()
    at.selectbox(key="w_sel_session").select("Upload a file…").run()
    at.file_uploader(key="upload_session").set_value(
        [(name, raw, "application/x-ndjson") for name, raw in files]
    )
    at.run()
    return at


def opened_page(path: str, **query: str) -> AppTest:
    """A fresh load of a sub-page with ``query`` in its URL (a reload or a shared link)."""
    at = new_app()
    at.run()
    at.switch_page(path)
    at.query_params.clear()
    for key, value in query.items():
        at.query_params[key] = value
    at.session_state["_qp_sel_applied"] = None  # a new browser session has applied nothing
    at.run()
    return at


def hostile_session_bytes() -> bytes:
    """research_agent.yaml with script and onerror payloads in inputs and outputs."""
    text = (ROOT / "sample_sessions" / "research_agent.yaml").read_text("utf-8")
    text = text.replace(
        'input: "expand LLM-as-Code into an AAAI long paper"',
        "input: '<script>window.__pwned=1</script> expand LLM-as-Code'",
        1,
    )
    text = text.replace(
        'title: "Research agent: LLM-as-Code → AAAI long paper"',
        "title: '<img src=x onerror=\"window.__pwned=1\"> Research agent'",
        1,
    )
    text = text.replace(
        'output: "go to literature"',
        "output: '<img src=x onerror=\"window.__pwned=1\"> go to literature'",
        1,
    )
    assert text.count("window.__pwned") == 3
    return text.encode("utf-8")
