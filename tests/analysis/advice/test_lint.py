"""lint: volatile components found by perturbation, and volatile blocks in recorded requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assembler.analysis.advice.lint import ERROR, LintReport, lint_lines, lint_session
from assembler.analysis.engine.layouts import builtin_layout
from assembler.cli.main import main
from assembler.design.components import default_registry
from assembler.design.context import Context
from assembler.design.layers import Layer
from assembler.design.registry import Registry
from assembler.sessions.generator import generate_session
from assembler.sessions.loader import load_session, parse_session
from assembler.sessions.model import Session

SAMPLES = Path(__file__).resolve().parents[3] / "sample_sessions"


def _session(steps: int = 6, seed: int = 4) -> Session:
    return parse_session(yaml.safe_dump(generate_session(steps, seed)), "generated.yaml")


def _row(report: LintReport, name: str) -> object:
    return next(c for c in report.components if c.name == name)


def test_seed_is_volatile_only_in_the_date_and_the_call_tree() -> None:
    for sample in ("research_agent", "coding_agent_midnight"):
        report = lint_session(load_session(str(SAMPLES / f"{sample}.yaml")))
        assert report.volatile(within_session=True) == ("current_date", "call_tree"), sample
        assert report.errors == 0
        date = next(c for c in report.components if c.name == "current_date")
        assert date.changes == ("midnight",)
        assert date.cost.startswith("cost at rollover ≈ ")


def test_the_output_schema_is_named_by_its_own_change_not_a_tool_result() -> None:
    report = lint_session(load_session(str(SAMPLES / "coding_agent_midnight.yaml")))
    schema = next(c for c in report.components if c.name == "output_schema")
    assert "output-keys" in schema.changes and "result-keys" not in schema.changes
    line = next(x for x in lint_lines(report) if x.startswith("output_schema "))
    assert "key order of an output schema" in line and "tool result" not in line


def test_a_clock_planted_in_environment_is_an_error_with_its_fix() -> None:
    registry = default_registry()

    def environment(ctx: Context) -> str:
        return f"<environment>\n- OS: Linux\n- Time: {ctx.now:%H:%M}\n</environment>"

    registry.replace("environment", build=environment, profile_only=False)
    report = lint_session(_session(), registry=registry)
    env = next(c for c in report.components if c.name == "environment")
    assert env.changes[:2] == ("clock+1m", "clock+1h")
    assert env.severity == ERROR
    assert env.fix == "drop minutes"
    assert env.position == "sits before ②"
    assert env.cost.startswith("breaks L0 + L1 on every call")
    assert report.errors == 1
    line = next(x for x in lint_lines(report) if x.startswith("environment"))
    assert "every minute (clock)" in line and line.endswith("← error: drop minutes")


def test_the_session_id_in_bindings_costs_a_rewrite_per_session() -> None:
    report = lint_session(_session())
    bindings = next(c for c in report.components if c.name == "bindings")
    # the bindings line carries the working directory too (the design's §6 text)
    assert bindings.changes == ("session-id", "cwd")
    assert bindings.severity == "cost"
    assert bindings.position == "sits before ③"
    assert "per session" in bindings.cost
    assert "bindings" in report.volatile(within_session=False)


def test_a_component_that_passes_a_tool_result_through_unsorted_is_told_to_sort_keys() -> None:
    def digest(sort: bool) -> Registry:
        registry = default_registry()

        @registry.component("tool_digest", Layer.L1, 50)
        def _digest(ctx: Context) -> str | None:
            assert ctx.frame is not None
            node = ctx.frame.tree
            outputs = [c.output for c in node.children if c.output and c.output.startswith("{")]
            if not outputs:
                return '<tool_digest>{"none": 0}</tool_digest>'
            data = json.loads(outputs[-1])
            return f"<tool_digest>{json.dumps(data, sort_keys=sort)}</tool_digest>"

        return registry

    session = _json_results_session()
    unsorted = lint_session(session, registry=digest(sort=False))
    row = next(c for c in unsorted.components if c.name == "tool_digest")
    assert "result-keys" in row.changes
    assert row.severity == ERROR and row.fix == "move after ③, sort keys"
    tidy = lint_session(session, registry=digest(sort=True))
    assert "result-keys" not in next(c for c in tidy.components if c.name == "tool_digest").changes


def _json_results_session() -> Session:
    text = """
format: context-session/1
session:
  id: json-results
  agent: {name: probe}
  provider: anthropic
  model: claude-sonnet-4-5
events:
  - {type: enter, at: "2026-03-01T10:00:00Z", function: main, input: go}
  - {type: enter, at: "2026-03-01T10:00:01Z", function: lookup, input: q}
  - {type: exit, at: "2026-03-01T10:00:02Z", function: lookup, output: '{"b": 2, "a": 1}'}
  - {type: llm, at: "2026-03-01T10:00:03Z", input: next, output: done}
  - {type: llm, at: "2026-03-01T10:01:03Z", input: again, output: done}
"""
    return parse_session(text, "json-results.yaml")


def _header(session_id: str) -> str:
    """A recorded session's head: its id, an Anthropic model, the main call entered."""
    return f"""
format: context-session/1
session:
  id: {session_id}
  agent: {{name: proxy}}
  provider: anthropic
  model: claude-sonnet-4-5
events:
  - {{type: enter, at: "2026-03-01T10:00:00Z", function: main}}"""


def _llm(at: str, *blocks: str) -> str:
    """One recorded request, its blocks as YAML flow mappings."""
    lines = "".join(f"\n        - {b}" for b in blocks)
    return f"""
  - type: llm
    at: "{at}"
    output: ok
    request:
      blocks:{lines}"""


def _message(i: int, text: str, *, name: str = "", role: str = "user", mark: bool = False) -> str:
    name = name or f"messages[{i}]"
    end = ", breakpoint: true}" if mark else "}"
    return f'{{section: messages, name: "{name}", role: {role}, text: {text}' + end


def _clock(time: str) -> str:
    return (
        '{section: system, name: "system[0]", '
        f'text: "You are a helper. Time now: {time}. Answer briefly.", breakpoint: true}}'
    )


RECORDED = (
    _header("recorded-clock")
    + _llm("2026-03-01T10:00:05Z", _clock("10:00:05"), _message(0, '"first question"'))
    + _llm(
        "2026-03-01T10:01:10Z",
        _clock("10:01:10"),
        _message(0, '"first question"'),
        _message(1, '"second question"'),
    )
    + "\n"
)


def test_recorded_requests_flag_the_few_characters_that_differ_ahead_of_a_breakpoint() -> None:
    report = lint_session(parse_session(RECORDED, "recorded.yaml"))
    assert len(report.recorded) == 1
    flag = report.recorded[0]
    assert (flag.step, flag.block, flag.position) == (2, "system[0]", "sits before ①")
    assert (flag.before, flag.after) == ("0:05", "1:10")
    assert report.errors == 1


_HELPER = '{section: system, name: "system[0]", text: "You are a helper.", breakpoint: true}'
_READS = (
    _message(0, """'{"id": "toolu_01AAAA", "input": {"file_path": "/src/a.py"}}'""", name="messages[0] tool_use Read", role="assistant"),
    _message(1, """'{"id": "toolu_01BBBB", "input": {"file_path": "/src/b.py"}}'""", name="messages[1] tool_use Read", role="assistant"),
    _message(2, '"go on"', mark=True),
)  # fmt: skip
_SUMMARISE = '{section: system, name: "system[1]", text: "Summarise the conversation so far."}'
SHIFTED = (
    _header("recorded-shift")
    + _llm("2026-03-01T10:00:05Z", _HELPER, *_READS)
    + _llm("2026-03-01T10:01:10Z", _HELPER, _SUMMARISE, *_READS)
    + "\n"
)


def test_a_block_is_compared_with_the_block_of_its_name_not_of_its_place() -> None:
    """A request with one more block near its head (a compaction call's instructions): each
    later block stands where its neighbour stood, and two calls of one tool differ in a few
    characters, but no block changed."""
    report = lint_session(parse_session(SHIFTED, "shifted.yaml"))
    assert not report.recorded and report.errors == 0
    # without the added block, a block's own text changed in a few characters (its tool
    # call's id) is flagged, by its name
    same_head = SHIFTED.replace(f"\n        - {_SUMMARISE}", "")
    head, tail = same_head.rsplit("toolu_01BBBB", 1)
    flagged = lint_session(parse_session(head + "toolu_01CCCC" + tail, "id.yaml"))
    assert [(f.step, f.block, f.before, f.after) for f in flagged.recorded] == [
        (2, "messages[1] tool_use Read", "BBBB", "CCCC")
    ]


def _request(at: str, *messages: str) -> str:
    """A request of the system prompt and ``messages``, the last one marked."""
    last = len(messages) - 1
    return _llm(
        at, _HELPER, *(_message(i, f'"{m}"', mark=i == last) for i, m in enumerate(messages))
    )


THREADS = (
    _header("recorded-threads")
    + _request("2026-03-01T10:00:05Z", "Fix the bug in a.py", "Read a.py: 12 lines")
    # a subagent's request between two of the main thread's: its own messages
    + _request(
        "2026-03-01T10:00:20Z",
        "You are a search agent. Look through the repository for the cause of the failure.",
        "Read b.py: 14 lines",
    )
    + _request("2026-03-01T10:00:40Z", "Fix the bug in a.py", "Read a.py: 12 lines", "done")
)


def test_a_request_is_compared_with_the_one_it_continues() -> None:
    """A subagent's request between two of the main thread's has a tool result that differs
    from theirs in a few characters; each thread's requests are compared with their own
    thread's, and a new conversation is not its first request's earlier ones changed."""
    report = lint_session(parse_session(THREADS, "threads.yaml"))
    assert not report.recorded
    # the main thread's own message changed in a few characters is still flagged
    head, tail = THREADS.rsplit("Read a.py: 12 lines", 1)  # in the main thread's second
    moved = head + "Read a.py: 13 lines" + tail
    flags = lint_session(parse_session(moved, "moved.yaml")).recorded
    assert [(f.step, f.block, f.before, f.after) for f in flags] == [(3, "messages[1]", "2", "3")]


def test_lint_exits_1_on_an_error_and_0_on_the_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lint", str(SAMPLES / "coding_agent_midnight.yaml")]) == 0
    out = capsys.readouterr().out
    assert "current_date" in out and out.rstrip().endswith("layout seed)")
    recorded = tmp_path / "recorded.yaml"
    recorded.write_text(RECORDED, "utf-8")
    assert main(["lint", str(recorded), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["errors"] == 1 and data["recorded"][0]["after"] == "1:10"


def test_lint_names_a_bad_layout_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(SAMPLES / "research_agent.yaml"), "--layout", "nope.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: nope.yaml: layout:") and err.count("\n") == 1


def test_moving_the_date_into_l0_puts_it_before_the_system_breakpoint() -> None:
    report = lint_session(
        load_session(str(SAMPLES / "research_agent.yaml")), builtin_layout("date-in-l0")
    )
    date = next(c for c in report.components if c.name == "current_date")
    assert date.position == "sits before ②"
    seed = lint_session(load_session(str(SAMPLES / "research_agent.yaml")))
    seed_date = next(c for c in seed.components if c.name == "current_date")
    assert date.tokens_at_risk > seed_date.tokens_at_risk


def test_per_call_content_ahead_of_the_call_tree_is_an_error() -> None:
    session = load_session(str(SAMPLES / "research_agent.yaml"))
    report = lint_session(session, builtin_layout("situation-first"))
    situation = next(c for c in report.components if c.name == "situation")
    assert "next-call" in situation.changes
    assert situation.severity == ERROR
    assert situation.fix == "move after the last cacheable block"
    assert report.errors == 1
    seed = lint_session(session)
    assert next(c for c in seed.components if c.name == "situation").severity == "stable"


def test_the_date_ahead_of_stable_content_is_an_error_when_the_session_crosses_midnight(
    capsys: pytest.CaptureFixture[str],
) -> None:
    midnight = str(SAMPLES / "coding_agent_midnight.yaml")
    assert main(["lint", "--layout", "date-in-l0", midnight]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("current_date "))
    assert "at midnight, 1× in this session" in line and line.endswith("← error: move after ③")
    assert out.rstrip().splitlines()[-1].startswith("1 error(s);")
    # no rollover in the session: the same placement is a cost, not an error
    report = lint_session(
        load_session(str(SAMPLES / "research_agent.yaml")), builtin_layout("date-in-l0")
    )
    assert report.midnights == 0 and _row(report, "current_date").severity == "cost"  # type: ignore[attr-defined]
