"""A recorded request's history grouped by turn, with turns nothing happened to folded into one row.

A 150-message history shown block by block is a wall of identical rows; what a
reader looks for is what changed. A turn starts at a user message that is not a
tool result. A run of whole turns whose blocks are all ``unchanged`` and share
one cache state becomes one :class:`Fold` (``turns 1–71 · read · 48,210 tokens``);
every block of a turn with a new or changed block stays open.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assembler.analysis.engine import BlockAnalysis

#: Histories with fewer message blocks than this are shown whole.
MIN_FOLD_BLOCKS = 12


@dataclass(frozen=True)
class Fold:
    """Consecutive unchanged turns with one cache state, drawn as one row."""

    first_turn: int
    last_turn: int
    cache: str
    tokens: int
    blocks: int
    layer: str
    section: str = "messages"
    change: str = "unchanged"
    breakpoint: int | None = None
    text: str = ""
    marker_ttl: str | None = None  # as a block's (a fold holds no marker of its own lifetime)

    @property
    def name(self) -> str:
        turns = (
            f"turn {self.first_turn}"
            if self.first_turn == self.last_turn
            else f"turns {self.first_turn}–{self.last_turn}"
        )
        return f"{turns} · {self.blocks:,} blocks"

    @property
    def label(self) -> str:
        """``turns 1–71 · read · 48,210 tokens``."""
        turns = (
            f"turn {self.first_turn}"
            if self.first_turn == self.last_turn
            else f"turns {self.first_turn}–{self.last_turn}"
        )
        return f"{turns} · {self.cache} · {self.tokens:,} tokens"


Row = BlockAnalysis | Fold


def turn_numbers(blocks: Sequence[BlockAnalysis], roles: Sequence[str | None]) -> list[int]:
    """The turn of each block (0 outside the history); a turn starts at a user text block."""
    turns: list[int] = []
    turn = 0
    for b, role in zip(blocks, roles, strict=True):
        if b.section != "messages":
            turns.append(0)
            continue
        # imported block names read "messages[3] tool_result read_file": the kind is the second word
        words = b.name.split()
        kind = words[1] if len(words) > 1 else ""
        if (role == "user" and not kind.startswith("tool_result")) or turn == 0:
            turn += 1
        turns.append(turn)
    return turns


def fold_history(
    blocks: Sequence[BlockAnalysis],
    roles: Sequence[str | None] | None,
    min_blocks: int = MIN_FOLD_BLOCKS,
) -> list[Row]:
    """The rows to draw: blocks, with runs of unchanged same-state turns folded."""
    if roles is None or len(roles) != len(blocks):
        return list(blocks)
    messages = sum(1 for b in blocks if b.section == "messages")
    if messages < min_blocks:
        return list(blocks)
    turns = turn_numbers(blocks, roles)
    by_turn: dict[int, list[BlockAnalysis]] = {}
    for b, t in zip(blocks, turns, strict=True):
        if t:
            by_turn.setdefault(t, []).append(b)

    def quiet(t: int) -> str | None:
        """The turn's one cache state if nothing in it changed, else None."""
        members = by_turn[t]
        states = {b.cache for b in members}
        if len(states) == 1 and all(b.change == "unchanged" and not b.breakpoint for b in members):
            return states.pop()
        return None

    rows: list[Row] = []
    run: list[int] = []

    def flush() -> None:
        if not run:
            return
        members = [b for t in run for b in by_turn[t]]
        if len(members) == 1:
            rows.append(members[0])
        else:
            rows.append(
                Fold(
                    run[0],
                    run[-1],
                    members[0].cache,
                    sum(b.tokens for b in members),
                    len(members),
                    members[0].layer,
                )
            )
        run.clear()

    done: set[int] = set()
    for b, t in zip(blocks, turns, strict=True):
        if t == 0:
            flush()
            rows.append(b)
            continue
        if t in done:
            continue
        done.add(t)
        state = quiet(t)
        if state is not None and (not run or quiet(run[-1]) == state):
            run.append(t)
            continue
        flush()
        if state is not None:
            run.append(t)
        else:
            rows.extend(by_turn[t])
    flush()
    return rows


def filter_rows(rows: Sequence[Row], states: Sequence[str]) -> list[Row]:
    """Only the rows in one of ``states`` (read / write / uncached)."""
    keep = set(states)
    return [r for r in rows if r.cache in keep]
