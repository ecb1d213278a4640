"""A resolver hands each request the very blocks ``RecordedRequest.blocks`` reads along its
chain of owners (the same objects: the stages after tell an unchanged block by identity),
whatever requests it resolved before: the one kept from, a sibling that kept from the
same request, one on another branch, or none.
"""

from __future__ import annotations

import operator

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.sessions.model import RecordedBlock, RecordedRequest, RequestResolver


@st.composite
def forests(draw: st.DrawFn) -> list[RecordedRequest]:
    """Requests made in order, each keeping part of any earlier one (or none), its kept
    blocks marked at random, for five minutes or an hour."""
    made: list[RecordedRequest] = []
    for n in range(draw(st.integers(1, 10))):
        tail = tuple(
            RecordedBlock(
                section=draw(st.sampled_from(["tools", "system", "messages"])),
                name=f"r{n}b{i}",
                text=draw(st.sampled_from("ab")),
                breakpoint=draw(st.booleans()),
                ttl=draw(st.sampled_from([None, None, "1h"])),
            )
            for i in range(draw(st.integers(0, 4)))
        )
        previous = draw(st.sampled_from(made)) if made and draw(st.integers(0, 4)) else None
        # at most the previous request's length, as the loader checks
        keep = draw(st.integers(0, len(previous))) if previous is not None else 0
        if keep == 0 and not tail:
            tail = (RecordedBlock("messages", f"r{n}"),)
        marks = draw(st.frozensets(st.integers(0, keep - 1), max_size=3)) if keep else frozenset()
        hours = draw(st.frozensets(st.sampled_from(sorted(marks)), max_size=2)) if marks else frozenset()  # fmt: skip
        made.append(RecordedRequest(tail, previous, keep, marks - hours, hours))
    return made


@settings(max_examples=200, deadline=None)
@given(forests(), st.data())
def test_the_resolver_reads_what_the_chain_reads(made: list[RecordedRequest], data: st.DataObject) -> None:  # fmt: skip
    order = data.draw(st.lists(st.sampled_from(made), max_size=12) | st.just(made))
    resolver = RequestResolver()
    for request in order:
        got, want = resolver.blocks(request), request.blocks()
        assert len(got) == len(want) and all(map(operator.is_, got, want)), (got, want)


def test_a_sibling_resolved_before_is_not_taken_for_the_request_kept_from() -> None:
    """Both keep from the same request; the first keeps 2 blocks and adds its own, the second
    keeps 5: its blocks 3 to 5 are the first request's, not the sibling's."""
    base = RecordedRequest(tuple(RecordedBlock("messages", f"m{i}") for i in range(8)))
    sibling = RecordedRequest((RecordedBlock("messages", "s0"),) * 4, base, 2)
    later = RecordedRequest((RecordedBlock("messages", "x"),), base, 5)
    resolver = RequestResolver()
    resolver.blocks(base)
    resolver.blocks(sibling)
    assert [b.name for b in resolver.blocks(later)] == ["m0", "m1", "m2", "m3", "m4", "x"]
