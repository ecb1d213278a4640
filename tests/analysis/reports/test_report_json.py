"""``analyze --json`` written one step at a time is the document ``json.dumps`` writes."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.reports.indented_json import dumps_indented
from assembler.analysis.reports.report_json import analysis_json, write_analysis_json
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


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()  # any code point: quotes, backslashes, line breaks, non-ASCII
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
        | st.dictionaries(st.integers() | st.booleans() | st.none(), inner, max_size=3)
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(_values, st.integers(min_value=0, max_value=3))
def test_indented_json_is_the_standard_librarys(value: object, level: int) -> None:
    expected = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + "  " * level)
    assert dumps_indented(value, level) == expected
