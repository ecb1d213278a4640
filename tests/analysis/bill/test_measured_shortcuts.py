"""The comparison with the bill's shortcuts give what a plain walk over every block gives.

``_links`` takes the prefix hashes of the leading blocks that are the very records of the
step before from that step; ``read_end`` finds the block a read ended in by bisection. Each
is compared here with the plain walk it replaced, on random steps that share blocks as
objects, copy them, change their texts and tokens (zero-token blocks included: ties).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.bill.measured import _links
from assembler.analysis.bill.measured_causes import read_end


@dataclass(frozen=True)
class Block:
    section: str
    text: str
    tokens: int


@dataclass(frozen=True)
class Step:
    blocks: tuple[Block, ...]
    provider: str = "anthropic"


def ref_links(steps: Sequence[Step]) -> list[tuple[int | None, int, int]]:
    """The walk before the shortcut: every block of every step hashed again."""
    latest: dict[int, int] = {}
    out: list[tuple[int | None, int, int]] = []
    for i, s in enumerate(steps):
        h = 0
        hashes: list[int] = []
        best: int | None = None
        shared = 0
        for b in s.blocks:
            h = hash((h, b.section, b.text))
            hashes.append(h)
            j = latest.get(h)
            if j is None:
                break
            best, shared = j, len(hashes)
        for b in s.blocks[len(hashes) :]:
            h = hash((h, b.section, b.text))
            hashes.append(h)
        out.append((best, shared, sum(b.tokens for b in s.blocks[:shared])))
        for hh in hashes:
            latest[hh] = i
    return out


def ref_read_end(step: Step, read: float) -> int:
    if read <= 0 or not step.blocks:
        return -1
    running = 0
    ends: list[int] = []
    for b in step.blocks:
        running += b.tokens
        ends.append(running)
    if step.provider == "anthropic":
        return min(range(len(ends)), key=lambda i: (abs(ends[i] - read), i))
    return next((i for i, end in enumerate(ends) if end >= read), len(ends) - 1)


blocks = st.builds(
    Block,
    st.sampled_from(["tools", "system", "messages"]),
    st.sampled_from(["a", "b", "c"]),
    st.integers(0, 5),
)


@st.composite
def step_sequences(draw: st.DrawFn) -> list[Step]:
    steps: list[Step] = []
    before: tuple[Block, ...] = ()
    for _ in range(draw(st.integers(1, 8))):
        if steps and draw(st.booleans()):  # an earlier step's blocks, not only the last's
            before = draw(st.sampled_from(steps)).blocks
        keep = draw(st.integers(0, len(before)))
        kept = [
            b if draw(st.integers(0, 3)) else Block(b.section, b.text, b.tokens)  # a copy
            for b in before[:keep]
        ]
        step = Step((*kept, *draw(st.lists(blocks, max_size=4))))
        steps.append(step)
        before = step.blocks
    return steps


@given(step_sequences())
@settings(max_examples=300, deadline=None)
def test_links_match_a_walk_over_every_block(steps: list[Step]) -> None:
    index = {id(s): k for k, s in enumerate(steps)}
    got = [
        (
            None if link.prev is None else index[id(link.prev)],
            link.shared_blocks,
            link.shared_tokens,
        )
        for link, _ in _links(tuple(steps))  # type: ignore[arg-type]
    ]
    assert got == ref_links(steps)


def test_a_prefix_held_by_a_run_of_steps_links_to_the_runs_last() -> None:
    """Steps 1 and 2 keep step 0's blocks as the very objects; step 3 sends copies: the
    latest step with that prefix is 2, though only step 0 hashed it."""
    a, b = Block("system", "a", 1), Block("messages", "b", 2)
    c = Block("messages", "c", 3)
    steps = [Step((a, b)), Step((a, b, c)), Step((a, b, c))]
    steps.append(Step(tuple(Block(x.section, x.text, x.tokens) for x in (a, b, c))))
    index = {id(s): k for k, s in enumerate(steps)}  # by identity: steps 1 and 2 are equal
    got = [
        (None if link.prev is None else index[id(link.prev)], link.shared_blocks)
        for link, _ in _links(tuple(steps))  # type: ignore[arg-type]
    ]
    assert got == [(None, 0), (0, 2), (1, 3), (2, 3)]
    assert ref_links(steps)[3] == (2, 3, 6)


@given(
    st.lists(blocks, max_size=8),
    st.one_of(st.integers(-2, 45), st.floats(-1, 45, allow_nan=False)),
    st.sampled_from(["anthropic", "openai"]),
)
@settings(max_examples=300, deadline=None)
def test_read_end_matches_a_walk_over_every_block(
    found: list[Block], read: float, provider: str
) -> None:
    step = Step(tuple(found), provider)
    assert read_end(step, read) == ref_read_end(step, read)  # type: ignore[arg-type]
    ends = list(accumulate(b.tokens for b in found))  # as the comparison hands them over
    assert read_end(step, read, ends) == ref_read_end(step, read)  # type: ignore[arg-type]
