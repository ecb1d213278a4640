"""AppTest: an imported session's measured usage is drawn over the simulated cache chart."""

from __future__ import annotations

import json
from typing import Any

from app_helpers import ROOT, new_app
from streamlit.testing.v1 import AppTest

IMPORTED = "imported_claude_code"
MEASURED_TRACES = ["measured read", "measured read + written", "measured total"]


def _cache_chart(at: AppTest) -> dict[str, Any]:
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    (cache,) = [s for s in specs if s["layout"]["title"]["text"].startswith("Cache per step")]
    assert isinstance(cache, dict)
    return cache


def _timeline(**query: str) -> AppTest:
    at = new_app(**query)
    at.run()
    at.switch_page("pages/1_Timeline.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_the_bundled_imported_session_is_the_importers_output() -> None:
    from assembler.analysis.engine.importing import import_file
    from assembler.sessions.loader import load_session

    fixture = (
        ROOT / "tests" / "sessions" / "importers" / "fixtures" / "claude_code" / "session.jsonl"
    )
    bundled = load_session(ROOT / "sample_sessions" / f"{IMPORTED}.yaml")
    assert bundled.id == import_file("claude-code", fixture)["session"]["id"]


def test_selected_imported_session_overlays_measured_on_simulated() -> None:
    at = _timeline(session=IMPORTED, step="8")
    assert at.subheader[0].value == "Step 8 / 12"
    spec = _cache_chart(at)
    names = [t["name"] for t in spec["data"]]
    assert names[:3] == ["read", "written", "uncached"]  # the simulated bars stay first
    assert names[3:6] == MEASURED_TRACES
    assert "simulated ≠ measured" not in names  # the fixture agrees on every call
    assert "(dashed: measured)" in spec["layout"]["title"]["text"]
    read, _, total = spec["data"][3:6]
    assert read["line"]["dash"] == "dash" and read["type"] == "scatter"
    # step 8 follows a 1 h 26 min idle gap: the provider read nothing and wrote it all
    assert read["y"][7] == 0
    assert total["y"][7] == 12_333  # its whole request (simulated: the same)
    assert total["customdata"][7] == [8, 0]  # no uncached input on top of the writes
    assert any("Dashed lines" in c.value for c in at.caption)


def test_a_session_with_one_measured_call_has_one_point_per_level() -> None:
    # the coding sample records usage on a single call: only that step has points
    at = _timeline(session="coding_agent_midnight")
    spec = _cache_chart(at)
    measured = [t for t in spec["data"] if t["name"] in MEASURED_TRACES]
    assert len(measured) == 3
    assert sum(y is not None for y in measured[0]["y"]) == 1
