"""The few-characters test of recorded lint gives what the plain comparison gave.

The plain comparison stripped the shared ends character by character, then ran the
sequence matcher on the whole texts; the test now strips the ends with the scanning
prefix search and refuses before the matcher a pair whose lengths differ by more than
the few characters (every alignment changes at least that many).
"""

from __future__ import annotations

from difflib import SequenceMatcher

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.advice.recorded_lint import FEW_CHARACTERS, _difference


def ref_difference(a: str, b: str) -> tuple[str, str] | None:
    if a == b:
        return None
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    mid_a, mid_b = a[start : len(a) - end], b[start : len(b) - end]
    if max(len(mid_a), len(mid_b)) <= FEW_CHARACTERS:
        return mid_a, mid_b
    ops = [
        op for op in SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    if sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in ops) > FEW_CHARACTERS:
        return None
    return "…".join(a[i1:i2] for _, i1, i2, _, _ in ops), "…".join(b[j1:j2] for *_, j1, j2 in ops)


@st.composite
def pairs(draw: st.DrawFn) -> tuple[str, str]:
    """A text and an edit of it: a few spans replaced, inserted or deleted, short or long."""
    alphabet = st.sampled_from("ab01 :\n")
    a = draw(st.text(alphabet, max_size=300))
    b = a
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(b)))
        cut = draw(st.integers(0, min(len(b) - at, draw(st.sampled_from([3, 30, 90])))))
        put = draw(st.text(alphabet, max_size=draw(st.sampled_from([3, 30, 90]))))
        b = b[:at] + put + b[at + cut :]
    return (a, b) if draw(st.booleans()) else (b, a)


@given(pairs())
@settings(max_examples=400, deadline=None)
def test_the_difference_is_the_plain_comparisons(pair: tuple[str, str]) -> None:
    assert _difference(*pair) == ref_difference(*pair)
