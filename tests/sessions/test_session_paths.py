"""Paths off the active path (reading 10), parallel children, top-level calls (Appendix)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from assembler import SessionAssembler
from assembler.design.calltree import Expose, Outcome
from assembler.design.calltree_view import off_path_calls, tree_rows
from assembler.design.calltree_yaml import tree_yaml
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import FunctionSpec, SessionError
from assembler.sessions.replay import TOP_LEVEL, Step, find_step, function_specs, replay

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "review_agent_paths.yaml"
HEAD = """format: context-session/1
session: {id: s, agent: {name: a}, provider: anthropic, model: claude-sonnet-4-5}
events:
"""


@pytest.fixture(scope="module")
def steps() -> list[Step]:
    return replay(load_session(SAMPLE))


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    assembler = SessionAssembler(load_session(SAMPLE))
    return {
        s.label: assembler.assemble(s).wire.text() for s in assembler.steps() if s.label is not None
    }


def tree_of(text: str) -> list[dict[str, object]]:
    block = re.search(r"<call_tree>\n.*?\n</call_tree>", text, re.S)
    assert block is not None
    parsed = yaml.safe_load(tree_yaml(block.group()))
    assert isinstance(parsed, list)
    return parsed


def names(nodes: list[dict[str, object]]) -> list[str]:
    return [str(n["function"]) for n in nodes]


def test_parallel_children_are_siblings_in_start_order(texts: dict[str, str]) -> None:
    # scan-b finished first, scan-a started first: start order wins
    review = tree_of(texts["after-abandon"])[0]
    children = review["children"]
    assert isinstance(children, list)
    assert [c.get("output") for c in children[:2]] == [
        "timezone bug on line 14",
        "missing test: late-evening order",
    ]


def test_a_parallel_sibling_off_the_frame_path_shows_only_that_it_runs(
    texts: dict[str, str], steps: list[Step]
) -> None:
    children = tree_of(texts["parallel-b"])[0]["children"]
    assert children == [
        {"function": "scan_file", "input": "reports/daily.py", "status": "running"},
        {"function": "scan_file", "input": "tests/test_daily.py", "status": "running"},
    ]
    assert find_step(steps, "parallel-b").call_path == ("review", "scan_file")


def test_a_failed_attempt_leaves_the_tree_and_the_path_but_not_the_recording(
    texts: dict[str, str], steps: list[Step]
) -> None:
    children = tree_of(texts["retry"])[0]["children"]
    assert isinstance(children, list)
    assert names(children) == ["scan_file", "scan_file", "run_linter"]  # the retry only
    assert children[-1]["status"] == "running"
    retry = find_step(steps, "retry")
    assert retry.call_path == ("review", "run_linter")
    failed = off_path_calls(retry.tree)
    assert [(r.function, r.outcome, r.error) for r in failed] == [
        ("run_linter", Outcome.FAILED, "the linter timed out after 60 s")
    ]
    rows = tree_rows(retry.tree)
    assert [r.function for r in rows if r.struck] == ["run_linter"]
    running = next(r for r in rows if r.function == "run_linter" and not r.struck)
    assert running.retry_of == failed[0].call_id


def test_the_failed_attempt_was_on_the_path_while_it_ran(steps: list[Step]) -> None:
    attempt = steps[3]  # the llm call inside the first run_linter
    assert attempt.function == "run_linter" and attempt.call_path == ("review", "run_linter")
    assert not off_path_calls(attempt.tree)


def test_an_abandoned_branch_leaves_the_tree(texts: dict[str, str], steps: list[Step]) -> None:
    assert "draft_fix" not in texts["after-abandon"].split("<situation>")[0]
    rows = off_path_calls(find_step(steps, "after-abandon").tree)
    assert [(r.function, r.outcome) for r in rows] == [
        ("run_linter", Outcome.FAILED),
        ("draft_fix", Outcome.ABANDONED),
    ]


def test_top_level_calls_have_no_situation_and_see_the_whole_tree(
    texts: dict[str, str], steps: list[Step]
) -> None:
    first, last = find_step(steps, "top-level-ask"), find_step(steps, "top-level-answer")
    assert first.function == last.function == TOP_LEVEL
    assert first.call_path == () and first.depth == 0 and first.top_level
    assert "<call_tree>" not in texts["top-level-ask"]  # nothing has been called yet
    assert "<situation>" not in texts["top-level-answer"]
    tree = tree_of(texts["top-level-answer"])
    assert names(tree) == ["review"]
    assert tree[0]["output"] == "one bug, one missing test, one lint finding"
    kids = tree[0]["children"]
    assert isinstance(kids, list)
    assert [k["function"] for k in kids] == ["scan_file", "scan_file", "run_linter", "write_report"]


def events(*lines: str) -> str:
    return HEAD + "".join(f"  - {line}\n" for line in lines)


def test_a_failure_unwinds_the_calls_running_inside_it() -> None:
    session = parse_session(
        events(
            '{type: enter, at: "2026-01-01T00:00:00Z", function: main}',
            '{type: enter, at: "2026-01-01T00:00:01Z", function: branch}',
            '{type: enter, at: "2026-01-01T00:00:02Z", function: leaf}',
            '{type: llm, at: "2026-01-01T00:00:03Z"}',
            '{type: exit, at: "2026-01-01T00:00:04Z", function: branch, outcome: abandoned}',
            '{type: enter, at: "2026-01-01T00:00:05Z", function: other}',
            '{type: llm, at: "2026-01-01T00:00:06Z"}',
        ),
        "unwind.yaml",
    )
    steps = replay(session)
    assert steps[1].call_path == ("main", "other")
    rows = tree_rows(steps[1].tree)
    assert [(r.function, r.why_unseen) for r in rows] == [
        ("main", ""),
        ("branch", "abandoned"),
        ("leaf", "inside an abandoned call"),
        ("other", ""),
    ]
    leaf = rows[2]
    assert leaf.outcome is Outcome.ABANDONED and leaf.struck


def test_dispatched_by_skips_a_failed_decision() -> None:
    session = parse_session(
        events(
            '{type: enter, at: "2026-01-01T00:00:00Z", function: main}',
            '{type: enter, at: "2026-01-01T00:00:01Z", function: _decide}',
            '{type: exit, at: "2026-01-01T00:00:02Z", function: _decide, output: a}',
            '{type: enter, at: "2026-01-01T00:00:03Z", function: _decide}',
            '{type: exit, at: "2026-01-01T00:00:04Z", function: _decide, outcome: failed}',
            '{type: enter, at: "2026-01-01T00:00:05Z", function: act, dispatched_by: _decide}',
            '{type: llm, at: "2026-01-01T00:00:06Z"}',
        ),
        "decide.yaml",
    )
    step = replay(session)[0]
    assert step.call_path == ("main", "_decide", "act")
    ok = [r for r in tree_rows(step.tree) if r.function == "_decide" and not r.struck]
    assert len(ok) == 1


def test_a_hidden_call_leaves_the_tree_and_the_call_path() -> None:
    session = parse_session(
        HEAD.replace(
            "model: claude-sonnet-4-5}",
            "model: claude-sonnet-4-5, functions: {wrapper: {expose: hidden}}}",
        )
        + "".join(
            f"  - {line}\n"
            for line in (
                '{type: enter, at: "2026-01-01T00:00:00Z", function: main}',
                '{type: enter, at: "2026-01-01T00:00:01Z", function: wrapper}',
                '{type: enter, at: "2026-01-01T00:00:02Z", function: work}',
                '{type: llm, at: "2026-01-01T00:00:03Z"}',
            )
        ),
        "hidden.yaml",
    )
    assembler = SessionAssembler(session)
    step = next(iter(assembler.steps()))
    assert step.call_path == ("main", "work")
    text = assembler.assemble(step).wire.text()
    assert "wrapper" not in text
    assert "Call path: main → work" in text
    assert [r.why_unseen for r in tree_rows(step.tree, step.context.frame.options)] == [  # type: ignore[union-attr]
        "",
        "hidden",
        "",
    ]


def test_an_event_in_an_ambiguous_call_names_the_choices() -> None:
    text = events(
        '{type: enter, at: "2026-01-01T00:00:00Z", function: main, id: m}',
        '{type: enter, at: "2026-01-01T00:00:01Z", function: a, id: x, parent: m}',
        '{type: enter, at: "2026-01-01T00:00:01Z", function: b, id: y, parent: m}',
        '{type: tool, at: "2026-01-01T00:00:02Z", name: bash}',
    )
    with pytest.raises(SessionError, match=r"several calls are running \(x, y\); tool.call"):
        replay(parse_session(text, "amb.yaml"))


def test_attachments_are_read_counted_and_shown() -> None:
    session = parse_session(
        events(
            '{type: llm, at: "2026-01-01T00:00:00Z", input: "Review it.", attachments: ['
            '{name: notes.md, media_type: text/markdown, text: "Focus on timezones."},'
            " {name: shot.png, media_type: image/png, tokens: 1150}]}",
        ),
        "attach.yaml",
    )
    assembler = SessionAssembler(session)
    step = next(iter(assembler.steps()))
    record = assembler.assemble(step).assembly.record("user_input")
    assert record.text is not None
    assert "Focus on timezones." in record.text and 'tokens="1150"' in record.text
    a = __import__("assembler").analyze(session)
    user = next(b for b in a.steps[0].blocks if b.name == "user_input")
    assert user.tokens > 10  # the text attachment is counted with the input


def test_an_unknown_attachment_field_is_refused() -> None:
    text = events('{type: llm, at: "2026-01-01T00:00:00Z", attachments: [{name: a, size: 3}]}')
    with pytest.raises(SessionError, match=r"attachments\[0\]"):
        parse_session(text, "bad.yaml")


def test_the_app_gets_the_whole_tree_of_a_step() -> None:
    from assembler import call_tree_rows

    rows = call_tree_rows(load_session(SAMPLE), 7)
    assert [(r.function, r.struck, r.seen_by_model) for r in rows] == [
        ("review", False, True),
        ("scan_file", False, True),
        ("scan_file", False, True),
        ("run_linter", True, False),
        ("run_linter", False, True),
        ("draft_fix", True, False),
        ("write_report", False, True),
    ]


def test_a_doc_recorded_on_a_later_enter_completes_the_function() -> None:
    session = parse_session(
        events(
            '{type: enter, at: "2026-01-01T00:00:00Z", function: main}',
            '{type: exit, at: "2026-01-01T00:00:01Z", function: main}',
            '{type: enter, at: "2026-01-01T00:00:02Z", function: main, doc: "Does it. Well."}',
            '{type: enter, at: "2026-01-01T00:00:03Z", function: sub, expose: llm}',
            '{type: exit, at: "2026-01-01T00:00:04Z", function: sub}',
            '{type: enter, at: "2026-01-01T00:00:05Z", function: sub, doc: "Later."}',
            '{type: llm, at: "2026-01-01T00:00:06Z"}',
        ),
        "specs.yaml",
    )
    specs = function_specs(session)
    assert specs["main"] == FunctionSpec(doc="Does it. Well.")
    assert specs["sub"] == FunctionSpec(doc="Later.", expose=Expose.LLM)
    assert list(specs) == ["main", "sub"]
