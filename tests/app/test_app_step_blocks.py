"""AppTest: the step view for recorded requests — history folded by turn, the cache filter,
a block's line diff against the previous step (escaped), and the request as sent."""

from __future__ import annotations

import json

import pytest
from app_helpers import ROOT, block_picker, block_pickers, hostile_session_bytes, new_app
from streamlit.testing.v1 import AppTest

from ui.views import step_blocks
from ui.views.step_blocks import DETAIL_OPEN

FIX = ROOT / "tests" / "sessions" / "importers" / "fixtures" / "claude_code"
FILES = [FIX / "session.jsonl", FIX / "subagents" / "agent-a1b2c3.jsonl"]


def _imported(step: int) -> AppTest:
    at = new_app()
    at.run()
    at.selectbox(key="w_sel_session").select("Upload a file…").run()
    at.file_uploader(key="upload_session").set_value(
        [(f.name, f.read_bytes(), "application/x-ndjson") for f in FILES]
    )
    at.run()
    at.query_params["step"] = str(step)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def _html(at: AppTest) -> str:
    return "".join(h.proto.body for h in at.get("html"))


def test_recorded_history_is_folded_by_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    from assembler.analysis.app import history_view
    from assembler.analysis.app.uploads import read_upload
    from assembler.analysis.engine.analyzer import analyze
    from assembler.analysis.engine.layouts import builtin_layout
    from assembler.sessions.loader import parse_bytes
    from assembler.sessions.model import LLMCall

    monkeypatch.setattr(step_blocks, "MIN_FOLD_BLOCKS", 0)
    up = read_upload([(f.name, f.read_bytes()) for f in FILES])
    session = parse_bytes(up.raw, up.name)
    a = analyze(session, builtin_layout("seed"))
    calls = [e for e in session.events if isinstance(e, LLMCall)]
    # the first step whose history has a fold, by the library's own rule
    step, fold = next(
        (s, f)
        for s, c in zip(a.steps, calls, strict=True)
        if c.request is not None
        for f in history_view.fold_history(s.blocks, [b.role for b in c.request], 0)
        if isinstance(f, history_view.Fold)
    )
    assert fold.blocks > 1
    at = _imported(step.step)
    page = _html(at)
    assert f'data-block="{fold.name}"' in page
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert any(fold.label in c and c.startswith("Folded") for c in captions)
    # blocks that changed stay open, one row each
    for b in step.blocks:
        if b.change in ("new", "changed") and b.section == "messages":
            assert f'data-block="{b.name}"' in page
    # what applies to a recorded request is said plainly
    assert any(
        c.startswith("Recorded request: it is replayed with its own blocks") for c in captions
    )


def test_the_cache_filter_hides_other_states(monkeypatch: pytest.MonkeyPatch) -> None:
    at = _imported(11)
    at.get("button_group")[0].set_value(["write"]).run()
    page = _html(at)
    assert "cai-chip cai-write" in page
    assert "cai-chip cai-read" not in page.split('class="cai-stack"')[1]


def test_a_block_shows_its_line_diff_against_the_previous_step() -> None:
    at = new_app(step="2")
    at.run()
    at.selectbox(key="w_sel_session").select("Upload a file…").run()
    at.file_uploader(key="upload_session").upload("hostile.yaml", hostile_session_bytes())
    at.run()
    at.query_params["step"] = "2"
    at.run()
    assert not at.exception and not at.error
    assert not block_pickers(at)  # closed: its content is not built
    at.session_state[DETAIL_OPEN] = True
    at.run()
    block_picker(at, 2).select("call_tree").run()
    page = _html(at)
    assert 'class="cai-add"' in page  # step 2 appended to the tree
    assert "+" in page.split('class="cai-diffsum"')[1][:20]
    # user text is escaped, never markup
    assert "&lt;script&gt;" in page and "<script>window" not in page


def test_the_picked_block_stays_while_the_detail_is_closed_and_steps_move() -> None:
    at = new_app(step="3")
    at.run()
    at.session_state[DETAIL_OPEN] = True
    at.run()
    block_picker(at, 3).select("tools").run()
    at.session_state[DETAIL_OPEN] = False
    at.button(key="next").click().run()
    assert not block_pickers(at) and at.subheader[0].value == "Step 4 / 21"
    at.session_state[DETAIL_OPEN] = True
    at.run()
    assert block_picker(at, 4).value == "tools"
    assert not at.exception and not at.error


def test_the_request_as_sent_is_viewable_and_downloadable() -> None:
    from assembler.analysis.engine.layouts import builtin_layout
    from assembler.analysis.engine.wire_request import wire_json
    from assembler.sessions.loader import load_session

    at = new_app(step="5")
    at.run()
    at.toggle(key="show_wire").set_value(True).run()
    assert not at.exception
    (code,) = [c for c in at.code if c.language == "json"]
    session = load_session(ROOT / "sample_sessions" / "research_agent.yaml")
    assert code.value == wire_json(session, builtin_layout("seed"), 5, "anthropic")
    request = json.loads(code.value)
    assert request["model"] and "messages" in request
    assert any("cache_control" in json.dumps(part) for part in request["system"])
    assert any(d.proto.label.startswith("Request of step 5") for d in at.get("download_button"))
