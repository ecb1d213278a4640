"""AppTest: a new upload's first page keeps what is left of the answer's budget however late
its reading ended: the analysis on the run after the upload is stopped within a second or
so, never handed the full budget because the reading overran its share."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from app_helpers import new_app
from test_app_big_sessions import _jsonl

from assembler.sessions.generator import generate_session
from ui.state import uploads
from ui.state.work_budget import ANALYSIS_SECONDS

STEPS = 10_000  # an analysis of seconds anywhere (measured: 6.0 s of CPU here, the limit is 1 s)


def test_a_reading_that_overran_its_share_still_answers_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the upload was received 30 s before the reading ended (a loaded machine)
    late = SimpleNamespace(monotonic=lambda: time.monotonic() - 30.0)
    monkeypatch.setattr(uploads, "time", late)
    raw = _jsonl(generate_session(STEPS, 3))
    at = new_app()
    at.run()
    at.selectbox(key="w_sel_session").select("Upload a file…").run()
    at.file_uploader(key="upload_session").upload("long.jsonl", raw)
    started = time.monotonic()
    at.run(timeout=ANALYSIS_SECONDS)
    spent = time.monotonic() - started
    messages = [str(e.value).strip("` ") for e in at.error]  # shown as a literal
    assert any(m.startswith("long.jsonl: the analysis stopped after 1 s") for m in messages), (
        messages
    )
    assert spent < ANALYSIS_SECONDS / 2, spent
    # the next step taken has the full budget again: no first-answer limit is left behind
    assert "_first_answer" not in at.session_state
