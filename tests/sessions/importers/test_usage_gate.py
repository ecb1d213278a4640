"""The byte scan that decides whether a record's usage is walked: it lets no odd count
through, and it passes an ordinary line however its writer spaced it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.sessions.importers.records import _ODD_COUNT, as_int, bad_usage

#: Counts an ordinary line holds (the scan walks 16 digits, some of which are under 2**53).
GOOD = st.one_of(st.none(), st.integers(0, 10**15 - 1))
ODD = st.one_of(
    st.integers(max_value=-1),
    st.integers(min_value=10**15),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.booleans(),
)
#: The separators writers use: compact (Claude Code, Codex) and Python's defaults.
SEPARATORS = st.sampled_from([(",", ":"), (", ", ": "), (",", ": "), (" , ", " : ")])


def _record(counts: dict[str, Any]) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "usage": counts}}


@given(
    st.dictionaries(
        st.sampled_from(["input_tokens", "output_tokens", "web_search_requests"]), GOOD
    ),
    SEPARATORS,
)
@settings(max_examples=300, deadline=None)
def test_an_ordinary_line_is_not_walked_however_spaced(
    counts: dict[str, Any], separators: tuple[str, str]
) -> None:
    line = json.dumps(_record(counts), separators=separators).encode()
    assert _ODD_COUNT.search(line) is None, line


@given(
    st.dictionaries(st.sampled_from(["input_tokens", "cache_read_input_tokens"]), GOOD),
    st.sampled_from(["output_tokens", "server_requests"]),
    ODD,
    SEPARATORS,
)
@settings(max_examples=300, deadline=None)
def test_a_line_with_an_odd_count_is_always_walked(
    counts: dict[str, Any], key: str, odd: Any, separators: tuple[str, str]
) -> None:
    value = _record({**counts, key: odd})
    if bad_usage(value) is None:  # a float that is whole, say: not odd to the walk either
        return
    line = json.dumps(value, separators=separators).encode()
    assert _ODD_COUNT.search(line) is not None, line


class _Count(int):
    """An int subclass: not what JSON reads, still a whole number."""


@settings(max_examples=300)
@given(
    st.one_of(
        st.integers(-(2**60), 2**60),
        st.floats(),
        st.booleans(),
        st.none(),
        st.text(max_size=3),
        st.integers(-5, 2**54).map(_Count),
    )
)
def test_a_count_is_a_whole_number_in_range_else_zero(value: Any) -> None:
    whole = value.is_integer() if isinstance(value, float) else isinstance(value, int)
    number = int(value) if whole and not isinstance(value, bool) else None
    expected = number if number is not None and 0 < number <= 2**53 - 1 else 0
    assert as_int(value) == expected
