"""Malformed session files: ``python -m assembler steps FILE`` exits 2 with one line.

Each case is a small inline file written to ``tmp_path``. The error line must name
the file, the line where one applies, and the field path, and never be a traceback.
The many cases of one kind run the command's ``main`` in the test process (what
``python -m assembler`` runs); the tests that start an interpreter check the exit
status and the output of the process itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from assembler.cli.main import main

# --- building blocks ------------------------------------------------------------

# YAML session header: 11 lines, so events[i] written one per line sits on line 12 + i.
YAML_HEAD = """\
format: context-session/1
session:
  id: s1
  agent: {name: coder}
  provider: anthropic
  model: claude-sonnet-4-5
  tools:
    - name: read_file
      description: Read a file.
      input_schema: {type: object}
events:
"""

T0 = "2026-03-12T23:58:00+01:00"
T1 = "2026-03-12T23:59:00+01:00"
T2 = "2026-03-13T00:00:30+01:00"
T3 = "2026-03-13T00:01:00+01:00"


def yaml_events(*events: str) -> str:
    """The YAML header followed by one flow-style event per line."""
    return YAML_HEAD + "".join(f"  - {e}\n" for e in events)


SESSION: dict[str, object] = {
    "id": "s1",
    "agent": {"name": "coder"},
    "provider": "anthropic",
    "model": "claude-sonnet-4-5",
}
HEADER: dict[str, object] = {"format": "context-session/1", "session": SESSION}


def jsonl(*events: dict[str, object], header: dict[str, object] | None = None) -> str:
    """A JSON Lines session: the header on line 1, events[i] on line 2 + i."""
    lines = [json.dumps(HEADER if header is None else header)]
    lines += [json.dumps(e) for e in events]
    return "\n".join(lines) + "\n"


ENTER = f'{{type: enter, at: "{T0}", function: main}}'
LLM = f'{{type: llm, at: "{T1}"}}'


@dataclass(frozen=True)
class Case:
    id: str
    filename: str
    content: str | bytes
    field: str | None  # the field path the error names, None when no field applies
    line: int | None  # the 1-based line the error names, None when no line applies
    fragment: str  # a piece of the message that says what was expected or found


CASES: list[Case] = [
    # --- required fields and types ---------------------------------------------
    Case(
        "missing-required-session-model",
        "s.yaml",
        YAML_HEAD.replace("  model: claude-sonnet-4-5\n", "") + f"  - {ENTER}\n  - {LLM}\n",
        "session.model",
        3,
        "required field is missing",
    ),
    Case(
        "missing-required-event-at",
        "s.jsonl",
        jsonl({"type": "enter", "function": "main"}, {"type": "llm", "at": T1}),
        "events[0].at",
        2,
        "required field is missing",
    ),
    Case(
        "wrong-type-input",
        "s.yaml",
        yaml_events(f'{{type: enter, at: "{T0}", function: main, input: 42}}', LLM),
        "events[0].input",
        12,
        "expected a string, found the integer 42",
    ),
    Case(
        "wrong-type-input-jsonl",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {"type": "llm", "at": T1, "input": ["not", "text"]},
        ),
        "events[1].input",
        3,
        "expected a string, found a list",
    ),
    Case(
        "tool-input-schema-not-a-mapping",
        "s.yaml",
        YAML_HEAD.replace("input_schema: {type: object}", "input_schema: object")
        + f"  - {ENTER}\n  - {LLM}\n",
        "session.tools[0].input_schema",
        10,
        "expected a mapping, found the string",
    ),
    Case(
        "tool-name-with-spaces",
        "s.yaml",
        YAML_HEAD.replace("name: read_file", "name: read file") + f"  - {ENTER}\n  - {LLM}\n",
        "session.tools[0].name",
        8,
        'found the string "read file"',
    ),
    Case(
        "service-tier-not-text",
        "s.yaml",
        yaml_events(ENTER, f'{{type: llm, at: "{T1}", settings: {{service_tier: 2}}}}'),
        "events[1].settings.service_tier",
        13,
        "expected a string, found the integer 2",
    ),
    Case(
        "service-tier-not-text-jsonl",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {"type": "llm", "at": T1, "settings": {"service_tier": ["priority"]}},
        ),
        "events[1].settings.service_tier",
        3,
        "expected a string, found a list",
    ),
    Case(
        "negative-usage",
        "s.yaml",
        yaml_events(ENTER, f'{{type: llm, at: "{T1}", usage: {{input: -5, output: 10}}}}'),
        "events[1].usage.input",
        13,
        "expected a number ≥ 0, found the integer -5",
    ),
    Case(
        "negative-web-searches",
        "s.yaml",
        yaml_events(ENTER, f'{{type: llm, at: "{T1}", usage: {{output: 10, web_searches: -1}}}}'),
        "events[1].usage.web_searches",
        13,
        "expected a number ≥ 0, found the integer -1",
    ),
    Case(
        "fractional-web-searches-jsonl",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {"type": "llm", "at": T1, "usage": {"output": 10, "web_searches": 1.5}},
        ),
        "events[1].usage.web_searches",
        3,
        "expected an integer, found the number 1.5",
    ),
    Case(
        "artifact-contract-without-artifact",
        "s.yaml",
        yaml_events(ENTER, f'{{type: llm, at: "{T1}", contract: {{kind: artifact}}}}'),
        "events[1].contract.artifact",
        13,
        "required field is missing",
    ),
    # --- enums ------------------------------------------------------------------
    Case(
        "bad-enum-expose",
        "s.yaml",
        yaml_events(f'{{type: enter, at: "{T0}", function: main, expose: everything}}', LLM),
        "events[0].expose",
        12,
        'expected one of "io", "llm", "full", "hidden", found the string "everything"',
    ),
    Case(
        "bad-enum-expose-in-functions",
        "s.yaml",
        YAML_HEAD.replace("events:\n", "  functions:\n    main: {expose: all}\nevents:\n")
        + f"  - {ENTER}\n  - {LLM}\n",
        "session.functions.main.expose",
        12,
        'found the string "all"',
    ),
    Case(
        "bad-enum-memory-state",
        "s.yaml",
        yaml_events(ENTER, f'{{type: change, at: "{T1}", memory_state: broken}}', LLM),
        "events[1].memory_state",
        13,
        'expected one of "healthy", "empty", "unavailable", found the string "broken"',
    ),
    Case(
        "bad-enum-contract-kind",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {"type": "llm", "at": T1, "contract": {"kind": "verdict"}},
        ),
        "events[1].contract.kind",
        3,
        'expected one of "decision", "artifact", "next", found the string "verdict"',
    ),
    Case(
        "bad-enum-event-type",
        "s.yaml",
        yaml_events(ENTER, f'{{type: call, at: "{T1}"}}'),
        "events[1].type",
        13,
        'found the string "call"',
    ),
    # --- timestamps ---------------------------------------------------------------
    Case(
        "timestamp-not-iso",
        "s.yaml",
        yaml_events(ENTER, '{type: llm, at: "12.03.2026 23:59"}'),
        "events[1].at",
        13,
        "expected an ISO 8601 time with a timezone",
    ),
    Case(
        "timestamp-without-timezone",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {"type": "llm", "at": "2026-03-12T23:59:00"},
        ),
        "events[1].at",
        3,
        "expected an ISO 8601 time with a timezone",
    ),
    Case(
        "timestamp-impossible-date",
        "s.yaml",
        yaml_events(ENTER, '{type: llm, at: "2026-02-30T10:00:00Z"}'),
        "events[1].at",
        13,
        "expected a real date and time",
    ),
    Case(
        "time-goes-backwards",
        "s.yaml",
        yaml_events(
            f'{{type: enter, at: "{T2}", function: main}}',
            f'{{type: llm, at: "{T3}"}}',
            f'{{type: llm, at: "{T1}"}}',
        ),
        "events[2].at",
        14,
        "time goes backwards",
    ),
    # --- call structure -------------------------------------------------------------
    Case(
        "exit-without-enter",
        "s.yaml",
        yaml_events(f'{{type: exit, at: "{T0}", function: main}}', LLM),
        "events[0]",
        12,
        "exit from 'main' but no call is running",
    ),
    Case(
        "mismatched-exit",
        "s.yaml",
        yaml_events(
            ENTER,
            f'{{type: enter, at: "{T1}", function: fix_bug}}',
            f'{{type: llm, at: "{T2}"}}',
            f'{{type: exit, at: "{T3}", function: main}}',
        ),
        "events[3]",
        15,
        "exit from 'main' but the running call is 'fix_bug'",
    ),
    Case(
        "dispatched-by-without-finished-call",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {"type": "enter", "at": T1, "function": "fix_bug", "dispatched_by": "_next_action"},
            {"type": "llm", "at": T2},
        ),
        "events[1]",
        3,
        "dispatched_by '_next_action'",
    ),
    Case(
        "tool-outside-any-function",
        "s.yaml",
        yaml_events(f'{{type: tool, at: "{T0}", name: bash}}', LLM),
        "events[0]",
        12,
        "outside any agentic function",
    ),
    Case(
        "parallel-calls-llm-names-none",
        "s.yaml",
        yaml_events(
            f'{{type: enter, at: "{T0}", function: main, id: m}}',
            f'{{type: enter, at: "{T0}", function: scan, id: a}}',
            f'{{type: enter, at: "{T0}", function: scan, id: b, parent: m}}',
            f'{{type: llm, at: "{T1}"}}',
        ),
        "events[3]",
        15,
        "several calls are running (a, b); llm.call must name one",
    ),
    Case(
        "ok-exit-with-calls-running-inside",
        "s.yaml",
        yaml_events(
            f'{{type: enter, at: "{T0}", function: main, id: m}}',
            f'{{type: enter, at: "{T0}", function: scan, id: a}}',
            f'{{type: llm, at: "{T1}"}}',
            f'{{type: exit, at: "{T2}", function: main, id: m}}',
        ),
        "events[3]",
        15,
        "while calls inside it still run (a)",
    ),
    Case(
        "retry-of-a-call-that-succeeded",
        "s.yaml",
        yaml_events(
            ENTER,
            f'{{type: enter, at: "{T0}", function: scan, id: a}}',
            f'{{type: llm, at: "{T1}"}}',
            f'{{type: exit, at: "{T1}", function: scan}}',
            f'{{type: enter, at: "{T2}", function: scan, retry_of: a}}',
        ),
        "events[4]",
        16,
        "retry_of 'a', which is not a call that ended failed or abandoned",
    ),
    Case(
        "bad-outcome",
        "s.yaml",
        yaml_events(ENTER, LLM, f'{{type: exit, at: "{T2}", function: main, outcome: crashed}}'),
        "events[2].outcome",
        14,
        "",
    ),
    Case(
        "no-llm-event",
        "s.yaml",
        yaml_events(ENTER, f'{{type: exit, at: "{T1}", function: main}}'),
        "events",
        None,
        "no LLM call",
    ),
    # --- context changes ------------------------------------------------------------
    Case(
        "remove-unknown-tool",
        "s.yaml",
        yaml_events(ENTER, f'{{type: change, at: "{T1}", remove_tools: [web_fetch]}}', LLM),
        "events[1].remove_tools",
        13,
        "'web_fetch', which the session does not have",
    ),
    Case(
        "add-tool-twice",
        "s.yaml",
        yaml_events(
            ENTER,
            f'{{type: change, at: "{T1}", add_tools: '
            "[{name: read_file, description: again, input_schema: {type: object}}]}",
            f'{{type: llm, at: "{T2}"}}',
        ),
        "events[1].add_tools",
        13,
        "'read_file', which the session already has",
    ),
    Case(
        "change-that-changes-nothing",
        "s.yaml",
        yaml_events(ENTER, f'{{type: change, at: "{T1}"}}', f'{{type: llm, at: "{T2}"}}'),
        "events[1]",
        13,
        "at least one change",
    ),
    # --- unknown and duplicate fields -----------------------------------------------
    Case(
        "unknown-event-field",
        "s.yaml",
        yaml_events(ENTER, f'{{type: llm, at: "{T1}", lable: oops}}'),
        "events[1].lable",
        13,
        "unknown field; expected one of",
    ),
    Case(
        "unknown-session-field",
        "s.yaml",
        YAML_HEAD.replace("  model:", "  modle: x\n  model:") + f"  - {ENTER}\n  - {LLM}\n",
        "session.modle",
        6,
        "unknown field; expected one of",
    ),
    Case(
        "unknown-field-jsonl-header",
        "s.jsonl",
        jsonl({"type": "enter", "at": T0, "function": "main"}, header={**HEADER, "sesion": {}}),
        "sesion",
        1,
        "unknown field",
    ),
    Case(
        "duplicate-yaml-key",
        "s.yaml",
        YAML_HEAD.replace("  model: claude-sonnet-4-5\n", "  model: a\n  model: b\n")
        + f"  - {ENTER}\n  - {LLM}\n",
        "session.model",
        7,
        "duplicate key",
    ),
    # --- syntax, encoding, emptiness, version ------------------------------------------
    Case(
        "invalid-yaml-syntax",
        "s.yaml",
        YAML_HEAD + f"  - {ENTER}\n  - {{type: llm, at: [unclosed\n",
        None,
        14,
        "not valid YAML",
    ),
    Case(
        "invalid-yaml-tab-indent",
        "s.yaml",
        "format: context-session/1\nsession:\n\tid: s1\n",
        None,
        3,
        "not valid YAML",
    ),
    Case(
        "yaml-control-character",
        "s.yaml",
        "format: context-session/1\nsession:\n  id: bell\x07\n",
        None,
        3,
        "not valid YAML",
    ),
    Case(
        "invalid-json-line",
        "s.jsonl",
        jsonl({"type": "enter", "at": T0, "function": "main"}) + '{"type": "llm", "at": \n',
        None,
        3,
        "not valid JSON",
    ),
    Case(
        "jsonl-header-not-an-object",
        "s.jsonl",
        '["context-session/1"]\n{"type": "llm", "at": "2026-03-12T23:59:00Z"}\n',
        None,
        1,
        "expected the header object {format, session}, found a list",
    ),
    Case(
        "jsonl-events-inside-header",
        "s.jsonl",
        json.dumps({**HEADER, "events": []}) + "\n",
        None,
        1,
        "events go one per line after the header",
    ),
    Case(
        "event-not-a-mapping-jsonl",
        "s.jsonl",
        jsonl({"type": "enter", "at": T0, "function": "main"}) + "42\n",
        "events[1]",
        3,
        "expected a mapping, found the integer 42",
    ),
    Case("empty-yaml", "s.yaml", "", None, None, "the file is empty"),
    Case("comments-only-yaml", "s.yaml", "# nothing here\n\n", None, None, "the file is empty"),
    Case("empty-jsonl", "s.jsonl", "\n  \n", None, None, "the file is empty"),
    Case(
        "document-is-a-list",
        "s.yaml",
        "- format: context-session/1\n",
        None,
        1,
        "expected a mapping with format, session and events, found a list",
    ),
    Case(
        "non-utf8-bytes",
        "s.yaml",
        b"format: context-session/1\nsession:\n  id: caf\xe9\n",
        None,
        None,
        "not UTF-8 text (byte 44)",
    ),
    Case(
        "wrong-format-version",
        "s.yaml",
        YAML_HEAD.replace("context-session/1", "context-session/2") + f"  - {ENTER}\n  - {LLM}\n",
        "format",
        1,
        'expected "context-session/1", found the string "context-session/2"',
    ),
    Case(
        "missing-format",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            header={"session": SESSION},
        ),
        "format",
        1,
        "required field is missing",
    ),
    Case(
        "unknown-time-zone",
        "s.yaml",
        YAML_HEAD.replace("events:\n", "  environment: {timezone: Mars/Olympus}\nevents:\n")
        + f"  - {ENTER}\n  - {LLM}\n",
        "session.environment.timezone",
        11,
        "Mars/Olympus",
    ),
    # --- recorded requests that keep the previous request's blocks ------------------
    Case(
        "keep-without-an-earlier-request",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {"type": "llm", "at": T1, "request": {"keep": 1, "blocks": []}},
        ),
        "events[1].request.keep",
        3,
        "no earlier llm event has a request",
    ),
    Case(
        "keep-more-blocks-than-the-previous-request-had",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {"type": "llm", "at": T1, "request": {"blocks": [{"section": "system", "text": "a"}]}},
            {"type": "llm", "at": T2, "request": {"keep": 2, "blocks": []}},
        ),
        "events[2].request.keep",
        4,
        "expected at most 1, the number of blocks in the request of events[1]; found 2",
    ),
    Case(
        "breakpoint-on-a-block-not-kept",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {"type": "llm", "at": T1, "request": {"blocks": [{"section": "system", "text": "a"}]}},
            {"type": "llm", "at": T2, "request": {"keep": 1, "breakpoints": [0, 1], "blocks": []}},
        ),
        "events[2].request.breakpoints[1]",
        4,
        "expected the index of a kept block (0 to 0), found 1",
    ),
    Case(
        "hour-breakpoint-not-among-the-breakpoints",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {"type": "llm", "at": T1, "request": {"blocks": [{"section": "system", "text": "a"}]}},
            {
                "type": "llm",
                "at": T2,
                "request": {"keep": 1, "breakpoints_1h": [0], "blocks": []},
            },
        ),
        "events[2].request.breakpoints_1h[0]",
        4,
        "expected the index of a kept block listed in breakpoints, found 0",
    ),
    Case(
        "hour-breakpoints-without-keep",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {
                "type": "llm",
                "at": T1,
                "request": {"breakpoints_1h": [0], "blocks": [{"section": "system"}]},
            },
        ),
        "events[1].request.breakpoints_1h",
        3,
        "it goes with keep",
    ),
    Case(
        "a-marker-lifetime-without-a-marker",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {
                "type": "llm",
                "at": T1,
                "request": {"blocks": [{"section": "system", "text": "a", "ttl": "1h"}]},
            },
        ),
        "events[1].request.blocks[0].ttl",
        3,
        "it goes with breakpoint: true",
    ),
    Case(
        "a-marker-lifetime-the-api-does-not-take",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {
                "type": "llm",
                "at": T1,
                "request": {
                    "blocks": [{"section": "system", "text": "a", "breakpoint": True, "ttl": "2h"}]
                },
            },
        ),
        "events[1].request.blocks[0].ttl",
        3,
        "5m",
    ),
    Case(
        "breakpoints-without-keep",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {
                "type": "llm",
                "at": T1,
                "request": {"breakpoints": [0], "blocks": [{"section": "system"}]},
            },
        ),
        "events[1].request.breakpoints",
        3,
        "it goes with keep",
    ),
    Case(
        "request-with-no-blocks",
        "s.jsonl",
        jsonl(
            {"type": "enter", "at": T0, "function": "main"},
            {"type": "llm", "at": T1, "request": {"blocks": []}},
        ),
        "events[1].request.blocks",
        3,
        "expected at least one block",
    ),
]


def run_steps(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assembler", "steps", path.name],
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )


def steps_in_process(
    path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> subprocess.CompletedProcess[str]:
    """``steps FILE`` from the file's folder, as ``run_steps``, without a new interpreter
    (half a second of CPU each)."""
    monkeypatch.chdir(path.parent)
    capsys.readouterr()
    code = main(["steps", path.name])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["steps", path.name], code, out, err)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_session_exits_2_with_one_line(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / case.filename
    if isinstance(case.content, bytes):
        path.write_bytes(case.content)
    else:
        path.write_text(case.content, encoding="utf-8")

    result = steps_in_process(path, monkeypatch, capsys)

    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    message = result.stderr.rstrip("\n")
    assert "\n" not in message, f"expected one line, got:\n{result.stderr}"
    where = case.filename if case.line is None else f"{case.filename}:{case.line}"
    at = f" {case.field}:" if case.field else ""
    assert message.startswith(f"error: {where}:{at} "), message
    assert case.fragment in message


DEEP: dict[str, str] = {
    "s.yaml": "format: context-session/1\nsession: " + "[" * 5000 + "]" * 5000 + "\n",
    "s.jsonl": json.dumps(HEADER) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n",
}


@pytest.mark.parametrize("filename", sorted(DEEP))
def test_deeply_nested_input_exits_2_without_traceback(filename: str, tmp_path: Path) -> None:
    """Nesting deep enough to exhaust Python's recursion limit is bad input, not a crash."""
    path = tmp_path / filename
    path.write_text(DEEP[filename], encoding="utf-8")

    result = run_steps(path)

    assert "Traceback" not in result.stderr, result.stderr[-300:]
    assert result.returncode == 2
    message = result.stderr.rstrip("\n")
    assert "\n" not in message
    assert message.startswith(f"error: {filename}")


@pytest.mark.parametrize(
    ("filename", "content", "prefix"),
    [
        (
            "s.jsonl",
            json.dumps({**HEADER, "session": {**SESSION, "bad\nkey": 1}}) + "\n",
            "error: s.jsonl:1: session",
        ),
        (
            "s.jsonl",
            jsonl({"type": "enter", "at": T0, "function": "main", "in\nput": "x"}),
            "error: s.jsonl:2: events[0]",
        ),
        (
            "s.yaml",
            yaml_events(ENTER, f'{{type: llm, at: "{T1}", "la\\nbel": x}}'),
            "error: s.yaml:13: events[1]",
        ),
    ],
    ids=["jsonl-session-key", "jsonl-event-key", "yaml-event-key"],
)
def test_unknown_key_with_a_newline_stays_on_one_line(
    filename: str, content: str, prefix: str, tmp_path: Path
) -> None:
    """A field path built from the file's own keys must not break the one-line error."""
    path = tmp_path / filename
    path.write_text(content, encoding="utf-8")

    result = run_steps(path)

    assert result.returncode == 2, result.stderr
    message = result.stderr.rstrip("\n")
    assert "\n" not in message, f"expected one line, got:\n{result.stderr}"
    assert message.startswith(prefix), message
    assert "unknown field" in message


def test_cases_are_distinct() -> None:
    assert len({c.id for c in CASES}) == len(CASES)
    assert len({c.content for c in CASES}) == len(CASES)
    assert len(CASES) >= 12


def test_missing_file_exits_2(tmp_path: Path) -> None:
    result = run_steps(tmp_path / "absent.yaml")
    assert result.returncode == 2
    assert result.stderr.startswith("error: absent.yaml: cannot read the file")
    assert "Traceback" not in result.stderr


def test_valid_sample_still_passes(tmp_path: Path) -> None:
    """The header used above is valid on its own: each case breaks exactly one thing."""
    for name, text in (("ok.yaml", yaml_events(ENTER, LLM)), ("ok.jsonl", jsonl_ok())):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        result = run_steps(path)
        assert result.returncode == 0, result.stderr


def jsonl_ok() -> str:
    return jsonl(
        {"type": "enter", "at": T0, "function": "main"},
        {"type": "llm", "at": T1},
    )


def test_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    """Nested YAML aliases that would expand to billions of values fail fast, naming the spot."""
    rows = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        rows.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = run_steps(path)
    assert result.returncode == 2
    assert "aliases expand to more than 2,000,000 values" in result.stderr
    assert result.stderr.count("\n") == 1
