"""The builder's count of running calls inside each call, and the hidden-name set of
the tree options: what the innermost-call lookup and the renderer read."""

from __future__ import annotations

import pytest

from assembler import CallTreeBuilder, Expose, TreeOptions
from assembler.design.calltree import CallTreeError, LLMExchange, Outcome


def test_a_failure_unwinding_calls_inside_leaves_its_parent_innermost() -> None:
    b = CallTreeBuilder()
    b.enter("main", "go")
    b.enter("branch", "b")
    b.enter("leaf", "l")
    b.exit("branch", None, outcome=Outcome.FAILED)
    assert b.current == "main"
    b.llm(LLMExchange("q", "a"))  # lands in main, the one innermost call
    b.enter("other", "o")
    assert b.current == "other"
    b.exit("other", "done")
    b.exit("main", "done")  # nothing runs inside main any more
    assert b.current is None


def test_an_exit_with_calls_inside_still_running_is_refused() -> None:
    b = CallTreeBuilder()
    b.enter("main", "go", ref="m")
    b.enter("inner", "i", ref="i")
    with pytest.raises(CallTreeError, match="while calls inside it still run"):
        b.exit("main", "done", ref="m")
    b.exit("inner", "x", ref="i")
    b.exit("main", "done", ref="m")
    assert b.current is None


def test_parallel_children_are_innermost_until_each_ends() -> None:
    b = CallTreeBuilder()
    b.enter("main", "go", ref="m")
    b.enter("a", "1", parent="m", ref="a")
    b.enter("b", "2", parent="m", ref="b")
    with pytest.raises(CallTreeError, match="several calls are running"):
        b.llm(LLMExchange("q", "a"))
    b.exit("a", "done", ref="a")
    assert b.current == "b"  # the one left running inside main
    b.exit("b", "done", ref="b")
    assert b.current == "main"


def test_hidden_names_follow_the_first_entry_for_a_name() -> None:
    options = TreeOptions(expose=(("x", Expose.HIDDEN), ("x", Expose.IO), ("y", Expose.LLM)))
    assert options.hidden_names == frozenset({"x"})
    assert options.hidden("x") and not options.hidden("y")
    assert TreeOptions().hidden_names == frozenset()
    # hiding by default: the set cannot say it; the renderer asks per name
    assert TreeOptions(default_expose=Expose.HIDDEN).hidden_names is None
