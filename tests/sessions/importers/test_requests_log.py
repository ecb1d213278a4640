"""The request-log importer on fixtures/requests/proxy.jsonl (Anthropic, Chat, Responses)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from importer_helpers import REQUESTS, load, steps

from assembler.analysis.engine.analyzer import analyze
from assembler.analysis.engine.importing import import_file
from assembler.analysis.engine.layouts import builtin_layout
from assembler.analysis.engine.wire_request import wire_json
from assembler.cache.prices.pricing import price_direct
from assembler.cache.tokenizers import counter
from assembler.sessions.importers import ImporterError
from assembler.sessions.model import RecordedBlock, Usage
from assembler.sessions.replay import Step


@pytest.fixture(scope="module")
def imported() -> dict[str, Any]:
    return import_file("requests", REQUESTS)


@pytest.fixture(scope="module")
def all_steps(imported: dict[str, Any]) -> list[Step]:
    return steps(imported)


def blocks(step: Step) -> tuple[RecordedBlock, ...]:
    assert step.call.request is not None
    return step.call.request


def test_one_step_per_line_with_provider_and_model_changes(
    imported: dict[str, Any], all_steps: list[Step]
) -> None:
    assert len(all_steps) == 8
    got = [(s.context.profile.provider, s.context.profile.model) for s in all_steps]
    assert got == [
        *[("anthropic", "claude-sonnet-4-5")] * 4,
        *[("openai", "gpt-4.1")] * 3,
        ("openai", "gpt-5"),
    ]
    times = [s.at for s in all_steps]
    assert times == sorted(times)
    changes = [e for e in imported["events"] if e["type"] == "change"]
    assert [{k: v for k, v in c.items() if k != "at"} for c in changes] == [
        {"type": "change", "model": "gpt-4.1", "provider": "openai"},
        {"type": "change", "model": "gpt-5"},
    ]
    assert all(s.call_path == ("requests_log",) for s in all_steps)


def test_anthropic_blocks_and_breakpoints_come_from_cache_control(all_steps: list[Step]) -> None:
    b = blocks(all_steps[1])
    assert [(x.section, x.name, x.breakpoint) for x in b] == [
        ("tools", "tools[0] read_file", False),
        ("tools", "tools[1] edit_file", False),
        ("tools", "tools[2] run_tests", True),
        ("system", "system[0]", True),
        ("messages", "messages[0] text", False),
        ("messages", "messages[1] tool_use", False),  # the thinking block is left out
        ("messages", "messages[2] tool_result", True),
    ]
    assert [x.role for x in b[4:]] == ["user", "assistant", "user"]
    assert "cache_control" not in b[2].text and json.loads(b[2].text)["name"] == "run_tests"
    assert json.loads(b[5].text)["input"] == {"path": "ledgerline/reports/daily.py"}
    # the first request marked its only message; the second moves the marker on, same text
    first = blocks(all_steps[0])
    assert (first[-1].name, first[-1].breakpoint, first[-1].text) == (
        "messages[0] text",
        True,
        b[4].text,
    )
    assert all_steps[0].call.usage == Usage(input=0, cache_read=0, cache_write=1373, output=45)
    assert all_steps[1].call.usage == Usage(input=0, cache_read=1373, cache_write=113, output=49)
    assert all_steps[1].call.output.startswith("daily_revenue compares o.paid_at.date()")


def test_top_level_cache_control_marks_the_last_block(all_steps: list[Step]) -> None:
    b = blocks(all_steps[3])
    assert [x.name for x in b if x.breakpoint] == [
        "tools[2] run_tests",
        "system[0]",
        "messages[6] tool_result",  # no marker of its own: the top-level one puts it there
    ]
    # only the 5m/1h split was given: the writes are its sum
    assert all_steps[3].call.usage == Usage(input=0, cache_read=1543, cache_write=87, output=17)


def test_chat_usage_takes_the_cached_tokens_out_of_the_input(all_steps: list[Step]) -> None:
    step = all_steps[5]
    assert step.call.usage == Usage(input=1504 - 1280, cache_read=1280, cache_write=0, output=19)
    assert all_steps[6].call.usage == Usage(input=1529 - 1408, cache_read=1408, output=20)
    b = blocks(step)
    assert [(x.section, x.name, x.role) for x in b] == [
        ("tools", "tools[0] read_file", "user"),
        ("tools", "tools[1] edit_file", "user"),
        ("tools", "tools[2] run_tests", "user"),
        ("system", "system[0]", "user"),
        ("messages", "messages[0] text", "user"),
        ("messages", "messages[1] tool_call", "assistant"),
        ("messages", "messages[2] text", "user"),  # the tool message is input: user side
    ]
    assert not any(x.breakpoint for x in b)  # OpenAI caches prefixes without markers


def test_responses_usage_items_and_time_from_created_at(all_steps: list[Step]) -> None:
    step = all_steps[7]
    # below the 1,024-token minimum: nothing cached
    assert step.call.usage == Usage(input=168, cache_read=0, cache_write=0, output=50)
    assert step.at.isoformat() == "2026-03-12T15:26:40+00:00"
    b = blocks(step)
    assert [x.name for x in b] == [
        "tools[0] read_file",
        "system[0]",
        "messages[0] text",
        "messages[1] reasoning",
        "messages[2] function_call",
        "messages[3] function_call_output",
    ]
    assert "gAAA" in "".join(x.text for x in b)  # current-turn reasoning is input
    assert step.call.output == "Naive dates again."


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"timestamp": "2026-03-12T15:00:00Z", "request": "POST /v1/messages", "response": {}}',
         "request: expected the JSON body as an object, found a string"),
        ('{"timestamp": "2026-03-12T15:00:00Z", "request": {"messages": [{"role": "user", "content": "x"}]}, "response": {"usage": {"prompt_tokens": 3}}}',
         "request.model: expected the model name, found null"),
        ('{"request": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "x"}]}, "response": {"object": "chat.completion"}}',
         "timestamp: expected an ISO 8601 time"),
        ('{"timestamp": "2026-03-12T15:00:00Z", "request": {"model": "m"}, "response": {}}',
         "expected an Anthropic Messages, OpenAI Chat or Responses body"),
    ],
)  # fmt: skip
def test_bad_lines_name_file_line_and_expectation(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(REQUESTS.read_text("utf-8").splitlines()[0] + "\n" + line + "\n", "utf-8")
    with pytest.raises(ImporterError) as info:
        import_file("requests", path)
    assert str(info.value).startswith(f"{path}:2: ")
    assert message in str(info.value)


def test_a_log_of_nothing_but_garbage_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text("not json\n{truncated\n", "utf-8")
    with pytest.raises(ImporterError, match="no API request found"):
        import_file("requests", path)


def _anthropic_line(at: str, system_ttl: str | None, message_ttl: str | None) -> str:
    """A request with a 2,000-word system prompt and a question, each marked."""

    def marker(ttl: str | None) -> dict[str, str]:
        return {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}

    request = {
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "rule " * 2000, "cache_control": marker(system_ttl)}],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "Why?", "cache_control": marker(message_ttl)}],
            }
        ],
    }
    response = {"type": "message", "content": [{"type": "text", "text": "Because."}]}
    return json.dumps({"timestamp": at, "request": request, "response": response})


@pytest.mark.parametrize(
    ("ttls", "expected"),
    [
        (("1h", "1h"), "1h"),
        (("1h", "5m"), "5m"),
        (("1h", None), "5m"),  # a marker without a ttl writes for the default 5 minutes
        ((None, None), None),  # no marker names one: the simulator's default stands
        (("1h", "2h"), None),  # not a lifetime the API takes
    ],
)
def test_the_write_lifetime_comes_from_cache_control_ttl(
    tmp_path: Path, ttls: tuple[str | None, str | None], expected: str | None
) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(_anthropic_line("2026-03-12T15:00:00Z", *ttls) + "\n", "utf-8")
    (llm,) = [e for e in import_file("requests", path)["events"] if e["type"] == "llm"]
    assert llm.get("ttl") == expected


def test_an_hour_lifetime_from_the_request_bridges_a_20_minute_gap(tmp_path: Path) -> None:
    """The same request twice, 20 minutes apart: with 1-hour markers the second reads the
    whole prefix the first wrote; with the default 5 minutes it reads nothing."""
    reads: dict[str | None, list[tuple[int, int, str]]] = {}
    for ttl in ("1h", None):
        path = tmp_path / f"log-{ttl}.jsonl"
        lines = [
            _anthropic_line(at, ttl, ttl) for at in ("2026-03-12T15:00:00Z", "2026-03-12T15:20:00Z")
        ]
        path.write_text("\n".join(lines) + "\n", "utf-8")
        a = analyze(load(import_file("requests", path)))
        reads[ttl] = [(s.read, s.write, s.write_ttl) for s in a.steps]
    first = reads["1h"][0][1]
    assert first > 2000
    assert reads["1h"] == [(0, first, "1h"), (first, 0, "1h")]
    assert reads[None] == [(0, first, ""), (0, first, "")]


def _mixed_line(at: str, question: str) -> str:
    """A 1-hour marker on the system prompt and a 5-minute one on the question."""
    request = {
        "model": "claude-sonnet-4-5",
        "system": [
            {
                "type": "text",
                "text": "rule " * 2000,
                "cache_control": {"type": "ephemeral", "ttl": "1h"},
            }
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": question * 300, "cache_control": {"type": "ephemeral"}}
                ],
            }
        ],
    }
    response = {"type": "message", "content": [{"type": "text", "text": "Because."}]}
    return json.dumps({"timestamp": at, "request": request, "response": response})


def test_mixed_marker_lifetimes_are_each_kept_and_billed(tmp_path: Path) -> None:
    """The system prompt's 1-hour entry outlives a 20-minute gap, the question's 5-minute
    one does not; the first request's writes up to the 1-hour marker are 1-hour writes."""
    path = tmp_path / "log.jsonl"
    lines = [
        _mixed_line("2026-03-12T15:00:00Z", "Why? "),
        _mixed_line("2026-03-12T15:20:00Z", "How? "),
    ]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    data = import_file("requests", path)
    first, second = [e for e in data["events"] if e["type"] == "llm"]
    assert first["ttl"] == second["ttl"] == "5m"
    system, question = first["request"]["blocks"]
    assert system["breakpoint"] and system["ttl"] == "1h"
    assert question["breakpoint"] and "ttl" not in question
    # the second request keeps the system prompt, its 1-hour marker listed as such
    assert second["request"]["keep"] == 1
    assert second["request"]["breakpoints"] == second["request"]["breakpoints_1h"] == [0]
    session = load(data)
    kept = session.events[2].request
    assert [(b.breakpoint, b.ttl) for b in kept] == [(True, "1h"), (True, None)]

    # the request as sent shows each marker's lifetime again
    sent = json.loads(wire_json(session, builtin_layout("seed"), 2, "anthropic", ttl="1h"))
    assert sent["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert sent["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}

    a = analyze(session)
    one, two = a.steps
    assert [b.marker_ttl for b in two.blocks] == ["1h", None]  # shown beside the marker
    system_tokens = one.blocks[0].tokens
    assert one.read == 0 and one.write == one.tokens["total"]
    assert two.read == system_tokens  # the 1-hour entry is still alive after 20 minutes
    assert two.write == two.tokens["total"] - system_tokens
    # billed: the system prompt at the 1-hour write rate, the question at the 5-minute one
    for s, hours in ((one, system_tokens), (two, 0)):
        assert s.write_ttl == "5m"
        usage = {
            "total_input": s.tokens["total"],
            "cache_read": s.read,
            "cache_write": s.write,
            "output": counter("o200k_base").count("Because."),  # the answer, no usage recorded
            "at": s.timestamp,
        }
        expected = price_direct("anthropic", "claude-sonnet-4-5", cache_write_1h=hours, **usage)
        assert s.usd == pytest.approx(expected, rel=1e-12)
    # the same requests with 5-minute markers only: nothing survives the gap
    plain = [line.replace(', "ttl": "1h"', "") for line in lines]
    path.write_text("\n".join(plain) + "\n", "utf-8")
    five = analyze(load(import_file("requests", path)))
    assert five.steps[1].read == 0
    assert one.usd > five.steps[0].usd  # 1-hour writes cost more than 5-minute ones


def test_a_1h_marker_after_a_5m_one_is_named_as_refused(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(_anthropic_line("2026-03-12T15:00:00Z", "5m", "1h") + "\n", "utf-8")
    (step,) = analyze(load(import_file("requests", path))).steps
    assert any("1h cache_control marker after a 5m one" in w for w in step.warnings)
    path.write_text(_anthropic_line("2026-03-12T15:00:00Z", "1h", "5m") + "\n", "utf-8")
    (step,) = analyze(load(import_file("requests", path))).steps
    assert not step.warnings  # 1-hour entries first: as the API takes it
