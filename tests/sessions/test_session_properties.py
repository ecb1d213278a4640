"""Property tests for the session loaders.

(a) A generated session reads the same from YAML and from JSON Lines and replays to
    exactly the number of LLM calls it was generated with.
(b) Truncated or garbled session text fails only with :class:`SessionError`, whose
    message is one line, never with any other exception.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.sessions import loader as loader_module
from assembler.sessions import reader as reader_module
from assembler.sessions.generator import generate_session, write_session
from assembler.sessions.importers.history import compact_requests
from assembler.sessions.loader import load_session, parse_bytes, parse_session
from assembler.sessions.model import Event, Session, SessionError
from assembler.sessions.replay import iter_steps

FAST = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _texts(data: dict[str, Any]) -> tuple[str, str]:
    """The session as written by the generator: (YAML text, JSON Lines text)."""
    with tempfile.TemporaryDirectory() as tmp:
        yaml_path, jsonl_path = Path(tmp, "s.yaml"), Path(tmp, "s.jsonl")
        write_session(data, yaml_path)
        write_session(data, jsonl_path)
        return yaml_path.read_text("utf-8"), jsonl_path.read_text("utf-8")


@cache
def _sample(steps: int, seed: int) -> tuple[str, str]:
    return _texts(generate_session(steps, seed))


def _without_lines(events: tuple[Event, ...]) -> list[Event]:
    """Events compared by content: line numbers differ between the two spellings."""
    return [dataclasses.replace(e, line=None) for e in events]


def _load_and_replay(text: str, source: str) -> None:
    """Parse and replay; the only exception allowed out is a one-line SessionError."""
    try:
        session = parse_session(text, source)
        list(iter_steps(session))
    except SessionError as exc:
        _assert_one_line(exc)


def _assert_one_line(exc: SessionError) -> None:
    message = str(exc)
    assert message, "empty error message"
    assert "\n" not in message and "\r" not in message, repr(message)
    assert message.startswith(exc.source), message


# --- (a) YAML and JSON Lines agree ---------------------------------------------------


@pytest.mark.slow
@settings(FAST, max_examples=25)
@given(steps=st.integers(min_value=1, max_value=30), seed=st.integers(0, 10_000))
def test_yaml_and_jsonl_parse_to_the_same_session(steps: int, seed: int) -> None:
    yaml_text, jsonl_text = _texts(generate_session(steps, seed))

    from_yaml: Session = parse_session(yaml_text, "x.yaml")
    from_jsonl: Session = parse_session(jsonl_text, "x.jsonl")

    assert _without_lines(from_yaml.events) == _without_lines(from_jsonl.events)
    for f in dataclasses.fields(from_yaml.profile):  # compared by value, whatever Profile's eq
        assert getattr(from_yaml.profile, f.name) == getattr(from_jsonl.profile, f.name), f.name
    assert from_yaml.functions == from_jsonl.functions
    assert (from_yaml.id, from_yaml.title) == (from_jsonl.id, from_jsonl.title)
    for session in (from_yaml, from_jsonl):
        steps_seen = list(iter_steps(session))
        assert len(steps_seen) == steps
        assert [s.number for s in steps_seen] == list(range(1, steps + 1))


@FAST
@given(steps=st.integers(min_value=1, max_value=30), seed=st.integers(0, 10_000))
def test_event_lines_point_at_the_events(steps: int, seed: int) -> None:
    """In JSON Lines, events[i] sits on line i + 2 (the header is line 1)."""
    data = generate_session(steps, seed)
    lines = [json.dumps({"format": data["format"], "session": data["session"]})]
    lines += [json.dumps(e) for e in data["events"]]
    session = parse_session("\n".join(lines) + "\n", "x.jsonl")
    assert [e.line for e in session.events] == [i + 2 for i in range(len(session.events))]


@pytest.mark.slow
@settings(FAST, max_examples=25)
@given(sample=st.tuples(st.integers(1, 4), st.integers(0, 3)), data=st.data())
def test_libyaml_and_python_readers_agree(sample: tuple[int, int], data: st.DataObject) -> None:
    """The fast reader gives the same data and lines, or fails where the other is asked."""
    text = _sample(*sample)[0]
    cut = data.draw(st.sampled_from([len(text), data.draw(st.integers(0, len(text)))]))
    try:
        slow = reader_module._compose(reader_module._Loader(text[:cut]), "x.yaml")
    except (yaml.YAMLError, SessionError):
        slow = None
    try:
        fast = reader_module._compose(reader_module._FastLoader(text[:cut]), "x.yaml")
    except (yaml.YAMLError, SessionError):
        fast = None
    if fast is not None:  # accepted: exactly what the reference reader makes of it
        assert fast == slow


BLOCK = st.fixed_dictionaries(
    {"section": st.sampled_from(["tools", "system", "messages"])},
    optional={
        "text": st.sampled_from(["a", "b", "a\nb", ""]),
        "role": st.sampled_from(["user", "assistant"]),
        "breakpoint": st.booleans(),
        "tokens": st.integers(0, 3),
    },
)


@settings(FAST, max_examples=60)
@given(
    first=st.lists(BLOCK, min_size=1, max_size=6),
    edits=st.lists(st.tuples(st.integers(0, 8), st.lists(BLOCK, max_size=4)), max_size=6),
    marks=st.lists(st.booleans(), max_size=12),
)
def test_compacted_requests_read_back_as_written(
    first: list[dict[str, Any]],
    edits: list[tuple[int, list[dict[str, Any]]]],
    marks: list[bool],
) -> None:
    """Requests written as keep + new blocks read back exactly as the full requests."""
    requests = [first]
    for cut, new in edits:
        # the history grows at its tail; cache markers move from request to request
        kept = [{**b, "breakpoint": m} for b, m in zip(requests[-1][:cut], marks, strict=False)]
        requests.append((kept + new) or new or first)
    events: list[dict[str, Any]] = [
        {"type": "enter", "at": "2026-01-01T00:00:00Z", "function": "f"}
    ]
    events += [
        {"type": "llm", "at": "2026-01-01T00:00:01Z", "request": {"blocks": blocks}}
        for blocks in requests
    ]
    header = {
        "format": "context-session/1",
        "session": {
            "id": "s",
            "agent": {"name": "a"},
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
        },
    }

    def read(evs: list[dict[str, Any]]) -> list[Any]:
        text = "\n".join(json.dumps(x) for x in [header, *evs]) + "\n"
        return [e.request for e in parse_session(text, "x.jsonl").events[1:]]

    compacted = compact_requests(events)
    assert read(compacted) == read(events)
    assert len(json.dumps(compacted)) <= len(json.dumps(events)) + 40 * len(requests)


# --- (b) damaged text fails only with SessionError ------------------------------------

SPELLINGS = st.sampled_from(["yaml", "jsonl"])
SAMPLES = st.tuples(st.integers(min_value=1, max_value=4), st.integers(0, 3))


@FAST
@given(sample=SAMPLES, spelling=SPELLINGS, data=st.data())
def test_truncated_text_fails_only_with_session_error(
    sample: tuple[int, int], spelling: str, data: st.DataObject
) -> None:
    yaml_text, jsonl_text = _sample(*sample)
    text = yaml_text if spelling == "yaml" else jsonl_text
    cut = data.draw(st.integers(min_value=0, max_value=len(text)), label="cut")
    _load_and_replay(text[:cut], f"x.{spelling}")


@pytest.mark.slow
@FAST
@given(sample=SAMPLES, spelling=SPELLINGS, data=st.data())
def test_truncated_bytes_fail_only_with_session_error(
    sample: tuple[int, int], spelling: str, data: st.DataObject
) -> None:
    yaml_text, jsonl_text = _sample(*sample)
    raw = (yaml_text if spelling == "yaml" else jsonl_text).encode("utf-8")
    cut = data.draw(st.integers(min_value=0, max_value=len(raw)), label="cut")
    try:
        list(iter_steps(parse_bytes(raw[:cut], f"x.{spelling}")))
    except SessionError as exc:
        _assert_one_line(exc)


GARBAGE = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "",
            "{",
            "}",
            "- ",
            ":",
            "null",
            "[]",
            "{}",
            "42",
            '"text"',
            "\t",
            "  - {type: llm}",
            '{"type": "llm"}',
            '{"type": "exit", "at": "2026-03-02T09:00:00Z", "function": "nobody"}',
            '{"type": "enter", "at": "1999-01-01T00:00:00Z", "function": "x"}',
            '{"type": "change", "at": "2099-01-01T00:00:00Z", "remove_tools": ["nope"]}',
            "&a [*a]",
            "*undefined",
            "!!python/object:os.system {}",
            "\ufeff",
            "\x00",
        ]
    ),
)


@pytest.mark.slow
@FAST
@given(sample=SAMPLES, spelling=SPELLINGS, data=st.data())
def test_garbled_line_fails_only_with_session_error(
    sample: tuple[int, int], spelling: str, data: st.DataObject
) -> None:
    yaml_text, jsonl_text = _sample(*sample)
    lines = (yaml_text if spelling == "yaml" else jsonl_text).split("\n")
    index = data.draw(st.integers(min_value=0, max_value=len(lines) - 1), label="line")
    action = data.draw(st.sampled_from(["replace", "insert", "delete", "swap", "flip"]))
    if action == "replace":
        lines[index] = data.draw(GARBAGE, label="garbage")
    elif action == "insert":
        lines.insert(index, data.draw(GARBAGE, label="garbage"))
    elif action == "delete":
        del lines[index]
    elif action == "swap":
        other = data.draw(st.integers(min_value=0, max_value=len(lines) - 1), label="other")
        lines[index], lines[other] = lines[other], lines[index]
    else:
        line = lines[index]
        if line:
            pos = data.draw(st.integers(min_value=0, max_value=len(line) - 1), label="pos")
            char = data.draw(st.characters(), label="char")
            lines[index] = line[:pos] + char + line[pos + 1 :]
    _load_and_replay("\n".join(lines), f"x.{spelling}")


@pytest.mark.slow
@FAST
@given(
    spelling=SPELLINGS,
    key=st.one_of(
        st.text(min_size=1, max_size=12),
        st.sampled_from(["bad\nkey", "\r", "tab\there", "x\r\ny", "é", "{}", ": "]),
    ),
    where=st.sampled_from(["header", "session", "event"]),
)
def test_unknown_keys_give_one_line_errors(spelling: str, key: str, where: str) -> None:
    """A key the schema does not know, whatever its characters, is reported on one line."""
    data = generate_session(1, 0)
    if where == "header":
        data = {**data, key: 1} if key not in data else data
    elif where == "session":
        session = data["session"]
        data = {**data, "session": {**session, key: 1} if key not in session else session}
    else:
        first = data["events"][0]
        if key not in first:
            data = {**data, "events": [{**first, key: 1}, *data["events"][1:]]}
    yaml_text, jsonl_text = _texts(data)
    _load_and_replay(yaml_text if spelling == "yaml" else jsonl_text, f"x.{spelling}")


def test_a_lone_surrogate_in_text_is_a_session_error() -> None:
    with pytest.raises(SessionError, match="not allowed"):
        parse_session("format: context-session/1\nsession: {id: \ud800}\n", "x.yaml")


def test_compacting_keeps_requests_already_written_with_keep() -> None:
    def llm(request: dict[str, Any]) -> dict[str, Any]:
        return {"type": "llm", "at": "2026-01-01T00:00:01Z", "request": request}

    a, b, c, d = ({"section": "messages", "text": t} for t in "abcd")
    events = [llm({"blocks": [a, b]}), llm({"keep": 1, "blocks": [c]}), llm({"blocks": [a, c, d]})]
    out = compact_requests(events)
    assert out[1] == events[1]
    assert out[2]["request"] == {"keep": 2, "blocks": [d]}  # after a, c: what events[1] reads as


@pytest.mark.slow
@settings(FAST, max_examples=20)
@given(steps=st.integers(min_value=1, max_value=30), seed=st.integers(0, 10_000))
def test_one_line_json_reads_as_the_yaml_reader_reads_it(steps: int, seed: int) -> None:
    text = json.dumps(generate_session(steps, seed))
    fast = parse_session(text, "x.json")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(loader_module, "read_one_line_json", lambda text: None)
        slow = parse_session(text, "x.json")
    assert fast == slow


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "context-session/1", "format": "x"}', "duplicate key"),
        ('{"format": NaN}', "format"),
    ],
)
def test_one_line_json_the_yaml_reader_words_differently_goes_to_it(
    text: str, message: str
) -> None:
    with pytest.raises(SessionError, match=message):
        parse_session(text, "x.json")


def test_write_session_takes_a_path_as_text(tmp_path: Path) -> None:
    data = generate_session(3, 0)
    target = tmp_path / "three.jsonl"
    write_session(data, str(target))
    assert load_session(target).id == data["session"]["id"]
