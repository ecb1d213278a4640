"""The shared history: a reader's views never change under a request once handed out, and
``SharedWriter`` writes exactly what ``compact_requests`` writes from the full block lists,
for any sequence of requests (heads that change, histories that grow, branch, are rewritten
or shrink, markers anywhere)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.sessions.importers.hidden import Hidden
from assembler.sessions.importers.history import Item, compact_requests
from assembler.sessions.importers.shared_history import (
    History,
    HistoryList,
    SharedWriter,
    common_items,
    insert_before,
)

FIXTURES = Path(__file__).parent / "fixtures"
POOL = [
    Item("user", "text", "hello"),
    Item("assistant", "tool_use", '{"a": 1}', "grep", use_id="t1"),
    Item("user", "tool_result", "3 matches", "grep", use_id="t1"),
    Item("user", "tool_result", "3 matches", "grep", use_id="t2"),  # its block shows no id
    Item("assistant", "thinking", "", hidden=Hidden(40, sized=True)),
    Item("assistant", "text", "done"),
]
PREFIX = {"section": "system", "name": "unrecorded prefix", "text": "[s]", "tokens": 9}
HEADS = [
    [{**PREFIX, "breakpoint": True}],
    [{**PREFIX, "breakpoint": True, "ttl": "1h"}],
    [
        {"section": "system", "name": "base", "text": "b", "tokens": 3},
        {"section": "tools", "name": "tools", "text": "[t]", "tokens": 5, "warm": True},
    ],
    [],
]


@st.composite
def requests(draw: st.DrawFn) -> list[tuple[list[dict[str, Any]], list[Item], int | None]]:
    base = HistoryList()
    out: list[tuple[list[dict[str, Any]], list[Item], int | None]] = []
    for _ in range(draw(st.integers(1, 8))):
        action = draw(st.sampled_from(["grow", "grow", "grow", "insert", "rewrite", "same"]))
        if action == "grow":
            for item in draw(st.lists(st.sampled_from(POOL), max_size=3)):
                base.append(item)
        elif action == "insert" and base:
            base.insert(draw(st.integers(0, len(base))), draw(st.sampled_from(POOL)))
        elif action == "rewrite":
            base = HistoryList(draw(st.lists(st.sampled_from(POOL), max_size=6)))
        head = [dict(b) for b in draw(st.sampled_from(HEADS))]
        items = base.view()
        total = len(head) + len(items)
        marker = draw(st.one_of(st.none(), st.integers(0, total - 1))) if total else None
        out.append((head, items, marker))
    return out


def _full(head: list[dict[str, Any]], items: History, marker: int | None) -> dict[str, Any]:
    blocks = [dict(b) for b in head] + [item.block(k) for k, item in enumerate(items)]
    if marker is not None:
        blocks[marker]["breakpoint"] = True
    return {"type": "llm", "request": {"blocks": blocks}}


@settings(max_examples=300, deadline=None)
@given(requests())
def test_the_writer_writes_what_compaction_of_the_full_lists_writes(
    sequence: list[tuple[list[dict[str, Any]], History, int | None]],
) -> None:
    # full lists built now: the views must still hold what they held when handed out
    expected = compact_requests([_full(*r) for r in sequence])
    writer = SharedWriter()
    written = [{"type": "llm", "request": writer.request(*r)} for r in sequence]
    assert written == expected


def test_a_view_keeps_its_items_when_its_list_changes_inside_it() -> None:
    a, b, c = POOL[0], POOL[1], POOL[5]
    items = HistoryList([a, b])
    first = items.view()
    items.append(c)
    second = items.view()
    items.insert(1, c)  # inside both views: each keeps what it held
    assert list(first) == [a, b] and list(second) == [a, b, c]
    assert items == [a, c, b, c]
    later = items.view()
    items.append(a)  # after every view: nothing copied
    assert list(later) == [a, c, b, c] and later.shares(items)


def test_a_view_nobody_holds_is_gone_and_an_insertion_passes_over_it() -> None:
    a, b, c = POOL[0], POOL[1], POOL[5]
    items = HistoryList([a, b])
    kept = items.view()
    items.append(c)
    dropped = weakref.ref(items.view())
    assert dropped() is None  # the list holds its views weakly: no cycle with them
    items.insert(1, c)
    assert list(kept) == [a, b] and items == [a, c, b, c]


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("claude-code", FIXTURES / "claude_code" / "session.jsonl"),
        ("codex", FIXTURES / "codex" / "rollout-2026-03-12T14-00-00-019a9776.jsonl"),
    ],
)
def test_an_import_leaves_no_cycle_that_holds_its_items(kind: str, path: Path) -> None:
    """Freed when the import returns, without the cyclic collector: a cycle between a list
    and its views once kept every transcript's items until a full collection, and a worker
    of ``usage`` grew from 170 to 350 MB over 250 sessions."""
    from assembler.analysis.engine import import_file

    def ours() -> list[object]:
        return [o for o in gc.get_objects() if isinstance(o, Item | History | HistoryList)]

    gc.collect()
    before = {id(o) for o in ours()}  # this module's own items
    gc.disable()
    try:
        import_file(kind, path)
        left = [o for o in ours() if id(o) not in before]
    finally:
        gc.enable()
    assert not left, left[:3]


def test_common_items_at_once_for_views_of_one_list_and_by_comparison_else() -> None:
    items = HistoryList(POOL[:4])
    short, long = History(items, 2), History(items, 4)
    assert common_items(short, long) == 2
    assert common_items(long, [*POOL[:3], POOL[5]]) == 3
    assert common_items([], long) == 0


def test_items_placed_before_others_lengthen_each_view_by_what_it_holds() -> None:
    items = HistoryList(POOL[:4])
    views = [History(items, n) for n in range(5)]
    extra = Item("user", "unrecorded", "[x]")
    out = insert_before([*views, list(POOL[:2])], {id(POOL[1]): extra, id(POOL[3]): extra})
    assert [list(v) for v in out[:5]] == [
        [],
        [POOL[0]],
        [POOL[0], extra, POOL[1]],
        [POOL[0], extra, POOL[1], POOL[2]],
        [POOL[0], extra, POOL[1], POOL[2], extra, POOL[3]],
    ]
    assert out[5] == [POOL[0], extra, POOL[1]]
