"""``analyze --json`` written one step at a time is the document ``json.dumps`` writes."""

from __future__ import annotations

import io
import json

import pytest

from assembler.analysis.engine import analyze
from assembler.analysis.report_json import analysis_json, write_analysis_json
from assembler.sessions.loader import load_session
from tests.conftest import SAMPLES


@pytest.mark.parametrize(
    "name", ["research_agent.yaml", "imported_claude_code.yaml", "coding_agent_midnight.yaml"]
)
def test_streamed_json_is_the_whole_document(name: str) -> None:
    a = analyze(load_session(SAMPLES / name))
    out = io.StringIO()
    write_analysis_json(a, out.write)
    assert out.getvalue() == json.dumps(analysis_json(a), indent=2, ensure_ascii=False)
