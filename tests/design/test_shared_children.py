"""A snapshot's shared children read exactly like the tuple they stand for."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from assembler.design.calltree import CallNode, SharedChildren, Status
from assembler.design.calltree_builder import CallTreeBuilder

NODES = [CallNode(i, f"f{i}", Status.DONE) for i in range(12)]


@given(
    st.integers(0, 8),
    st.integers(0, 4),
    st.integers(0, 4),
    st.one_of(st.none(), st.integers(-14, 14)),
    st.one_of(st.none(), st.integers(-14, 14)),
    st.sampled_from([None, 1, 2, -1]),
)
def test_shared_children_index_slice_and_iterate_like_a_tuple(
    n: int, extra: int, rest: int, start: int | None, stop: int | None, step: int | None
) -> None:
    head = NODES[: n + extra]  # the list may already hold more than this snapshot saw
    tail = tuple(NODES[8 : 8 + rest])
    shared = SharedChildren(list(head), n, tail)
    plain = tuple(head[:n]) + tail
    assert len(shared) == len(plain) and bool(shared) == bool(plain)
    assert list(shared) == list(plain) and list(reversed(shared)) == list(reversed(plain))
    assert shared[start:stop:step] == plain[start:stop:step]
    for i in range(-len(plain), len(plain)):
        assert shared[i] is plain[i]


def test_a_snapshot_keeps_the_children_it_saw_while_the_call_goes_on() -> None:
    b = CallTreeBuilder()
    b.enter("root", "go")
    for i in range(3):
        b.enter("child", str(i))
        b.exit("child", f"out {i}")
    first = b.snapshot()
    for i in range(3, 6):
        b.enter("child", str(i))
        b.exit("child", f"out {i}")
    second = b.snapshot()
    assert [c.input for c in first.children] == ["0", "1", "2"]
    assert [c.input for c in second.children] == ["0", "1", "2", "3", "4", "5"]
    assert first.children[0] is second.children[0]  # shared, not copied
