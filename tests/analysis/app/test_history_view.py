"""History folding by turn, and the line diff of a block against the previous step."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.analysis.app.history_view import Fold, filter_rows, fold_history, turn_numbers
from assembler.analysis.app.text_diff import DiffLine, counts, line_diff
from assembler.analysis.engine.results import BlockAnalysis


def _b(name: str, cache: str = "read", change: str = "unchanged", section: str = "messages", tokens: int = 10) -> BlockAnalysis:  # fmt: skip
    return BlockAnalysis(name, "L1", section, tokens, cache, change, None, name, True)


def _history(turns: int) -> tuple[list[BlockAnalysis], list[str]]:
    blocks = [_b("unrecorded prefix", section="system", tokens=1000)]
    roles = ["user"]
    i = 0
    for _ in range(turns):
        for kind, role in (("text", "user"), ("tool_use Bash", "assistant"), ("tool_result Bash", "user"), ("text", "assistant")):  # fmt: skip
            blocks.append(_b(f"messages[{i}] {kind}"))
            roles.append(role)
            i += 1
    return blocks, roles


def test_a_turn_starts_at_a_user_text_not_at_a_tool_result() -> None:
    blocks, roles = _history(3)
    assert turn_numbers(blocks, roles) == [0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]


def test_unchanged_turns_fold_into_one_row_and_the_changed_turn_stays_open() -> None:
    blocks, roles = _history(72)
    # the last turn is new and written
    for k in range(len(blocks) - 4, len(blocks)):
        b = blocks[k]
        blocks[k] = _b(b.name, cache="write", change="new")
    rows = fold_history(blocks, roles)
    assert rows[0].name == "unrecorded prefix"
    fold = rows[1]
    assert isinstance(fold, Fold)
    assert fold.label == "turns 1–71 · read · 2,840 tokens"
    assert fold.blocks == 71 * 4
    assert [r.name for r in rows[2:]] == [b.name for b in blocks[-4:]]


def test_a_change_in_the_middle_splits_the_fold() -> None:
    blocks, roles = _history(20)
    k = 1 + 4 * 9  # first block of turn 10
    blocks[k] = _b(blocks[k].name, change="changed", cache="write")
    rows = fold_history(blocks, roles)
    labels = [r.label if isinstance(r, Fold) else r.name for r in rows]
    assert labels[1] == "turns 1–9 · read · 360 tokens"
    assert labels[2:6] == [b.name for b in blocks[k : k + 4]]
    assert labels[6] == "turns 11–20 · read · 400 tokens"


def test_short_histories_and_assembled_steps_are_not_folded() -> None:
    blocks, roles = _history(2)
    assert fold_history(blocks, roles) == blocks
    many, _ = _history(30)
    assert fold_history(many, None) == many


def test_filter_by_cache_state_keeps_folds_of_that_state() -> None:
    blocks, roles = _history(20)
    blocks[-1] = _b(blocks[-1].name, cache="uncached", change="new")
    rows = fold_history(blocks, roles)
    assert [r.cache for r in filter_rows(rows, ["uncached"])] == ["uncached"]
    assert all(r.cache == "read" for r in filter_rows(rows, ["read"]))


def test_line_diff_marks_added_and_removed_lines_with_context() -> None:
    old = "\n".join(f"line {i}" for i in range(20))
    new = old.replace("line 10", "line ten") + "\nline 20"
    d = line_diff(old, new)
    assert DiffLine("-", "line 10") in d and DiffLine("+", "line ten") in d
    assert DiffLine("+", "line 20") in d
    assert counts(d) == (2, 1)
    assert DiffLine(" ", "line 0") not in d  # far from any change: elided
    assert line_diff(old, old) == []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=30),
    st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=30),
    st.lists(st.sampled_from(["a", "b", "x"]), max_size=20),
)
def test_a_full_context_diff_gives_back_both_texts(
    head: list[str], tail: list[str], middle: list[str]
) -> None:
    old = "\n".join(head + middle + tail)
    new = "\n".join(head + middle[::-1] + ["y"] + tail)
    lines = line_diff(old, new, context=10**6)
    assert [x.text for x in lines if x.kind in " -"] == old.splitlines()
    assert [x.text for x in lines if x.kind in " +"] == new.splitlines()
