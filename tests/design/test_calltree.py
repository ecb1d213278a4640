from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler import CallTreeBuilder, Expose, RenderRange, TreeOptions, render_call_tree
from assembler.design.calltree import LLMExchange, ToolUse
from assembler.design.calltree_scalars import field_lines
from assembler.design.calltree_yaml import tree_yaml

IO = TreeOptions()


def parsed(builder: CallTreeBuilder, options: TreeOptions = IO) -> list[dict[str, object]]:
    text = render_call_tree(builder.snapshot(), options, builder.current or "")
    result = yaml.safe_load(tree_yaml(text))
    assert isinstance(result, list)
    return result


def finished_subtree(b: CallTreeBuilder, io_size: int) -> None:
    b.enter("task", "x" * io_size)
    b.enter("step", "y" * io_size)
    b.tool(ToolUse("bash", "ls", "z" * io_size))
    b.llm(LLMExchange("q" * io_size, "a" * io_size))
    b.exit("step", "o" * io_size)
    b.exit("task", "\n".join(["r" * 40] * (io_size // 40 + 2)), key_output="short summary")


def tree_size(io_size: int, siblings: int) -> int:
    b = CallTreeBuilder()
    b.enter("root", "go")
    for _ in range(siblings):
        finished_subtree(b, io_size)
    b.enter("current", "now")
    return len(render_call_tree(b.snapshot(), IO, "current"))


def test_size_does_not_grow_with_io_of_finished_subtrees() -> None:
    small, large = tree_size(10, 1000), tree_size(5000, 1000)
    assert small == large
    assert yaml.safe_load(tree_yaml(render_call_tree(_thousand(), IO, "current")))


def _thousand() -> object:
    b = CallTreeBuilder()
    b.enter("root", "go")
    for _ in range(1000):
        finished_subtree(b, 2000)
    b.enter("current", "now")
    return b.snapshot()


def test_released_and_collapsed_nodes() -> None:
    b = CallTreeBuilder()
    b.enter("root", "the goal")
    finished_subtree(b, 5)
    b.enter("current", "multi\nline input")
    tree = parsed(b)
    root = tree[0]
    assert root == {
        "function": "root",
        "input": "the goal",
        "status": "running",
        "children": [
            {
                "function": "task",
                "output": "short summary",
                "children": [{"function": "step", "status": "done"}],
            },
            {"function": "current", "input": "multi\nline input", "status": "running"},
        ],
    }


def test_multiline_io_is_a_literal_block() -> None:
    assert field_lines("input", "one\ntwo", 2) == ["  input: |-", "    one", "    two"]
    assert field_lines("output", "one\ntwo\n", 0) == ["output: |", "  one", "  two"]
    assert field_lines("input", "single: line", 0) == ['input: "single: line"']


def test_plain_tools_and_llm_exchanges_are_collapsed_by_default() -> None:
    b = CallTreeBuilder()
    b.enter("root", None)
    b.tool(ToolUse("grep", "pattern"))
    b.llm(LLMExchange("question", "answer"))
    assert parsed(b) == [{"function": "root", "status": "running"}]


def test_expose_llm_and_full_keep_internals() -> None:
    b = CallTreeBuilder()
    b.enter("root", None)
    finished_subtree(b, 3)
    b.enter("current", None)
    opts = TreeOptions(expose=(("task", Expose.FULL),))
    task = parsed(b, opts)[0]["children"][0]  # type: ignore[index]
    assert task["input"] == "xxx" and task["status"] == "done"
    step = task["children"][0]
    assert step["input"] == "yyy" and step["output"] == "ooo"
    assert step["tools"] == [{"name": "bash", "input": "ls", "output": "zzz"}]
    assert step["llm"] == [{"input": "qqq", "output": "aaa"}]
    llm_only = parsed(b, TreeOptions(expose=(("task", Expose.LLM),)))[0]["children"][0]  # type: ignore[index]
    assert llm_only["input"] == "xxx" and "tools" not in llm_only


def test_hidden_call_leaves_no_node_but_its_children_stay() -> None:
    b = CallTreeBuilder()
    b.enter("root", None)
    b.enter("wrapper", None)
    b.enter("inner", None)
    opts = TreeOptions(expose=(("wrapper", Expose.HIDDEN),))
    assert parsed(b, opts) == [
        {
            "function": "root",
            "status": "running",
            "children": [{"function": "inner", "status": "running"}],
        }
    ]


def test_render_range_callers_and_subcalls() -> None:
    b = CallTreeBuilder()
    b.enter("root", None)
    for _ in range(5):
        finished_subtree(b, 1)
    b.enter("current", None)
    for _ in range(4):
        finished_subtree(b, 1)
    opts = TreeOptions(render_range=(("current", RenderRange(callers=2, subcalls=1)),))
    root = parsed(b, opts)[0]
    kids = root["children"]  # type: ignore[index]
    assert kids[0] == {"omitted_calls": 3}
    assert [k.get("function") for k in kids[1:]] == ["task", "task", "current"]
    inner = kids[-1]["children"]
    assert inner[0] == {"omitted_calls": 3} and len(inner) == 2
    walled = parsed(b, TreeOptions(default_range=RenderRange(callers=0)))[0]["children"]  # type: ignore[index]
    assert walled[0] == {"omitted_calls": 5}


def test_called_by_follows_the_dispatching_decision() -> None:
    b = CallTreeBuilder()
    b.enter("main", None)
    b.enter("decide", None)
    b.exit("decide", "go to work")
    b.enter("work", None, dispatched_by="decide")
    b.enter("detail", None)
    assert b.call_path() == ("main", "decide", "work", "detail")


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text(min_size=1))
def test_any_text_round_trips_through_yaml(value: str, name: str) -> None:
    b = CallTreeBuilder()
    b.enter(name, value)
    b.enter("child", None)
    b.exit("child", value, key_output=value)
    tree = parsed(b)
    assert tree[0]["function"] == name
    assert tree[0]["input"] == value
    assert tree[0]["children"][0]["output"] == value  # type: ignore[index]
