"""render_range "compress only when over budget" (§5): a token budget for the call tree."""

from __future__ import annotations

import json

import pytest

from assembler.analysis.engine.layouts import LayoutError, builtin_layout, parse_layout
from assembler.cache.tokenizers import counter
from assembler.design.calltree import TreeOptions
from assembler.design.calltree_builder import CallTreeBuilder
from assembler.design.calltree_yaml import render_call_tree, tree_yaml
from assembler.sessions.generator import generate_session
from assembler.sessions.loader import parse_session
from assembler.sessions.replay import iter_steps, tree_options


def test_a_5000_step_session_stays_under_the_budget() -> None:
    layout = builtin_layout("tree-budget")
    assert layout.tree_budget == 4000
    session = parse_session(json.dumps(generate_session(5000, 1)), "generated.json")
    options = layout.tree_options(tree_options(session))
    plain = tree_options(session)
    count = counter("o200k_base").count
    largest, largest_plain, folded_steps = "", 0, 0
    for step in iter_steps(session, options):
        frame = step.context.frame
        assert frame is not None and frame.function is not None
        text = render_call_tree(frame.tree, options, frame.function)
        if len(text) > len(largest):
            largest = text
        if "omitted_calls" in text:
            folded_steps += 1
        if step.number % 500 == 0:
            largest_plain = max(
                largest_plain, len(render_call_tree(frame.tree, plain, frame.function))
            )
    assert count(largest) <= 4000
    assert folded_steps > 1000  # the budget was needed, not merely respected
    assert largest_plain > 5 * len(largest)  # without it the tree grows with the step count


def long_loop(n: int) -> CallTreeBuilder:
    b = CallTreeBuilder()
    b.enter("main", "the goal")
    for i in range(n):
        b.enter("task", f"input {i}")
        b.enter("sub", "x")
        b.exit("sub", "y")
        b.exit("task", f"result {i}")
    b.enter("current", "now")
    b.enter("deeper", "still now")
    return b


def test_under_budget_nothing_changes() -> None:
    b = long_loop(3)
    plain = render_call_tree(b.snapshot(), TreeOptions(), "deeper")
    assert render_call_tree(b.snapshot(), TreeOptions(budget=10_000), "deeper") == plain


def test_structure_of_finished_subtrees_is_folded_first() -> None:
    b = long_loop(6)
    plain = render_call_tree(b.snapshot(), TreeOptions(), "deeper")
    folded = render_call_tree(b.snapshot(), TreeOptions(budget=len(plain) // 3 - 5), "deeper")
    assert "{function: sub, status: done}" in plain and "sub" not in folded
    assert "omitted_calls" not in folded  # the key outputs still fit
    assert folded.count("function: task") == 6


def test_then_the_oldest_finished_calls_go_and_the_running_path_stays() -> None:
    b = long_loop(200)
    text = render_call_tree(b.snapshot(), TreeOptions(budget=300), "deeper")
    tree = __import__("yaml").safe_load(tree_yaml(text))
    main = tree[0]
    kids = main["children"]
    assert list(kids[0]) == ["omitted_calls"] and kids[0]["omitted_calls"] > 100
    assert kids[-2]["output"] == "result 199"  # newest kept
    assert kids[-1]["function"] == "current" and kids[-1]["status"] == "running"
    assert kids[-1]["children"][0]["function"] == "deeper"
    assert len(text) // 3 <= 300


def test_a_layout_sets_the_budget_and_rejects_a_bad_one() -> None:
    layout = parse_layout({"tree_budget": 1200}, "b.yaml")
    assert layout.tree_options(TreeOptions()).budget == 1200
    with pytest.raises(LayoutError, match="tree_budget: expected a positive number of tokens"):
        parse_layout({"tree_budget": 0}, "b.yaml")
